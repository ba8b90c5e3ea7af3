// Which pod the eviction manager evicts first, and the words it uses (pkg/kubelet/eviction/helpers.go):
// under DiskPressure rankDiskPressureFunc — pods over their ephemeral-storage requests first, then
// lower priority, then most usage over requests; under MemoryPressure rankMemoryPressure — pods whose
// working set exceeds their memory requests first, then lower priority, then most working set over
// requests; under PIDPressure rankPIDPressure — lower priority first, then most processes. Pods
// without stats go first under each. evictionMessage names the starved resource, the threshold, what
// was available, and each container using more than it requested.

import type { Pod } from '../api/types.js';
import { canonicalQuantity, parseQuantity } from '../api/quantity.js';
import type { PodDiskUsage } from './pod-disk-usage.js';

/** The resource a signal starves (signalToResource). */
export type EvictionResource = 'ephemeral-storage' | 'inodes' | 'memory' | 'pids';

const resourceBySignal: Readonly<Record<string, EvictionResource>> = {
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'memory.available': 'memory',
  'pid.available': 'pids',
};

export const resourceOfSignal = (signal: string): EvictionResource => resourceBySignal[signal] ?? 'ephemeral-storage';

/** What a pod's containers use of memory (working set) and how many processes it runs: the summary's pod stats. */
export interface PodResourceStats {
  containers: Array<{ name: string; workingSetBytes: number }>;
  processes: number;
}

/** A running pod and what it uses (undefined: not measured). */
export interface EvictionCandidate {
  pod: Pod;
  /** Its file-system usage, for the disk signals. */
  usage?: PodDiskUsage;
  /** Its memory and processes, for memory.available and pid.available. */
  stats?: PodResourceStats;
}

const requestBytes = (q: string | undefined) => (q === undefined ? 0 : Number(parseQuantity(q).value()));

/** GetResourceRequestQuantity: the pod's request of a resource, the larger of its containers' sum and any init container's. */
export function podRequest(pod: Pod, resource: string): number {
  const of = (c: { resources?: { requests?: Record<string, string> } }) => requestBytes(c.resources?.requests?.[resource]);
  const containers = (pod.spec?.containers ?? []).reduce((sum, c) => sum + of(c), 0);
  const inits = Math.max(0, ...(pod.spec?.initContainers ?? []).map(of));
  return Math.max(containers, inits);
}

/** podRequest of ephemeral-storage. */
export const podEphemeralStorageRequest = (pod: Pod): number => podRequest(pod, 'ephemeral-storage');

const priorityOf = (pod: Pod) => (pod.spec as { priority?: number } | undefined)?.priority ?? 0;

const workingSet = (s: PodResourceStats) => s.containers.reduce((sum, c) => sum + c.workingSetBytes, 0);

/** What a candidate uses of the resource and what it asked for (no request exists for inodes or pids). */
function used(c: EvictionCandidate, resource: EvictionResource): { usage: number; request: number } | undefined {
  switch (resource) {
    case 'memory':
      return c.stats && { usage: workingSet(c.stats), request: podRequest(c.pod, 'memory') };
    case 'pids':
      return c.stats && { usage: c.stats.processes, request: 0 };
    case 'inodes':
      return c.usage && { usage: c.usage.inodes, request: 0 };
    case 'ephemeral-storage':
      return c.usage && { usage: c.usage.bytes, request: podEphemeralStorageRequest(c.pod) };
  }
}

/** Go's cmpBool: true before false. */
const trueFirst = (a: boolean, b: boolean) => (a === b ? 0 : a ? -1 : 1);

type Cmp = (a: EvictionCandidate, b: EvictionCandidate) => number;

/** orderedBy: the first comparison that tells two candidates apart decides. */
const orderedBy =
  (...cmps: Cmp[]): Cmp =>
  (a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  };

/** Unmeasured pods first, then those using more than they requested (exceedMemoryRequests, exceedDiskRequests). */
const exceedsRequests =
  (resource: EvictionResource): Cmp =>
  (a, b) => {
    const ua = used(a, resource);
    const ub = used(b, resource);
    if (!ua || !ub) return trueFirst(!ua, !ub);
    return trueFirst(ua.usage > ua.request, ub.usage > ub.request);
  };

const priority: Cmp = (a, b) => priorityOf(a.pod) - priorityOf(b.pod);

/** Unmeasured pods first, then the larger usage over requests (memory, disk, process). */
const usageOverRequests =
  (resource: EvictionResource): Cmp =>
  (a, b) => {
    const ua = used(a, resource);
    const ub = used(b, resource);
    if (!ua || !ub) return trueFirst(!ua, !ub);
    return ub.usage - ub.request - (ua.usage - ua.request);
  };

/** The candidates in the order the eviction manager tries them under the resource's pressure. */
export function rankForEviction(candidates: readonly EvictionCandidate[], resource: EvictionResource): EvictionCandidate[] {
  const order =
    resource === 'pids' ? orderedBy(priority, usageOverRequests(resource)) : orderedBy(exceedsRequests(resource), priority, usageOverRequests(resource));
  return [...candidates].sort(order);
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

/** Quantity.String() of a DecimalSI count (inodes, processes): in the largest decimal unit that divides it. */
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

/** What a container used of the resource, for the message (its logs for ephemeral storage; the process runtime has no writable layer). */
function containerUsage(resource: EvictionResource, candidate: EvictionCandidate, name: string): number | undefined {
  if (resource === 'ephemeral-storage') return candidate.usage?.containers.find((c) => c.name === name)?.logsBytes;
  if (resource === 'memory') return candidate.stats?.containers.find((c) => c.name === name)?.workingSetBytes;
  return undefined;
}

/**
 * evictionMessage: the starved resource, the threshold and what was available, then each container
 * using more of it than it requested (`Container app was using 300Mi, request is 100Mi, has larger
 * consumption of memory.`).
 */
export function evictionMessage(resource: EvictionResource, candidate: EvictionCandidate, met: ThresholdMet | undefined): string {
  let message = `The node was low on resource: ${resource}. `;
  const decimal = resource === 'inodes' || resource === 'pids';
  if (met)
    message += `Threshold quantity: ${decimal ? decimalSI(met.quantity) : binarySI(met.quantity)}, available: ${decimal ? decimalSI(met.available) : binarySI(met.available)}. `;
  if (resource !== 'ephemeral-storage' && resource !== 'memory') return message;
  for (const container of candidate.pod.spec?.containers ?? []) {
    const usage = containerUsage(resource, candidate, container.name);
    if (usage === undefined) continue;
    const given = (container.resources?.requests as Record<string, string> | undefined)?.[resource];
    if (usage > requestBytes(given))
      message += `Container ${container.name} was using ${binarySI(usage)}, request is ${given !== undefined ? canonicalQuantity(given) : '0'}, has larger consumption of ${resource}. `;
  }
  return message;
}
