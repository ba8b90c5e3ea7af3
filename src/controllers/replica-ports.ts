// What `validate` warns of on the process runtime, where every pod shares the host's network: a
// workload that runs more than one pod at once from a template naming a fixed port (containerPort or
// hostPort). Only one replica can bind it; the others wait Pending (HostPortInUse), as the
// scheduler's NodePorts filter would keep them off one node.

import type { PodTemplateSpec } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';

interface WorkloadSpec {
  replicas?: number;
  parallelism?: number;
  template?: PodTemplateSpec;
}

/** How many pods of the template may run at once: replicas (Deployment, ReplicaSet, StatefulSet) or parallelism (Job). */
function concurrentPods(o: KubeObject): { count: number; word: string } | undefined {
  const spec = (o as { spec?: WorkloadSpec }).spec;
  switch (o.kind) {
    case 'Deployment':
    case 'ReplicaSet':
    case 'StatefulSet':
      return { count: spec?.replicas ?? 1, word: 'replicas' };
    case 'Job':
      return { count: spec?.parallelism ?? 1, word: 'pods in parallel' };
    default:
      return undefined;
  }
}

/** One warning per workload whose concurrent pods would each bind the same host port. */
export function sharedPortWarnings(objects: readonly KubeObject[]): string[] {
  const out: string[] = [];
  for (const o of objects) {
    const pods = concurrentPods(o);
    if (!pods || pods.count <= 1) continue;
    const template = (o as { spec?: WorkloadSpec }).spec?.template;
    const ports = (template?.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => `${p.hostPort ?? p.containerPort}/${p.protocol ?? 'TCP'}`));
    if (ports.length === 0) continue;
    out.push(
      `${o.apiVersion} ${o.kind} "${o.metadata?.name ?? ''}" runs ${pods.count} ${pods.word} that each listen on ${[...new Set(ports)].join(', ')}: ` +
        'on the process runtime pods share the host network, so one replica binds it and the others wait Pending (HostPortInUse); ' +
        'use --runtime containerd (a pod IP each) or give each replica its own port',
    );
  }
  return out;
}
