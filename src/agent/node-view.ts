// What the kubelet routes show of a node, the same for the standalone agent and the cluster node: the
// pods as the runtime runs them (/runningpods/), containers counted by state, and the text of
// /metrics, /metrics/probes and /metrics/resource.

import type { Registry } from 'prom-client';
import type { Pod } from '../api/types.js';
import type { ProbeManager } from '../prober/types.js';
import type { PodProbeHistory } from '../server/probe-routes.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../kuberuntime/container-config.js';
import type { RuntimeService } from '../runtime/cri.js';
import { resourceMetricsText } from './node-metrics.js';
import type { UsageCollector } from './usage.js';

/** The pods of the runtime's running containers, by their labels (names, UIDs, containers). */
export async function runningPods(runtime: RuntimeService): Promise<Pod[]> {
  const byUid = new Map<string, Pod>();
  for (const c of await runtime.listContainers({ state: 'CONTAINER_RUNNING' })) {
    const uid = c.labels[LABEL_POD_UID] ?? '';
    let p = byUid.get(uid);
    if (!p) {
      p = {
        metadata: { name: c.labels[LABEL_POD_NAME] ?? '', namespace: c.labels[LABEL_POD_NAMESPACE] ?? '', uid, creationTimestamp: null as unknown as string },
        spec: { containers: [] },
        status: {},
      } as Pod;
      byUid.set(uid, p);
    }
    p.spec!.containers.push({ name: c.labels[LABEL_CONTAINER_NAME] ?? c.metadata.name, image: c.image, resources: {} });
  }
  return [...byUid.values()];
}

/** The runtime's containers counted by state (running, exited, created, unknown), for kubelet_running_containers. */
export async function containersByState(runtime: RuntimeService): Promise<Record<string, number>> {
  const counts: Record<string, number> = { running: 0, exited: 0, created: 0, unknown: 0 };
  for (const c of await runtime.listContainers()) {
    const s = c.state.replace('CONTAINER_', '').toLowerCase();
    counts[s] = (counts[s] ?? 0) + 1;
  }
  return counts;
}

/** The text of /metrics (the agent's registry), /metrics/probes and /metrics/resource (a fresh usage sample). */
export async function kubeletMetrics(
  which: 'agent' | 'probes' | 'resource',
  src: { usage: UsageCollector; agentRegistry: Registry; probeRegistry: Registry },
): Promise<{ contentType: string; text: string }> {
  if (which === 'resource') return { contentType: 'text/plain; version=0.0.4; charset=utf-8', text: resourceMetricsText(await src.usage.sample()) };
  const reg = which === 'agent' ? src.agentRegistry : src.probeRegistry;
  return { contentType: reg.contentType, text: await reg.metrics() };
}

/** The probe history of the pod named namespace/name among pods (an empty one when none is kept), or undefined when there is no such pod. */
export function podProbeHistory(probeManager: ProbeManager, pods: readonly Pod[], namespace: string, name: string): PodProbeHistory | undefined {
  const pod = pods.find((p) => (p.metadata?.namespace ?? 'default') === namespace && p.metadata?.name === name);
  if (!pod) return undefined;
  const uid = pod.metadata?.uid ?? '';
  const history = probeManager.history;
  return {
    entries: () => history?.entries(uid) ?? [],
    watch: (listener) => history?.watch(uid, listener) ?? (() => {}),
  };
}
