// The agent's KubeBackend: what the Kubernetes API layer serves, over the pod registry (pods, events,
// watches), the API's write rules (api-pods.ts), the container streams and the usage collector.

import { randomUUID } from 'node:crypto';
import type { Duplex, Readable } from 'node:stream';
import type { Pod } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';
import {
  ApiError,
  type CreateOptions,
  type DeleteOptions,
  type ExecSession,
  type KubeBackend,
  type KubeEvent,
  type ListResult,
  type LogOptions,
  type StreamOptions,
  type Watch,
  type WatchEvent,
} from '../kubeapi/backend.js';
import { decodeAPIPod, invalidPodError, validatePodUpdate } from './api-pods.js';
import { notFound, type PodRegistry } from './pod-registry.js';
import type { PodStreams } from './pod-streams.js';
import type { UsageCollector } from './usage.js';
import { ObjectStore } from './object-store.js';

export interface AgentBackendDeps {
  nodeName: string;
  runtimeName: string;
  registry: PodRegistry;
  streams: PodStreams;
  usage: UsageCollector;
  /** ConfigMaps and Secrets served under core/v1 (the kubelet's lookup should be the same store); memory-only by default. */
  objects?: ObjectStore;
}

export class AgentBackend implements KubeBackend {
  readonly nodeName: string;
  readonly objects: ObjectStore;
  private readonly d: AgentBackendDeps;

  constructor(deps: AgentBackendDeps) {
    this.d = deps;
    this.nodeName = deps.nodeName;
    this.objects = deps.objects ?? new ObjectStore();
  }

  listPods(): ListResult<Pod> {
    return this.d.registry.list();
  }

  getPod(namespace: string, name: string): Pod | undefined {
    return this.d.registry.get(namespace, name);
  }

  async createPod(raw: Pod, opts: CreateOptions = {}): Promise<Pod> {
    const { pod } = decodeAPIPod(raw, { nodeName: this.nodeName, runtime: this.d.runtimeName, uid: randomUUID(), ...(opts.fieldValidation ? { fieldValidation: opts.fieldValidation } : {}) });
    const name = pod.metadata?.name ?? '';
    if (this.d.registry.get(pod.metadata?.namespace ?? 'default', name)) {
      throw new ApiError(409, 'AlreadyExists', `pods ${JSON.stringify(name)} already exists`, { name, kind: 'pods' });
    }
    if (opts.dryRun) return { apiVersion: 'v1', kind: 'Pod', ...pod, status: { phase: 'Pending' } } as Pod;
    return this.d.registry.add(pod, { source: 'api', from: 'api' });
  }

  async updatePod(raw: Pod, opts: CreateOptions = {}): Promise<Pod> {
    const ns = raw.metadata?.namespace || 'default';
    const name = raw.metadata?.name ?? '';
    const current = this.d.registry.get(ns, name);
    if (!current) throw notFound(name);
    const rv = raw.metadata?.resourceVersion;
    const uid = raw.metadata?.uid;
    if ((rv && rv !== current.metadata?.resourceVersion) || (uid && uid !== current.metadata?.uid)) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods ${JSON.stringify(name)}: the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'pods' });
    }
    if (this.d.registry.origin(ns, name)?.source !== 'api') {
      throw new ApiError(403, 'Forbidden', `pods ${JSON.stringify(name)} is forbidden: a static pod is changed through its source`, { name, kind: 'pods' });
    }
    const { pod } = decodeAPIPod(raw, { nodeName: this.nodeName, runtime: this.d.runtimeName, uid: current.metadata!.uid!, ...(opts.fieldValidation ? { fieldValidation: opts.fieldValidation } : {}) });
    (pod.metadata as { creationTimestamp?: string }).creationTimestamp = current.metadata?.creationTimestamp;
    const errs = validatePodUpdate(pod, current);
    if (errs.length > 0) throw invalidPodError(name, errs);
    const same = (p: Pod) => canonicalJSON({ spec: p.spec, labels: p.metadata?.labels ?? {}, annotations: p.metadata?.annotations ?? {} });
    if (same(pod) === same(current) || opts.dryRun) return current;
    return this.d.registry.update(pod);
  }

  deletePod(namespace: string, name: string, opts: DeleteOptions = {}): Promise<Pod> {
    return this.d.registry.delete(namespace, name, opts);
  }

  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch {
    return this.d.registry.watchPods(resourceVersion, onEvent);
  }

  listEvents(): ListResult<KubeEvent> {
    return this.d.registry.listEvents();
  }

  watchEvents(resourceVersion: string, onEvent: (ev: WatchEvent<KubeEvent>) => void): Watch {
    return this.d.registry.watchEvents(resourceVersion, onEvent);
  }

  namespaces(): string[] {
    return this.d.registry.namespaces();
  }

  private pod(namespace: string, name: string): Pod {
    const pod = this.d.registry.get(namespace, name);
    if (!pod) throw notFound(name);
    return pod;
  }

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
}
