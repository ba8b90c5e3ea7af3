// The InterPodAffinity filter (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go) on this
// one node: the pod's required affinity terms need a matching pod in the node's topology domain (or,
// when none matches anywhere, the pod matching its own terms: the first of a group); its required
// anti-affinity terms and those of the pods already there must not match. A term's topology key must
// be one of the node's labels for the node to be in its domain.

import type { LabelSelector, Pod, PodAffinityTerm } from '../../api/types.js';
import { selectorMatches } from '../../api/label-selector.js';
import { unresolvable, unschedulable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';

export const Name = 'InterPodAffinity';
export const ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
export const ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";

/** A namespace's labels, for terms with a namespaceSelector (undefined when the namespace is unknown). */
export type NamespaceLabels = (namespace: string) => Readonly<Record<string, string>> | undefined;

/** The term's selector with matchLabelKeys (In) and mismatchLabelKeys (NotIn) of the owning pod's labels merged in. */
function termSelector(term: PodAffinityTerm, owner: Pod): LabelSelector | undefined {
  const sel = term.labelSelector;
  if (!sel) return undefined;
  const labels = owner.metadata?.labels ?? {};
  const extra = [
    ...(term.matchLabelKeys ?? []).filter((k) => k in labels).map((k) => ({ key: k, operator: 'In', values: [labels[k]!] })),
    ...(term.mismatchLabelKeys ?? []).filter((k) => k in labels).map((k) => ({ key: k, operator: 'NotIn', values: [labels[k]!] })),
  ];
  return extra.length === 0 ? sel : { ...sel, matchExpressions: [...(sel.matchExpressions ?? []), ...extra] };
}

/** AffinityTerm.Matches: the pod is in one of the term's namespaces (or its namespaceSelector's) and matches its selector. */
function termMatchesPod(term: PodAffinityTerm, owner: Pod, pod: Pod, nsLabels: NamespaceLabels): boolean {
  const ns = pod.metadata?.namespace ?? 'default';
  const names = term.namespaces ?? [];
  let inNamespaces: boolean;
  if (names.length === 0 && !term.namespaceSelector) inNamespaces = ns === (owner.metadata?.namespace ?? 'default');
  else inNamespaces = names.includes(ns) || (term.namespaceSelector !== undefined && selectorMatches(term.namespaceSelector, nsLabels(ns) ?? {}));
  return inNamespaces && selectorMatches(termSelector(term, owner), pod.metadata?.labels);
}

const requiredAffinity = (p: Pod) => p.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
const requiredAntiAffinity = (p: Pod) => p.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];

/** The filter; namespace labels serve terms with a namespaceSelector. */
export function interPodAffinity(nsLabels: NamespaceLabels): FilterPlugin {
  return {
    name: Name,
    filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
      const labels = nodeInfo.node.metadata?.labels ?? {};
      const inDomain = (term: PodAffinityTerm) => term.topologyKey in labels;
      const others = nodeInfo.pods.filter((p) => p.metadata?.uid !== pod.metadata?.uid);
      // satisfyPodAffinity
      const affinity = requiredAffinity(pod);
      if (affinity.length > 0) {
        const matched = affinity.map((t) => inDomain(t) && others.some((p) => termMatchesPod(t, pod, p, nsLabels)));
        if (!matched.every(Boolean)) {
          // With one node, no pod matching a term on it is no pod matching it anywhere.
          const noneAnywhere = matched.every((m) => !m);
          const selfMatches = affinity.every((t) => termMatchesPod(t, pod, pod, nsLabels));
          if (!(noneAnywhere && selfMatches)) return unresolvable(Name, ErrReasonAffinityRulesNotMatch);
        }
      }
      // satisfyPodAntiAffinity
      if (requiredAntiAffinity(pod).some((t) => inDomain(t) && others.some((p) => termMatchesPod(t, pod, p, nsLabels)))) {
        return unschedulable(Name, ErrReasonAntiAffinityRulesNotMatch);
      }
      // satisfyExistingPodsAntiAffinity
      if (others.some((p) => requiredAntiAffinity(p).some((t) => inDomain(t) && termMatchesPod(t, p, pod, nsLabels)))) {
        return unschedulable(Name, ErrReasonExistingAntiAffinityRulesNotMatch);
      }
      return undefined;
    },
  };
}
