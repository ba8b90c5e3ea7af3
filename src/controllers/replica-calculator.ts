// The HPA's replica calculation for resource metrics (pkg/controller/podautoscaler/replica_calculator.go
// GetResourceReplicas, GetRawResourceReplicas, groupPods, and metrics' GetResourceUtilizationRatio and
// GetMetricUsageRatio): pods grouped into ready, unready (pending; for cpu, not yet ready or sampled
// before it was), missing (no metrics) and ignored (deleted, failed); the usage ratio over the ready
// pods with metrics; within the tolerance no change; otherwise missing pods count as using the whole
// request (or the target) on a scale-down and nothing on a scale-up, unready pods nothing on a
// scale-up, and a change of direction so made is no change. Values are in milli-units, as upstream's.

import type { Pod } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';

/** One pod's usage of a resource: milli-units, when sampled, over which window. */
export interface PodMetric {
  value: number;
  timestampMs: number;
  windowMs: number;
}

export type PodMetrics = Map<string, PodMetric>;

export interface ReplicaCalculatorOptions {
  /** The tolerance within which the ratio changes nothing (--horizontal-pod-autoscaler-tolerance, 0.1). */
  tolerance: number;
  /** --horizontal-pod-autoscaler-cpu-initialization-period (5 min). */
  cpuInitializationPeriodMs: number;
  /** --horizontal-pod-autoscaler-initial-readiness-delay (30 s). */
  delayOfInitialReadinessStatusMs: number;
}

export const defaultReplicaCalculatorOptions: ReplicaCalculatorOptions = {
  tolerance: 0.1,
  cpuInitializationPeriodMs: 5 * 60_000,
  delayOfInitialReadinessStatusMs: 30_000,
};

/** A calculation that cannot be made, with upstream's words. */
export class ReplicaCalculationError extends Error {}

const time = (s: string | undefined) => (s ? Date.parse(s) : NaN);

/** groupPods. */
export function groupPods(
  pods: readonly Pod[],
  metrics: PodMetrics,
  resource: string,
  now: number,
  opts: ReplicaCalculatorOptions,
): { readyPodCount: number; unready: Set<string>; missing: Set<string>; ignored: Set<string> } {
  let readyPodCount = 0;
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed') {
      ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const condition = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
      const start = time(pod.status?.startTime);
      let isUnready: boolean;
      if (!condition || Number.isNaN(start)) {
        isUnready = true;
      } else {
        const transition = time(condition.lastTransitionTime) || 0;
        if (start + opts.cpuInitializationPeriodMs > now) {
          // Within its initialisation: unready, or sampled before one window since it became ready.
          isUnready = condition.status === 'False' || metric.timestampMs < transition + metric.windowMs;
        } else {
          // Unready and never ready since its start.
          isUnready = condition.status === 'False' && start + opts.delayOfInitialReadinessStatusMs > transition;
        }
      }
      if (isUnready) {
        unready.add(name);
        continue;
      }
    }
    readyPodCount++;
  }
  return { readyPodCount, unready, missing, ignored };
}

