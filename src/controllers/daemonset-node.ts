// Whether a DaemonSet's pod belongs on this node (pkg/controller/daemon NodeShouldRunDaemonPod with
// the scheduler's NodeAffinity and TaintToleration filters): the template's nodeSelector and required
// node affinity against the node's labels and name, its tolerations against the node's NoSchedule and
// NoExecute taints; and what the controller adds to each daemon pod (util.AddOrUpdateDaemonPodTolerations,
// ReplaceDaemonSetPodNodeNameNodeAffinity).

import { arch } from 'node:os';
import type { PodTemplateSpec } from '../api/types.js';
import { ErrReasonPod, requiredNodeAffinityMatches } from '../scheduler/plugins/nodeaffinity.js';
import { tolerates as schedulerTolerates, untoleratedTaint } from '../scheduler/plugins/tainttoleration.js';

type PodSpec = NonNullable<PodTemplateSpec['spec']>;
type Toleration = NonNullable<PodSpec['tolerations']>[number];

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
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

/** Whether a toleration tolerates a taint (v1 Toleration.ToleratesTaint): the scheduler's own. */
export const tolerates: (t: Toleration, taint: Taint) => boolean = schedulerTolerates;

/** Why the pod does not fit the node, or undefined when it does: the scheduler's NodeAffinity and TaintToleration filters, in its words. */
export function unfitReason(spec: PodSpec | undefined, node: NodeFacts): string | undefined {
  const asNode = { metadata: { name: node.name, labels: node.labels }, spec: { taints: node.taints } };
  if (!requiredNodeAffinityMatches(spec, asNode)) return ErrReasonPod;
  const taint = untoleratedTaint(node.taints, spec?.tolerations ?? [], ['NoSchedule', 'NoExecute']);
  return taint ? `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}` : undefined;
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
