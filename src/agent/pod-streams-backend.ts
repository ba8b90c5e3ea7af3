// The part of a KubeBackend the standalone and the cluster agent share: a pod's container streams
// (logs, exec, attach, port-forward) and its metrics, over the pod streams and the usage collector,
// once each says how it finds a pod.

import type { Duplex, Readable } from 'node:stream';
import type { Pod } from '../api/types.js';
import type { KubeBackend, StreamOptions } from '../kubeapi/backend.js';
import type { ExecSession, LogOptions } from '../runtime/streams.js';
import { notFound } from './pod-registry.js';
import type { PodStreams } from './pod-streams.js';
import type { UsageCollector } from './usage.js';

export abstract class PodStreamsBackend implements Pick<KubeBackend, 'podLog' | 'exec' | 'attach' | 'portForward' | 'podMetrics'> {
  constructor(
    private readonly streams: PodStreams,
    private readonly podUsage: UsageCollector,
  ) {}

  abstract getPod(namespace: string, name: string): Pod | undefined;

  /** The pod, or a 404 ApiError. */
  protected pod(namespace: string, name: string): Pod {
    const pod = this.getPod(namespace, name);
    if (!pod) throw notFound(name);
    return pod;
  }

  podLog(namespace: string, name: string, opts: LogOptions): Promise<Readable> {
    return this.streams.log(this.pod(namespace, name), opts);
  }

  exec(namespace: string, name: string, opts: StreamOptions): Promise<ExecSession> {
    return this.streams.exec(this.pod(namespace, name), opts);
  }

  attach(namespace: string, name: string, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession> {
    return this.streams.attach(this.pod(namespace, name), opts);
  }

  portForward(namespace: string, name: string, port: number): Promise<Duplex> {
    return this.streams.portForward(this.pod(namespace, name), port);
  }

  /** From the latest usage sample (a new one is taken for the next call). */
  podMetrics(namespace: string, name: string): ReturnType<KubeBackend['podMetrics']> {
    const sample = this.podUsage.latest;
    void this.podUsage.sample().catch(() => {});
    const p = sample?.pods.find((x) => x.namespace === namespace && x.name === name);
    if (!sample || !p) return undefined;
    return {
      timestamp: new Date(sample.time).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      window: `${Math.max(1, Math.round(sample.windowMs / 1000))}s`,
      containers: p.containers.map((c) => ({ name: c.name, cpuCores: c.cpuCores ?? 0, memoryBytes: c.memoryBytes })),
    };
  }
}
