// A pod's total requests or limits as the API server's admission plugins count them
// (component-helpers resource.PodRequests/PodLimits, without overhead): the containers' sum, raised to
// each init container's own where that is larger; quantities kept in milli units and printed in the
// family (binary or decimal) of the first one added, as Quantity.Add keeps its receiver's format.

import type { Container, Pod } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';
import { quantityString } from '../api/validation/limit-range.js';

export type ResourceList = Record<string, string>;

/** A quantity in milli units with the text whose format it prints in. */
export interface Amount {
  milli: bigint;
  like: string;
}

/** The amount printed as the API server prints a Quantity. */
export function amountString(a: Amount): string {
  if (a.milli === 0n) return '0';
  if (/[KMGTPE]i$/.test(a.like) && a.milli % 1024000n === 0n) return quantityString(`${a.milli / 1024000n}Ki`);
  return quantityString(`${a.milli}m`);
}

export function amountOf(text: string): Amount {
  return { milli: parseQuantity(text).milliValue(), like: text };
}

/** a + b, in a's format (b's when a is zero). */
export function addAmounts(a: Amount | undefined, b: Amount): Amount {
  if (!a) return { ...b };
  return { milli: a.milli + b.milli, like: a.milli === 0n ? b.like : a.like };
}

function listOf(c: Container, which: 'requests' | 'limits'): ResourceList {
  return ((c.resources as { requests?: ResourceList; limits?: ResourceList } | undefined)?.[which] ?? {}) as ResourceList;
}

/** The pod's total requests or limits, per resource. */
export function podTotal(pod: Pod, which: 'requests' | 'limits'): Map<string, Amount> {
  const out = new Map<string, Amount>();
  for (const c of pod.spec?.containers ?? []) for (const [k, v] of Object.entries(listOf(c, which))) out.set(k, addAmounts(out.get(k), amountOf(String(v))));
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [k, v] of Object.entries(listOf(c, which))) {
      const a = amountOf(String(v));
      const cur = out.get(k);
      if (!cur || a.milli > cur.milli) out.set(k, { milli: a.milli, like: cur?.like ?? a.like });
    }
  }
  return out;
}

/** The map printed as a ResourceList. */
export function toResourceList(m: ReadonlyMap<string, Amount>): ResourceList {
  const out: ResourceList = {};
  for (const [k, a] of m) out[k] = amountString(a);
  return out;
}
