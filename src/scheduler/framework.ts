// The scheduling framework's shapes for one node (pkg/scheduler/framework/interface.go and types.go):
// a filter plugin's Status (Unschedulable, which preemption may resolve, or UnschedulableAndUnresolvable),
// the NodeInfo the filters read (the Node and the pods bound to it), and FitError's message,
// "0/1 nodes are available: <reasons>. <post-filter message>", in upstream's words.

import type { Node, Pod } from '../api/types.js';

export type StatusCode = 'Unschedulable' | 'UnschedulableAndUnresolvable';

/** A filter's refusal: its code, its reasons (each counted in the FitError) and the plugin's name. */
export interface Status {
  code: StatusCode;
  reasons: string[];
  plugin: string;
  /** Refused at PreFilter (before any node was looked at): the FitError gives its message alone, uncounted. */
  preFilter?: boolean;
}

export function unschedulable(plugin: string, ...reasons: string[]): Status {
  return { code: 'Unschedulable', reasons, plugin };
}

export function unresolvable(plugin: string, ...reasons: string[]): Status {
  return { code: 'UnschedulableAndUnresolvable', reasons, plugin };
}

/** A PreFilter's refusal (UnschedulableAndUnresolvable for every node). */
export function preFilterUnresolvable(plugin: string, reason: string): Status {
  return { code: 'UnschedulableAndUnresolvable', reasons: [reason], plugin, preFilter: true };
}

/** The node and the pods assigned to it (bound, not in a terminal phase), as the scheduler's cache holds them. */
export interface NodeInfo {
  node: Node;
  pods: readonly Pod[];
}

/** A filter plugin: undefined when the pod fits the node. */
export interface FilterPlugin {
  readonly name: string;
  /** PreFilter: a refusal that holds for every node, decided before any is looked at. */
  preFilter?(pod: Pod): Status | undefined;
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined;
}

/** FitError.Error(): the reasons of every node counted and sorted, then the post-filter (preemption) message. */
export function fitErrorMessage(numAllNodes: number, statuses: readonly Status[], postFilterMsg: string): string {
  const preFilter = statuses.find((s) => s.preFilter);
  if (preFilter) {
    let msg = `0/${numAllNodes} nodes are available: ${preFilter.reasons.join(', ')}.`;
    if (postFilterMsg) msg += ` ${postFilterMsg}`;
    return msg;
  }
  const counts = new Map<string, number>();
  for (const s of statuses) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const histogram = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  let msg = `0/${numAllNodes} nodes are available:`;
  if (histogram.length > 0) msg += ` ${histogram.join(', ')}.`;
  if (postFilterMsg) msg += ` ${postFilterMsg}`;
  return msg;
}

/** The scheduler's name: the source of its events and the default spec.schedulerName. */
export const defaultSchedulerName = 'default-scheduler';

/** Pods bound to a node that still hold its resources: assigned and not Succeeded or Failed. */
export function holdsNode(p: Pod): boolean {
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}
