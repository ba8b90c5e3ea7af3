// The TaintToleration filter (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go):
// the first NoSchedule or NoExecute taint of the node that none of the pod's tolerations tolerates
// keeps it off ("node(s) had untolerated taint {key: value}"); v1 Toleration.ToleratesTaint.

import type { Pod, Taint, Toleration } from '../../api/types.js';
import { tolerates } from '../../api/tolerations.js';
import { unresolvable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';

export { tolerates } from '../../api/tolerations.js';

export const Name = 'TaintToleration';

/** The first taint of those with the given effects that no toleration tolerates (FindMatchingUntoleratedTaint). */
export function untoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[], effects: readonly string[]): Taint | undefined {
  return taints.find((taint) => effects.includes(taint.effect) && !tolerations.some((t) => tolerates(t, taint)));
}

export const taintToleration: FilterPlugin = {
  name: Name,
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const taint = untoleratedTaint(nodeInfo.node.spec?.taints ?? [], pod.spec?.tolerations ?? [], ['NoSchedule', 'NoExecute']);
    return taint ? unresolvable(Name, `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`) : undefined;
  },
};
