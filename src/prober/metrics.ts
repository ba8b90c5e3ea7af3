// The prober's Prometheus metrics (§13.1): prober_probe_total, prober_probe_duration_seconds and
// process_start_time_seconds in the registry the agent serves at /metrics/probes. prom-client is
// loaded on first use, so commands that serve no metrics never pay for it.

import { createRequire } from 'node:module';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { ProbeType } from '../api/types.js';

const requireCjs = createRequire(import.meta.url);

/** prom-client (a CommonJS package, so it can be required synchronously where it is first needed). */
export function promClient(): typeof import('prom-client') {
  return requireCjs('prom-client') as typeof import('prom-client');
}

type TotalLabel = 'probe_type' | 'result' | 'container' | 'pod' | 'namespace' | 'pod_uid';
type DurationLabel = 'probe_type' | 'container' | 'pod' | 'namespace';

export interface ProberMetrics {
  readonly registry: Registry;
  readonly probeTotal: Counter<TotalLabel>;
  readonly probeDuration: Histogram<DurationLabel>;
}

/**
 * Registers the prober metrics in registry (or returns the ones already registered there, so several
 * managers may share one registry).
 */
export function createProberMetrics(registry: Registry): ProberMetrics {
  const { Counter, Gauge, Histogram } = promClient();
  const probeTotal =
    (registry.getSingleMetric('prober_probe_total') as Counter<TotalLabel> | undefined) ??
    new Counter({
      name: 'prober_probe_total',
      help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
      labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
      registers: [registry],
    });
  const probeDuration =
    (registry.getSingleMetric('prober_probe_duration_seconds') as Histogram<DurationLabel> | undefined) ??
    new Histogram({
      name: 'prober_probe_duration_seconds',
      help: 'Duration in seconds for a probe response.',
      labelNames: ['probe_type', 'container', 'pod', 'namespace'],
      registers: [registry],
    });
  if (!registry.getSingleMetric('process_start_time_seconds')) {
    const startSeconds = Math.round((performance.timeOrigin / 1000) * 1000) / 1000;
    new Gauge({
      name: 'process_start_time_seconds',
      help: 'Start time of the process since unix epoch in seconds.',
      registers: [registry],
      collect() {
        this.set(startSeconds);
      },
    });
  }
  return { registry, probeTotal, probeDuration };
}

export interface SeriesIdentity {
  probeType: ProbeType;
  container: string;
  pod: string;
  namespace: string;
  podUid: string;
}

/** What a probe worker records its probes into. */
export interface ProbeSeries {
  record(result: 'Success' | 'Failure' | 'Unknown', durationSeconds: number): void;
  remove(): void;
}

/** The series of a manager that keeps no metrics. */
export const noSeries: ProbeSeries = { record() {}, remove() {} };

/**
 * One worker's metric series, with label sets built once so that recording a probe does no label
 * hashing or allocation; remove() deletes every series the worker could have created.
 */
export class WorkerSeries implements ProbeSeries {
  private readonly successfulLabels: Record<TotalLabel, string>;
  private readonly failedLabels: Record<TotalLabel, string>;
  private readonly unknownLabels: Record<TotalLabel, string>;
  private readonly durationLabels: Record<DurationLabel, string>;
  private readonly successful: { inc(v?: number): void };
  private readonly failed: { inc(v?: number): void };
  private readonly unknown: { inc(v?: number): void };
  private readonly duration: { observe(v: number): void };

  constructor(
    private readonly metrics: ProberMetrics,
    id: SeriesIdentity,
  ) {
    // Key order is the exposition order: the kubelet's label order.
    const total = (result: string) => ({
      probe_type: id.probeType,
      result,
      container: id.container,
      pod: id.pod,
      namespace: id.namespace,
      pod_uid: id.podUid,
    });
    this.successfulLabels = total('successful');
    this.failedLabels = total('failed');
    this.unknownLabels = total('unknown');
    this.durationLabels = { probe_type: id.probeType, container: id.container, pod: id.pod, namespace: id.namespace };
    this.successful = metrics.probeTotal.labels(this.successfulLabels);
    this.failed = metrics.probeTotal.labels(this.failedLabels);
    this.unknown = metrics.probeTotal.labels(this.unknownLabels);
    this.duration = metrics.probeDuration.labels(this.durationLabels);
  }

  /** Counts one executed probe; the duration is observed for Success and Unknown only (§4.3 step 12). */
  record(result: 'Success' | 'Failure' | 'Unknown', durationSeconds: number): void {
    if (result === 'Success') {
      this.successful.inc();
      this.duration.observe(durationSeconds);
    } else if (result === 'Failure') {
      this.failed.inc();
    } else {
      this.unknown.inc();
      this.duration.observe(durationSeconds);
    }
  }

  remove(): void {
    this.metrics.probeTotal.remove(this.successfulLabels);
    this.metrics.probeTotal.remove(this.failedLabels);
    this.metrics.probeTotal.remove(this.unknownLabels);
    this.metrics.probeDuration.remove(this.durationLabels);
  }
}
