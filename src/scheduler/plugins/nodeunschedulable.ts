// The NodeUnschedulable filter (pkg/scheduler/framework/plugins/nodeunschedulable): a cordoned node
// (spec.unschedulable) takes only pods that tolerate node.kubernetes.io/unschedulable:NoSchedule.

import type { Pod } from '../../api/types.js';
import { unresolvable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';
import { tolerates } from './tainttoleration.js';

export const Name = 'NodeUnschedulable';
export const ErrReasonUnschedulable = 'node(s) were unschedulable';
export const TaintNodeUnschedulable = 'node.kubernetes.io/unschedulable';

export const nodeUnschedulable: FilterPlugin = {
  name: Name,
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    if (!nodeInfo.node.spec?.unschedulable) return undefined;
    const taint = { key: TaintNodeUnschedulable, effect: 'NoSchedule' };
    return (pod.spec?.tolerations ?? []).some((t) => tolerates(t, taint)) ? undefined : unresolvable(Name, ErrReasonUnschedulable);
  },
};
