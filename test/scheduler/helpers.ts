// Pods and a Node for the scheduler's tests: a pod with CPU requests, a node with labels, taints,
// cordon and allocatable.

import type { Node, Pod } from '../../src/api/types.js';

let seq = 0;
export function pod(spec: Partial<NonNullable<Pod['spec']>> = {}, labels: Record<string, string> = {}, namespace = 'default'): Pod {
  seq++;
  return {
    metadata: { name: `p${seq}`, namespace, uid: `uid-${seq}`, labels },
    spec: { containers: [{ name: 'c' }], ...spec },
    status: { phase: 'Running' },
  } as Pod;
}

export function cpu(milli: string, extra: Partial<NonNullable<Pod['spec']>> = {}, labels: Record<string, string> = {}): Pod {
  return pod({ containers: [{ name: 'c', resources: { requests: { cpu: milli } } }], ...extra }, labels);
}

export function node(
  over: { labels?: Record<string, string>; taints?: NonNullable<Node['spec']>['taints']; unschedulable?: boolean; cpu?: string; pods?: string } = {},
): Node {
  return {
    metadata: { name: 'vm', labels: { 'kubernetes.io/hostname': 'vm', ...(over.labels ?? {}) } },
    spec: { ...(over.taints ? { taints: over.taints } : {}), ...(over.unschedulable ? { unschedulable: true } : {}) },
    status: { allocatable: { cpu: over.cpu ?? '1', memory: '1Gi', pods: over.pods ?? '110' } },
  };
}
