// The pod's QoS class by Kubernetes' rules (pkg/apis/core/v1/helper/qos ComputePodQOS): Guaranteed,
// Burstable or BestEffort from the cpu and memory requests and limits of all its containers.

import type { Container, Pod } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const qosResources = ['cpu', 'memory'] as const;

function milli(q: unknown): bigint | undefined {
  if (q === undefined || q === null) return undefined;
  try {
    return parseQuantity(String(q)).milliValue();
  } catch {
    return undefined; // invalid quantities are validation's business
  }
}

// Memoised per pod object: the class depends on the spec only, and the status runs on every sync.
const cache = new WeakMap<object, QOSClass>();

/** GetPodQOS: the class already in the pod's status, else computed from the spec. */
export function getPodQOS(pod: Pod): QOSClass {
  const known = pod.status?.qosClass;
  if (known === 'Guaranteed' || known === 'Burstable' || known === 'BestEffort') return known;
  const hit = cache.get(pod);
  if (hit) return hit;
  const q = computePodQOS(pod);
  cache.set(pod, q);
  return q;
}

/**
 * ComputePodQOS. Requests and limits are summed over init and regular containers (zero values
 * ignored); Guaranteed needs cpu and memory limits on every container and summed requests equal to
 * summed limits. A request left out while its limit is set counts as equal to the limit, as the API
 * server's defaulting would have made it (so pods read straight from a manifest classify the same).
 * Sums are kept in milli-units.
 */
export function computePodQOS(pod: Pod): QOSClass {
  const spec = pod.spec!;
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let isGuaranteed = true;
  const all: Container[] = [...spec.containers, ...(spec.initContainers ?? [])];
  for (const c of all) {
    const reqs = c.resources?.requests ?? {};
    const lims = c.resources?.limits ?? {};
    const limitsFound = new Set<string>();
    for (const name of qosResources) {
      const lim = milli(lims[name]);
      const req = name in reqs ? milli(reqs[name]) : lim;
      if (req !== undefined && req > 0n) requests.set(name, (requests.get(name) ?? 0n) + req);
      if (lim !== undefined && lim > 0n) {
        limitsFound.add(name);
        limits.set(name, (limits.get(name) ?? 0n) + lim);
      }
    }
    if (!limitsFound.has('memory') || !limitsFound.has('cpu')) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (isGuaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (lim === undefined || lim !== req) {
        isGuaranteed = false;
        break;
      }
    }
  }
  if (isGuaranteed && requests.size === limits.size) return 'Guaranteed';
  return 'Burstable';
}
