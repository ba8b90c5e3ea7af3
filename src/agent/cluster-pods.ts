// What the kubelet port serves of a node joined to a cluster: the pods the kubelet runs (API pods
// and static pods, by namespace/name, with their current status), their container streams (logs,
// exec, attach, port-forward), stats and metrics. The API server owns the pods here, so the pod
// writes and watches of the agent's own API are refused.

import type { Readable } from 'node:stream';
import type { Event, Pod } from '../api/types.js';
import type { KubeBackend, ListResult, Watch, WatchEvent } from '../kubeapi/backend.js';
import { ApiError } from '../http/status.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import type { ContainerLogQuery, KubeletView } from '../server/kubelet-routes.js';
import type { Registry } from 'prom-client';
import { statsSummary } from './node-metrics.js';
import { kubeletMetrics, podProbeHistory, runningPods } from './node-view.js';
import type { PodStreams } from './pod-streams.js';
import { PodStreamsBackend } from './pod-streams-backend.js';
import type { ProcessAwareRuntime, UsageCollector } from './usage.js';

export interface ClusterPodsDeps {
  nodeName: string;
  kubelet: PodKubelet;
  runtime: ProcessAwareRuntime;
  streams: PodStreams;
  usage: UsageCollector;
  /** The probe metrics (/metrics/probes) and the agent's own (/metrics). */
  probeRegistry: Registry;
  agentRegistry: Registry;
  startedAt: number;
  configz: () => unknown;
}

const notServed = () => new ApiError(405, 'MethodNotAllowed', 'a node joined to a cluster takes its pods from the API server');

export class ClusterPods extends PodStreamsBackend implements KubeBackend, KubeletView {
  readonly nodeName: string;

  constructor(private readonly d: ClusterPodsDeps) {
    super(d.streams, d.usage);
    this.nodeName = d.nodeName;
  }

  // --- the pods ---

  /** Every pod the kubelet holds, with its current status; of two pods of one name, the newer. */
  pods(): Pod[] {
    const byKey = new Map<string, Pod>();
    for (const p of this.d.kubelet.pods()) {
      const uid = p.metadata?.uid ?? '';
      const status = this.d.kubelet.getPodStatus(uid);
      byKey.set(`${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`, { apiVersion: 'v1', kind: 'Pod', ...p, ...(status ? { status } : {}) });
    }
    return [...byKey.values()];
  }

  listPods(): ListResult<Pod> {
    return { items: this.pods(), resourceVersion: '0' };
  }

  getPod(namespace: string, name: string): Pod | undefined {
    return this.pods().find((p) => (p.metadata?.namespace ?? 'default') === namespace && p.metadata?.name === name);
  }

  createPod(): Promise<Pod> {
    return Promise.reject(notServed());
  }

  updatePod(): Promise<Pod> {
    return Promise.reject(notServed());
  }

  deletePod(): Promise<Pod> {
    return Promise.reject(notServed());
  }

  watchPods(_rv: string, _onEvent: (ev: WatchEvent<Pod>) => void): Watch {
    throw notServed();
  }

  listEvents(): ListResult<Event> {
    return { items: [], resourceVersion: '0' };
  }

  watchEvents(_rv: string, _onEvent: (ev: WatchEvent<Event>) => void): Watch {
    throw notServed();
  }

  namespaces(): string[] {
    return [...new Set(['default', ...this.pods().map((p) => p.metadata?.namespace ?? 'default')])].sort();
  }

  // --- KubeletView ---

  runningPods(): Promise<Pod[]> {
    return runningPods(this.d.runtime);
  }

  syncLoopHealthy(): boolean {
    return true;
  }

  metrics(which: 'agent' | 'probes' | 'resource'): Promise<{ contentType: string; text: string }> {
    return kubeletMetrics(which, this.d);
  }

  async statsSummary(): Promise<unknown> {
    return statsSummary(await this.d.usage.sample(), this.nodeName, this.d.startedAt);
  }

  containerLog(namespace: string, pod: string, container: string, q: ContainerLogQuery): Promise<Readable> {
    return this.podLog(namespace, pod, { container, ...q });
  }

  probeHistory(namespace: string, name: string) {
    return podProbeHistory(this.d.kubelet.probeManager, this.pods(), namespace, name);
  }

  configz(): unknown {
    return this.d.configz();
  }
}
