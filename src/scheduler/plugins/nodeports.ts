// The NodePorts filter (pkg/scheduler/framework/plugins/nodeports/node_ports.go): a pod whose host
// ports another pod on the node already holds does not fit. On a runtime whose pods share the host's
// network (the process runtime) every containerPort is a host port, so those count too.

import type { Pod } from '../../api/types.js';
import { boundHostPorts, portsConflict } from '../../kubelet/admission.js';
import { unschedulable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';

export const Name = 'NodePorts';
export const ErrReason = "node(s) didn't have free ports for the requested pod ports";

/** The filter for a runtime whose pods have their own network ('pod') or share the host's ('host'). */
export function nodePorts(network: 'host' | 'pod'): FilterPlugin {
  return {
    name: Name,
    filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
      const want = boundHostPorts(pod, network);
      if (want.length === 0) return undefined;
      const used = nodeInfo.pods.flatMap((p) => boundHostPorts(p, network));
      return want.some((w) => used.some((u) => portsConflict(u, w))) ? unschedulable(Name, ErrReason) : undefined;
    },
  };
}