/** calculatePodRequests: each pod's request of the resource (milli), its containers' sum; an error for a container without one. */
export function podRequests(pods: readonly Pod[], resource: string): Map<string, number> {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of pod.spec?.containers ?? []) {
      const q = c.resources?.requests?.[resource];
      if (q === undefined) throw new ReplicaCalculationError(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata?.name ?? ''}`);
      sum += Number(parseQuantity(String(q)).milliValue());
    }
    requests.set(pod.metadata?.name ?? '', sum);
  }
  return requests;
}

/** GetResourceUtilizationRatio: the ratio to the target, the utilization (percent of request) and the average raw usage. */
export function resourceUtilizationRatio(
  metrics: PodMetrics,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, m] of metrics) {
    const request = requests.get(name);
    if (request === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) throw new ReplicaCalculationError('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entries) };
}

/** GetMetricUsageRatio: the ratio of the average usage to the target, and that average. */
export function metricUsageRatio(metrics: PodMetrics, targetUsage: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

function withoutPods(metrics: PodMetrics, names: Iterable<string>): PodMetrics {
  const out = new Map(metrics);
  for (const n of names) out.delete(n);
  return out;
}

/** The part both calculations share once the usage ratio is known; the ratio function is recomputed with the fill-ins. */
function proposal(
  currentReplicas: number,
  grouped: ReturnType<typeof groupPods>,
  metrics: PodMetrics,
  usageRatio: number,
  missingValue: (name: string) => number,
  ratioOf: (m: PodMetrics) => number,
  tolerance: number,
): number {
  const scaleUpWithUnready = grouped.unready.size > 0 && usageRatio > 1.0;
  if (!scaleUpWithUnready && grouped.missing.size === 0) {
    if (Math.abs(1.0 - usageRatio) <= tolerance) return currentReplicas;
    return Math.ceil(usageRatio * grouped.readyPodCount);
  }
  const filled = new Map(metrics);
  if (grouped.missing.size > 0) {
    for (const name of grouped.missing) {
      if (usageRatio < 1.0) filled.set(name, { value: missingValue(name), timestampMs: 0, windowMs: 0 });
      else if (usageRatio > 1.0) filled.set(name, { value: 0, timestampMs: 0, windowMs: 0 });
    }
  }
  if (scaleUpWithUnready) for (const name of grouped.unready) filled.set(name, { value: 0, timestampMs: 0, windowMs: 0 });
  const newRatio = ratioOf(filled);
  if (Math.abs(1.0 - newRatio) <= tolerance || (usageRatio < 1.0 && newRatio > 1.0) || (usageRatio > 1.0 && newRatio < 1.0)) return currentReplicas;
  const newReplicas = Math.ceil(newRatio * filled.size);
  if ((newRatio < 1.0 && newReplicas > currentReplicas) || (newRatio > 1.0 && newReplicas < currentReplicas)) return currentReplicas;
  return newReplicas;
}

function readyMetrics(pods: readonly Pod[], metrics: PodMetrics, resource: string, now: number, opts: ReplicaCalculatorOptions) {
  if (pods.length === 0) throw new ReplicaCalculationError('no pods returned by selector while calculating replica count');
  const grouped = groupPods(pods, metrics, resource, now, opts);
  const kept = withoutPods(withoutPods(metrics, grouped.ignored), grouped.unready);
  if (kept.size === 0) throw new ReplicaCalculationError('did not receive metrics for targeted pods (pods might be unready)');
  return { grouped, kept };
}

/** GetResourceReplicas: the replicas for a target utilization (percent of request). */
export function resourceReplicas(
  currentReplicas: number,
  targetUtilization: number,
  resource: string,
  pods: readonly Pod[],
  metrics: PodMetrics,
  now: number,
  opts: ReplicaCalculatorOptions = defaultReplicaCalculatorOptions,
): { replicas: number; utilization: number; rawAverage: number } {
  const { grouped, kept } = readyMetrics(pods, metrics, resource, now, opts);
  const requests = podRequests(pods, resource);
  const { ratio, utilization, rawAverage } = resourceUtilizationRatio(kept, requests, targetUtilization);
  const fallback = Math.max(100, targetUtilization);
  const replicas = proposal(
    currentReplicas,
    grouped,
    kept,
    ratio,
    (name) => Math.trunc(((requests.get(name) ?? 0) * fallback) / 100),
    (m) => resourceUtilizationRatio(m, requests, targetUtilization).ratio,
    opts.tolerance,
  );
  return { replicas, utilization, rawAverage };
}

/** GetRawResourceReplicas (calcPlainMetricReplicas): the replicas for a target average value (milli). */
export function rawResourceReplicas(
  currentReplicas: number,
  targetUsage: number,
  resource: string,
  pods: readonly Pod[],
  metrics: PodMetrics,
  now: number,
  opts: ReplicaCalculatorOptions = defaultReplicaCalculatorOptions,
): { replicas: number; usage: number } {
  const { grouped, kept } = readyMetrics(pods, metrics, resource, now, opts);
  const { ratio, usage } = metricUsageRatio(kept, targetUsage);
  const replicas = proposal(
    currentReplicas,
    grouped,
    kept,
    ratio,
    () => targetUsage,
    (m) => metricUsageRatio(m, targetUsage).ratio,
    opts.tolerance,
  );
  return { replicas, usage };
}
