// What the kubelet port serves of a node joined to a cluster: the pods the kubelet runs (API pods
// and static pods, by namespace/name, with their current status), their container streams (logs,
// exec, attach, port-forward), stats and metrics. The API server owns the pods here, so the pod
// writes and watches of the agent's own API are refused.

import type { Duplex, Readable } from 'node:stream';
import type { Pod } from '../api/types.js';
import { ApiError, type ExecSession, type KubeBackend, type KubeEvent, type ListResult, type LogOptions, type StreamOptions, type Watch, type WatchEvent } from '../kubeapi/backend.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../lifecycle/container-config.js';
import type { PodKubelet } from '../lifecycle/kubelet.js';
import type { ContainerLogQuery, KubeletView } from '../server/kubelet-routes.js';
import type { Registry } from 'prom-client';
import { resourceMetricsText, statsSummary } from './node-metrics.js';
import { notFound } from './pod-registry.js';
import type { PodStreams } from './pod-streams.js';
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

export class ClusterPods implements KubeBackend, KubeletView {
  readonly nodeName: string;

  constructor(private readonly d: ClusterPodsDeps) {
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

  private pod(namespace: string, name: string): Pod {
    const p = this.getPod(namespace, name);
    if (!p) throw notFound(name);
    return p;
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

  listEvents(): ListResult<KubeEvent> {
    return { items: [], resourceVersion: '0' };
  }

  watchEvents(_rv: string, _onEvent: (ev: WatchEvent<KubeEvent>) => void): Watch {
    throw notServed();
  }

  namespaces(): string[] {
    return [...new Set(['default', ...this.pods().map((p) => p.metadata?.namespace ?? 'default')])].sort();
  }

  // --- streams ---

  podLog(namespace: string, name: string, opts: LogOptions): Promise<Readable> {
    return this.d.streams.log(this.pod(namespace, name), opts);
  }

  exec(namespace: string, name: string, opts: StreamOptions): Promise<ExecSession> {
    return this.d.streams.exec(this.pod(namespace, name), opts);
  }

  attach(namespace: string, name: string, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession> {
    return this.d.streams.attach(this.pod(namespace, name), opts);
  }

  portForward(namespace: string, name: string, port: number): Promise<Duplex> {
    return this.d.streams.portForward(this.pod(namespace, name), port);
  }

  podMetrics(namespace: string, name: string): ReturnType<KubeBackend['podMetrics']> {
    const sample = this.d.usage.latest;
    void this.d.usage.sample().catch(() => {});
    const p = sample?.pods.find((x) => x.namespace === namespace && x.name === name);
    if (!sample || !p) return undefined;
    return {
      timestamp: new Date(sample.time).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      window: `${Math.max(1, Math.round(sample.windowMs / 1000))}s`,
      containers: p.containers.map((c) => ({ name: c.name, cpuCores: c.cpuCores ?? 0, memoryBytes: c.memoryBytes })),
    };
  }

  // --- KubeletView ---

  async runningPods(): Promise<Pod[]> {
    const byUid = new Map<string, Pod>();
    for (const c of await this.d.runtime.listContainers({ state: 'CONTAINER_RUNNING' })) {
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

  syncLoopHealthy(): boolean {
    return true;
  }

  async metrics(which: 'agent' | 'probes' | 'resource'): Promise<{ contentType: string; text: string }> {
    if (which === 'resource') return { contentType: 'text/plain; version=0.0.4; charset=utf-8', text: resourceMetricsText(await this.d.usage.sample()) };
    const reg = which === 'agent' ? this.d.agentRegistry : this.d.probeRegistry;
    return { contentType: reg.contentType, text: await reg.metrics() };
  }

  async statsSummary(): Promise<unknown> {
    return statsSummary(await this.d.usage.sample(), this.nodeName, this.d.startedAt);
  }

  containerLog(namespace: string, pod: string, container: string, q: ContainerLogQuery): Promise<Readable> {
    return this.podLog(namespace, pod, { container, ...q });
  }

  configz(): unknown {
    return this.d.configz();
  }
}
