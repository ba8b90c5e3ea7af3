// The PodTopologySpread filter (pkg/scheduler/framework/plugins/podtopologyspread/filtering.go) for
// the constraints with whenUnsatisfiable DoNotSchedule, on this one node, which is the one domain of
// each topology key it carries: a node without the key does not fit ("missing required label"); else
// skew = matching pods in the domain + the pod itself if it matches − the global minimum (0 while
// fewer domains than minDomains exist) must not exceed maxSkew. Pods counted are those of the pod's
// namespace, not being deleted, matching the selector (with matchLabelKeys of the pod's labels); the
// node counts only when it passes the pod's node affinity (nodeAffinityPolicy Honor, the default).

import type { LabelSelector, Pod, TopologySpreadConstraint } from '../../api/types.js';
import { selectorMatches } from '../../api/label-selector.js';
import { unresolvable, unschedulable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';
import { requiredNodeAffinityMatches } from './nodeaffinity.js';
import { untoleratedTaint } from './tainttoleration.js';

export const Name = 'PodTopologySpread';
export const ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints";
export const ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + ' (missing required label)';

function constraintSelector(c: TopologySpreadConstraint, pod: Pod): LabelSelector | undefined {
  const labels = pod.metadata?.labels ?? {};
  const keys = (c.matchLabelKeys ?? []).filter((k) => k in labels);
  if (!c.labelSelector || keys.length === 0) return c.labelSelector;
  return {
    ...c.labelSelector,
    matchExpressions: [...(c.labelSelector.matchExpressions ?? []), ...keys.map((k) => ({ key: k, operator: 'In', values: [labels[k]!] }))],
  };
}

export const podTopologySpread: FilterPlugin = {
  name: Name,
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const constraints = (pod.spec?.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'DoNotSchedule');
    if (constraints.length === 0) return undefined;
    const node = nodeInfo.node;
    const labels = node.metadata?.labels ?? {};
    const ns = pod.metadata?.namespace ?? 'default';
    for (const c of constraints) {
      if (!(c.topologyKey in labels)) return unresolvable(Name, ErrReasonNodeLabelNotMatch);
    }
    for (const c of constraints) {
      const selector = constraintSelector(c, pod);
      const honorsAffinity = (c.nodeAffinityPolicy ?? 'Honor') === 'Honor';
      const honorsTaints = c.nodeTaintsPolicy === 'Honor';
      const eligible =
        constraints.every((k) => k.topologyKey in labels) &&
        (!honorsAffinity || requiredNodeAffinityMatches(pod.spec, node)) &&
        (!honorsTaints || !untoleratedTaint(node.spec?.taints ?? [], pod.spec?.tolerations ?? [], ['NoSchedule', 'NoExecute']));
      const matchNum = eligible
        ? nodeInfo.pods.filter(
            (p) =>
              p.metadata?.uid !== pod.metadata?.uid &&
              !p.metadata?.deletionTimestamp &&
              (p.metadata?.namespace ?? 'default') === ns &&
              selectorMatches(selector, p.metadata?.labels),
          ).length
        : 0;
      const domains = eligible ? 1 : 0;
      const minMatchNum = (c.minDomains ?? 1) > domains ? 0 : matchNum;
      const selfMatchNum = selectorMatches(selector, pod.metadata?.labels) ? 1 : 0;
      if (matchNum + selfMatchNum - minMatchNum > c.maxSkew) return unschedulable(Name, ErrReasonConstraintsNotMatch);
    }
    return undefined;
  },
};
