// The DefaultPreemption post-filter (pkg/scheduler/framework/plugins/defaultpreemption and
// framework/preemption) on this one node: a pod that does not fit may preempt pods of lower priority
// when removing them would let it fit and the node's refusal is not one preemption cannot help
// (UnschedulableAndUnresolvable). Victims are picked as SelectVictimsOnNode does: all lower-priority
// pods removed, then the most important added back while the pod still fits. The message of a
// preemption that cannot help is the FitError's post-filter part.

import type { Pod } from '../api/types.js';
import type { FilterPlugin, NodeInfo, Status } from './framework.js';

export type PreemptionResult = { victims: Pod[]; message: '' } | { victims: []; message: string };

const priorityOf = (p: Pod) => p.spec?.priority ?? 0;
const startOf = (p: Pod) => Date.parse(p.status?.startTime ?? p.metadata?.creationTimestamp ?? '') || 0;

/** MoreImportantPod: higher priority first, then the one started earlier. */
function moreImportantFirst(a: Pod, b: Pod): number {
  return priorityOf(b) - priorityOf(a) || startOf(a) - startOf(b);
}

function preemptionMessage(numAllNodes: number, reason: string): string {
  return `preemption: 0/${numAllNodes} nodes are available: ${numAllNodes} ${reason}.`;
}

export const ErrNoVictims = 'No preemption victims found for incoming pod';
export const ErrNotHelpful = 'Preemption is not helpful for scheduling';

/**
 * PostFilter: the victims whose removal lets the pod fit, or the message that none can. `fits` runs
 * the filters against a NodeInfo.
 */
export function preempt(pod: Pod, nodeInfo: NodeInfo, status: Status, filters: readonly FilterPlugin[]): PreemptionResult {
  // PodEligibleToPreemptOthers
  if (pod.spec?.preemptionPolicy === 'Never') return { victims: [], message: 'not eligible due to preemptionPolicy=Never.' };
  const nominated = pod.status?.nominatedNodeName;
  if (nominated && nominated === nodeInfo.node.metadata?.name) {
    if (nodeInfo.pods.some((p) => p.metadata?.deletionTimestamp && priorityOf(p) < priorityOf(pod))) {
      return { victims: [], message: 'not eligible due to a terminating pod on the nominated node.' };
    }
  }
  if (status.code === 'UnschedulableAndUnresolvable') return { victims: [], message: preemptionMessage(1, ErrNotHelpful) };
  const fits = (pods: readonly Pod[]) => filters.every((f) => f.filter(pod, { node: nodeInfo.node, pods }) === undefined);
  // SelectVictimsOnNode
  const lower = nodeInfo.pods.filter((p) => priorityOf(p) < priorityOf(pod) && !p.metadata?.deletionTimestamp);
  if (lower.length === 0) return { victims: [], message: preemptionMessage(1, ErrNoVictims) };
  const kept = nodeInfo.pods.filter((p) => !lower.includes(p));
  if (!fits(kept)) return { victims: [], message: preemptionMessage(1, ErrNoVictims) };
  const victims: Pod[] = [];
  for (const p of [...lower].sort(moreImportantFirst)) {
    if (fits([...kept, p])) kept.push(p);
    else victims.push(p);
  }
  if (victims.length === 0) return { victims: [], message: preemptionMessage(1, ErrNoVictims) };
  return { victims, message: '' };
}
