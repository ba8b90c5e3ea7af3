// The NodeResourcesFit filter (pkg/scheduler/framework/plugins/noderesources/fit.go): the pod's
// effective requests (app containers and sidecars, or the init containers' peak, pod-level requests,
// the pod overhead: resourcehelper.PodRequests) against the node's allocatable minus what the pods
// already bound to it request; the pod count against allocatable pods. Every insufficient resource is
// a reason ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient <extended>").

import type { Node, Pod } from '../../api/types.js';
import { parseQuantity } from '../../api/quantity.js';
import { DEFAULT_MAX_PODS, podRequests } from '../../kubelet/admission.js';
import { unschedulable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';

export const Name = 'NodeResourcesFit';

/** The node's allocatable: millicores, bytes, pods and any extended resource, by name. */
export interface Allocatable {
  cpuMilli: number;
  memoryBytes: number;
  pods: number;
  scalar: Map<string, number>;
}

const isScalarResourceName = (name: string) => name.includes('/') || name.startsWith('hugepages-');

function quantityValue(q: unknown, milli: boolean): number {
  if (q === undefined || q === null || q === '') return 0;
  try {
    const v = parseQuantity(String(q));
    return Number(milli ? v.milliValue() : v.value());
  } catch {
    return 0;
  }
}

export function nodeAllocatable(node: Node): Allocatable {
  const a = (node.status?.allocatable ?? node.status?.capacity ?? {}) as Record<string, unknown>;
  const scalar = new Map<string, number>();
  for (const [k, v] of Object.entries(a)) if (isScalarResourceName(k)) scalar.set(k, quantityValue(v, false));
  return {
    cpuMilli: quantityValue(a.cpu, true),
    memoryBytes: quantityValue(a.memory, false),
    pods: a.pods !== undefined ? quantityValue(a.pods, false) : DEFAULT_MAX_PODS,
    scalar,
  };
}

/** Extended resources a pod requests (sum of containers, max with init containers), by name. */
function scalarRequests(pod: Pod): Map<string, number> {
  const sum = new Map<string, number>();
  const peak = new Map<string, number>();
  const requestsOf = (c: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }) => ({
    ...(c.resources?.limits ?? {}),
    ...(c.resources?.requests ?? {}),
  });
  for (const c of pod.spec?.containers ?? []) {
    for (const [k, v] of Object.entries(requestsOf(c))) if (isScalarResourceName(k)) sum.set(k, (sum.get(k) ?? 0) + quantityValue(v, false));
  }
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [k, v] of Object.entries(requestsOf(c))) {
      if (!isScalarResourceName(k)) continue;
      if (c.restartPolicy === 'Always') sum.set(k, (sum.get(k) ?? 0) + quantityValue(v, false));
      else peak.set(k, Math.max(peak.get(k) ?? 0, quantityValue(v, false)));
    }
  }
  for (const [k, v] of peak) sum.set(k, Math.max(sum.get(k) ?? 0, v));
  return sum;
}

/** What the pods bound to the node request, summed. */
export function requested(pods: readonly Pod[]): { cpuMilli: number; memoryBytes: number; scalar: Map<string, number> } {
  const out = { cpuMilli: 0, memoryBytes: 0, scalar: new Map<string, number>() };
  for (const p of pods) {
    const r = podRequests(p);
    out.cpuMilli += r.cpuMilli;
    out.memoryBytes += r.memoryBytes;
    for (const [k, v] of scalarRequests(p)) out.scalar.set(k, (out.scalar.get(k) ?? 0) + v);
  }
  return out;
}

/** fitsRequest: the reasons the pod does not fit, empty when it does. */
export function insufficientResources(pod: Pod, nodeInfo: NodeInfo): string[] {
  const alloc = nodeAllocatable(nodeInfo.node);
  const reasons: string[] = [];
  if (nodeInfo.pods.length + 1 > alloc.pods) reasons.push('Too many pods');
  const want = podRequests(pod);
  const wantScalar = scalarRequests(pod);
  if (want.cpuMilli === 0 && want.memoryBytes === 0 && [...wantScalar.values()].every((v) => v === 0)) return reasons;
  const used = requested(nodeInfo.pods);
  if (want.cpuMilli > 0 && want.cpuMilli > alloc.cpuMilli - used.cpuMilli) reasons.push('Insufficient cpu');
  if (want.memoryBytes > 0 && want.memoryBytes > alloc.memoryBytes - used.memoryBytes) reasons.push('Insufficient memory');
  for (const [k, v] of wantScalar) {
    if (v > 0 && v > (alloc.scalar.get(k) ?? 0) - (used.scalar.get(k) ?? 0)) reasons.push(`Insufficient ${k}`);
  }
  return reasons;
}

export const nodeResourcesFit: FilterPlugin = {
  name: Name,
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const reasons = insufficientResources(pod, nodeInfo);
    return reasons.length > 0 ? unschedulable(Name, ...reasons) : undefined;
  },
};
