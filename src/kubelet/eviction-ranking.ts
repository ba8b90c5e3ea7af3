// Which pod the eviction manager evicts first under DiskPressure, and the words it uses
// (pkg/kubelet/eviction/helpers.go: rankDiskPressureFunc — pods over their ephemeral-storage
// requests first, then lower priority, then most usage over requests —, evictionMessage).

import type { Pod } from '../api/types.js';
import { canonicalQuantity, parseQuantity } from '../api/quantity.js';
import type { PodDiskUsage } from './pod-disk-usage.js';

/** The resource a disk signal starves: nodefs.available → ephemeral-storage, nodefs.inodesFree → inodes. */
export type DiskResource = 'ephemeral-storage' | 'inodes';

export const resourceOfSignal = (signal: string): DiskResource => (signal === 'nodefs.inodesFree' ? 'inodes' : 'ephemeral-storage');

/** A running pod and what it uses (undefined: not measured). */
export interface EvictionCandidate {
  pod: Pod;
  usage?: PodDiskUsage;
}

const requestBytes = (q: string | undefined) => (q === undefined ? 0 : Number(parseQuantity(q).value()));

/** podRequest: the pod's ephemeral-storage request, the larger of its containers' sum and any init container's. */
export function podEphemeralStorageRequest(pod: Pod): number {
  const of = (c: { resources?: { requests?: Record<string, string> } }) => requestBytes(c.resources?.requests?.['ephemeral-storage']);
  const containers = (pod.spec?.containers ?? []).reduce((sum, c) => sum + of(c), 0);
  const inits = Math.max(0, ...(pod.spec?.initContainers ?? []).map(of));
  return Math.max(containers, inits);
}

const priorityOf = (pod: Pod) => (pod.spec as { priority?: number } | undefined)?.priority ?? 0;

/** What a candidate uses of the resource, and what it asked for (no request exists for inodes). */
function used(c: EvictionCandidate, resource: DiskResource): { usage: number; request: number } | undefined {
  if (!c.usage) return undefined;
  return resource === 'inodes' ? { usage: c.usage.inodes, request: 0 } : { usage: c.usage.bytes, request: podEphemeralStorageRequest(c.pod) };
}

/** Go's cmpBool: true before false. */
const trueFirst = (a: boolean, b: boolean) => (a === b ? 0 : a ? -1 : 1);

/**
 * The candidates in the order the eviction manager tries them: unmeasured pods first, then pods
 * using more than they requested, then lower priority, then larger usage over requests.
 */
export function rankForEviction(candidates: readonly EvictionCandidate[], resource: DiskResource): EvictionCandidate[] {
  const compare = (a: EvictionCandidate, b: EvictionCandidate): number => {
    const ua = used(a, resource);
    const ub = used(b, resource);
    if (!ua || !ub) return trueFirst(!ua, !ub);
    const exceeds = trueFirst(ua.usage > ua.request, ub.usage > ub.request);
    if (exceeds !== 0) return exceeds;
    const priority = priorityOf(a.pod) - priorityOf(b.pod);
    if (priority !== 0) return priority;
    return ub.usage - ub.request - (ua.usage - ua.request);
  };
  return [...candidates].sort(compare);
}

/** Quantity.String() of a BinarySI count: below 1024 as it is, else in the largest binary unit that divides it. */
export function binarySI(n: number): string {
  const v = Math.floor(n);
  if (Math.abs(v) < 1024) return String(v);
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let amount = v;
  let u = 0;
  while (u < units.length - 1 && amount % 1024 === 0 && amount !== 0) {
    amount /= 1024;
    u++;
  }
  return `${amount}${units[u]}`;
}

/** Quantity.String() of a DecimalSI count (the inodes available): in the largest decimal unit that divides it. */
export function decimalSI(n: number): string {
  const units = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let amount = Math.floor(n);
  let u = 0;
  while (u < units.length - 1 && amount % 1000 === 0 && amount !== 0) {
    amount /= 1000;
    u++;
  }
  return `${amount}${units[u]}`;
}

/** The threshold a signal crossed, and what was available of it then. */
export interface ThresholdMet {
  quantity: number;
  available: number;
}

/**
 * evictionMessage: the starved resource, the threshold and what was available, then each container
 * using more ephemeral storage (its logs; the process runtime has no writable layer) than it requested.
 */
export function evictionMessage(resource: DiskResource, candidate: EvictionCandidate, met: ThresholdMet | undefined): string {
  let message = `The node was low on resource: ${resource}. `;
  if (met)
    message += `Threshold quantity: ${binarySI(met.quantity)}, available: ${resource === 'inodes' ? decimalSI(met.available) : binarySI(met.available)}. `;
  if (resource !== 'ephemeral-storage' || !candidate.usage) return message;
  for (const stats of candidate.usage.containers) {
    const container = candidate.pod.spec?.containers?.find((c) => c.name === stats.name);
    if (!container) continue;
    const given = (container.resources?.requests as Record<string, string> | undefined)?.['ephemeral-storage'];
    if (stats.logsBytes > requestBytes(given))
      message += `Container ${container.name} was using ${binarySI(stats.logsBytes)}, request is ${given !== undefined ? canonicalQuantity(given) : '0'}, has larger consumption of ${resource}. `;
  }
  return message;
}
