// Whether a DaemonSet's pod belongs on this node (pkg/controller/daemon NodeShouldRunDaemonPod with
// the scheduler's NodeAffinity and TaintToleration filters): the template's nodeSelector and required
// node affinity against the node's labels and name, its tolerations against the node's NoSchedule and
// NoExecute taints; and what the controller adds to each daemon pod (util.AddOrUpdateDaemonPodTolerations,
// ReplaceDaemonSetPodNodeNameNodeAffinity).

import { arch } from 'node:os';
import type { PodTemplateSpec } from '../api/types.js';

type PodSpec = NonNullable<PodTemplateSpec['spec']>;
type Toleration = NonNullable<PodSpec['tolerations']>[number];
type NodeSelectorRequirement = { key: string; operator: string; values?: string[] };
type NodeSelectorTerm = { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] };

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** What the fit is checked against: the node's name, labels and taints. */
export interface NodeFacts {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
}

const goArchNames: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** The standalone agent's node: the labels the kubelet puts on its own Node, and no taints. */
export function standaloneNode(name: string): NodeFacts {
  const a = goArchNames[arch()] ?? arch();
  const os = process.platform;
  return {
    name,
    labels: { 'beta.kubernetes.io/arch': a, 'beta.kubernetes.io/os': os, 'kubernetes.io/arch': a, 'kubernetes.io/hostname': name, 'kubernetes.io/os': os },
    taints: [],
  };
}

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
function termMatches(term: NodeSelectorTerm, node: NodeFacts): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) => requirementMatches(r, node.labels[r.key])) &&
    fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? node.name : undefined))
  );
}

/** Whether a toleration tolerates a taint (v1 Toleration.ToleratesTaint). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if ((t.operator ?? 'Equal') === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** Why the pod does not fit the node, or undefined when it does. */
export function unfitReason(spec: PodSpec | undefined, node: NodeFacts): string | undefined {
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) {
    if (node.labels[k] !== v) return "node(s) didn't match Pod's node affinity/selector";
  }
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !terms.some((term) => termMatches(term as NodeSelectorTerm, node))) return "node(s) didn't match Pod's node affinity/selector";
  const tolerations = spec?.tolerations ?? [];
  for (const taint of node.taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
  }
  return undefined;
}

const daemonTolerations: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The daemon pod's spec: the node-name affinity in place of the required terms, and the daemon tolerations. */
export function daemonPodSpec(spec: PodSpec, nodeName: string): PodSpec {
  const out = structuredClone(spec);
  const affinity = (out.affinity ??= {});
  const nodeAffinity = (affinity.nodeAffinity ??= {});
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
  };
  const tolerations = [...(out.tolerations ?? [])];
  const extra = [...daemonTolerations];
  if (out.hostNetwork) extra.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  for (const t of extra) {
    const i = tolerations.findIndex((x) => x.key === t.key && x.effect === t.effect);
    if (i >= 0) tolerations[i] = t;
    else tolerations.push(t);
  }
  out.tolerations = tolerations;
  return out;
}
