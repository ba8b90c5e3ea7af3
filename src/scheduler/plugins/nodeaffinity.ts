// The NodeAffinity filter (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go with
// component-helpers' nodeaffinity.GetRequiredNodeAffinity): the pod's nodeSelector and its required
// node affinity terms (ORed; a term's expressions on labels and fields ANDed) against the node's labels
// and name.

import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec } from '../../api/types.js';
import { unresolvable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';

export const Name = 'NodeAffinity';
export const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector";

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const n = Number(value);
      const bound = Number(values[0]);
      if (value === undefined || !Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** A node selector term: all its expressions on labels and fields (metadata.name) hold; an empty term matches nothing. */
export function termMatches(term: NodeSelectorTerm, labels: Readonly<Record<string, string>>, nodeName: string): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) => requirementMatches(r, labels[r.key])) && fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? nodeName : undefined))
  );
}

/** GetRequiredNodeAffinity(pod).Match(node): the nodeSelector and the required terms. */
export function requiredNodeAffinityMatches(spec: PodSpec | undefined, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !terms.some((t) => termMatches(t, labels, node.metadata?.name ?? ''))) return false;
  return true;
}

export const nodeAffinity: FilterPlugin = {
  name: Name,
  filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    return requiredNodeAffinityMatches(pod.spec, nodeInfo.node) ? undefined : unresolvable(Name, ErrReasonPod);
  },
};
