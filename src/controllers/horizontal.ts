// The HorizontalPodAutoscaler controller (pkg/controller/podautoscaler/horizontal.go
// reconcileAutoscaler): every sync period (15 s, on the injected clock; a new or changed HPA waits
// for it too, as upstream's fixed-interval queue makes it) each HPA reads its target's scale (the
// autoscaling/v1 Scale of a Deployment, ReplicaSet, StatefulSet — any row of the resource table with
// a scale subresource), computes a replica count per metric from the agent's own pod metrics (the
// ones metrics.k8s.io serves; resource metrics of cpu and memory, Utilization or AverageValue;
// replica-calculator.ts), keeps the highest, normalizes it (hpa-normalize.ts: stabilization windows,
// policies, min/max), writes the scale when it changes (SuccessfulRescale `New size: N; reason: …`)
// and the status (currentReplicas, desiredReplicas, currentMetrics, lastScaleTime, the conditions
// AbleToScale, ScalingActive, ScalingLimited with upstream's reasons). Other metric sources (Pods,
// Object, External, ContainerResource) have no metrics API here: ScalingActive False says so.

import type { HorizontalPodAutoscaler, MetricSpec, MetricStatus } from '../api/autoscaling.js';
import { canonicalQuantity, parseQuantity } from '../api/quantity.js';
import type { Pod } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject, Storage, WritableObjectMeta } from '../kubeapi/backend.js';
import type { ResourceDef } from '../kubeapi/resource-def.js';
import { resourceTable } from '../kubeapi/resource-table.js';
import { scaleOf, withReplicas } from '../kubeapi/scale.js';
import { parseLabelSelector } from '../kubeapi/selectors.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { HpaHistory, rfc3339, setCondition } from './hpa-normalize.js';
import { objectKey, type Informer } from './informer.js';
import { rawResourceReplicas, resourceReplicas, type PodMetrics } from './replica-calculator.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, workloadRef } from './workload-events.js';

/** --horizontal-pod-autoscaler-sync-period. */
export const hpaSyncPeriodMs = 15_000;

type Hpa = HorizontalPodAutoscaler & KubeObject;
type Obj = KubeObject & { metadata: WritableObjectMeta };
interface Scale {
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

/** A metric that yields no proposal: the ScalingActive condition it sets, the event and the error. */
class MetricError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** How computeReplicasForMetric names a metric in its error (`cpu resource`). */
function metricName(spec: MetricSpec | undefined): string {
  if (spec?.type === 'Resource') return `${spec.resource?.name ?? ''} resource`;
  return `${spec?.type ?? ''} metric`;
}

const milli = (q: string) => Number(parseQuantity(q).milliValue());

export class HorizontalController {
  readonly queue: WorkQueue;
  private readonly hpas: Informer<Hpa>;
  private readonly recorder: EventRecorder;
  readonly history: HpaHistory;

  constructor(
    private readonly ctx: ControllerContext,
    opts: { syncPeriodMs?: number; downscaleStabilisationWindowMs?: number } = {},
  ) {
    const period = opts.syncPeriodMs ?? hpaSyncPeriodMs;
    this.history = new HpaHistory(opts.downscaleStabilisationWindowMs);
    this.recorder = ctx.recorder('horizontal-pod-autoscaler');
    this.queue = ctx.workQueue('horizontalpodautoscaler', async (key) => {
      if (await this.sync(key)) this.queue.addAfter(key, period);
    });
    this.hpas = ctx.informer('HorizontalPodAutoscaler');
    this.hpas.on({
      onAdd: (h) => this.queue.addAfter(objectKey(h), period),
      onDelete: (h) => this.history.forget(objectKey(h)),
    });
  }

  private now(): number {
    return this.ctx.clock.now();
  }

  private event(hpa: Hpa, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(workloadRef(hpa, 'autoscaling/v2', 'HorizontalPodAutoscaler'), type, reason, message);
  }

  /** Reconciles one HPA; false when it is gone (no further syncs). */
  async sync(key: string): Promise<boolean> {
    const [ns, name] = key.split('/') as [string, string];
    const stored = this.hpas.get(ns, name);
    if (!stored) {
      this.history.forget(key);
      return false;
    }
    const hpa = structuredClone(stored);
    try {
      await this.reconcile(hpa, key);
    } catch (err) {
      if (!isConflictOrGone(err)) this.ctx.logger.warn('HPA sync failed', { hpa: key, err: String(err) });
    }
    return true;
  }

  /** The table row of the target's kind, its storage and its object. */
  private target(hpa: Hpa): { def: ResourceDef; storage: Storage; obj: Obj } {
    const ref = hpa.spec.scaleTargetRef;
    const group = ref.apiVersion?.includes('/') ? ref.apiVersion.split('/')[0]! : '';
    const def = resourceTable.find((d) => d.kind === ref.kind && d.group === group && d.scale);
    if (!def) throw new Error(`no matches for kind ${JSON.stringify(ref.kind)} in group ${JSON.stringify(group)}`);
    const storage = def.storage(this.ctx.backend, { now: () => this.now() });
    const obj = storage?.get(hpa.metadata?.namespace ?? '', ref.name) as Obj | undefined;
    if (!storage || !obj) throw new Error(`${def.group ? `${def.resource}.${def.group}` : def.resource} ${JSON.stringify(ref.name)} not found`);
    return { def, storage, obj };
  }

  private async reconcile(hpa: Hpa, key: string): Promise<void> {
    const now = this.now();
    const original = JSON.stringify(hpa.status ?? {});
    let target: ReturnType<HorizontalController['target']>;
    let scale: Scale;
    try {
      target = this.target(hpa);
      scale = scaleOf(target.obj, target.def.scale!) as unknown as Scale;
    } catch (err) {
      const text = errorText(err);
      this.event(hpa, 'Warning', 'FailedGetScale', text);
      setCondition(hpa, 'AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${text}`, now);
      await this.writeStatus(hpa, original);
      return;
    }
    setCondition(hpa, 'AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale", now);
    const current = scale.spec.replicas;
    this.history.recordInitial(key, current, now);
    const min = hpa.spec.minReplicas ?? 1;
    let desired = 0;
    let reason = '';
    let statuses: MetricStatus[] = [];
    let rescale = true;
    if (current === 0 && min !== 0) {
      rescale = false;
      setCondition(hpa, 'ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero', now);
    } else if (current > hpa.spec.maxReplicas) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = hpa.spec.maxReplicas;
    } else if (current < min) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      const computed = this.computeReplicasForMetrics(hpa, scale, now);
      statuses = computed.statuses;
      if (computed.replicas === -1) {
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false, now);
        await this.writeStatus(hpa, original);
        return;
      }
      let metric = '';
      if (computed.replicas > desired) {
        desired = computed.replicas;
        metric = computed.metric;
      }
      if (desired > current) reason = `${metric} above target`;
      if (desired < current) reason = 'All metrics below target';
      desired = hpa.spec.behavior
        ? this.history.normalizeWithBehaviors(hpa, key, current, desired, min, now)
        : this.history.normalize(hpa, key, current, desired, min, now);
      rescale = desired !== current;
    }
    if (rescale) {
      try {
        await target.storage.update!(withReplicas(target.obj, target.def.scale!, desired), {});
      } catch (err) {
        const text = errorText(err);
        this.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${text}`);
        setCondition(hpa, 'AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${text}`, now);
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false, now);
        await this.writeStatus(hpa, original);
        return;
      }
      setCondition(hpa, 'AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`, now);
      this.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      this.history.storeScaleEvent(hpa, key, current, desired, now);
      this.ctx.logger.info('Successfully rescaled', { hpa: key, currentReplicas: current, desiredReplicas: desired, reason });
    } else {
      desired = current;
    }
    this.setStatus(hpa, current, desired, statuses, rescale, now);
    await this.writeStatus(hpa, original);
  }

  /** setStatus. */
  private setStatus(hpa: Hpa, current: number, desired: number, statuses: MetricStatus[], rescale: boolean, now: number): void {
    const was = hpa.status;
    hpa.status = {
      ...(current !== 0 ? { currentReplicas: current } : {}),
      desiredReplicas: desired,
      ...(rescale ? { lastScaleTime: rfc3339(now) } : was?.lastScaleTime ? { lastScaleTime: was.lastScaleTime } : {}),
      ...(statuses.length ? { currentMetrics: statuses } : {}),
      ...(was?.conditions ? { conditions: was.conditions } : {}),
    };
  }

  /** updateStatusIfNeeded. */
  private async writeStatus(hpa: Hpa, original: string): Promise<void> {
    if (JSON.stringify(hpa.status ?? {}) === original) return;
    await this.ctx.storage('HorizontalPodAutoscaler').updateStatus!(hpa, {});
  }

  /** computeReplicasForMetrics: the highest proposal; -1 when every metric failed, or some did and the rest would scale down. */
  private computeReplicasForMetrics(hpa: Hpa, scale: Scale, now: number): { replicas: number; metric: string; statuses: MetricStatus[] } {
    const specs = hpa.spec.metrics ?? [];
    const selectorText = scale.status.selector;
    if (!selectorText) {
      this.event(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      setCondition(hpa, 'ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector", now);
      return { replicas: -1, metric: '', statuses: [] };
    }
    const selects = parseLabelSelector(selectorText);
    const pods = this.ctx.pods.list(hpa.metadata?.namespace ?? '').filter((p) => selects(p.metadata?.labels ?? {}));
    const statuses: MetricStatus[] = [];
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let first: MetricError | undefined;
    let firstSpec: MetricSpec | undefined;
    for (const spec of specs) {
      try {
        const p = this.computeReplicasForMetric(spec, scale.spec.replicas, pods, now);
        statuses.push(p.status);
        if (replicas === 0 || p.replicas > replicas) {
          replicas = p.replicas;
          metric = p.metric;
        }
      } catch (err) {
        const e = err instanceof MetricError ? err : new MetricError('FailedGetResourceMetric', String(err));
        this.event(hpa, 'Warning', e.reason, e.message);
        if (!first) [first, firstSpec] = [e, spec];
        invalid++;
        statuses.push({ type: '' });
      }
    }
    if (invalid >= specs.length || (invalid > 0 && replicas < scale.spec.replicas)) {
      setCondition(hpa, 'ScalingActive', 'False', first!.reason, `the HPA was unable to compute the replica count: ${first!.message}`, now);
      const source = metricName(firstSpec);
      this.event(
        hpa,
        'Warning',
        'FailedComputeMetricsReplicas',
        `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: failed to get ${source} metric value: ${first!.message}`,
      );
      return { replicas: -1, metric: '', statuses };
    }
    setCondition(hpa, 'ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`, now);
    return { replicas, metric, statuses };
  }

  /** The agent's metrics of the pods for a resource (metrics.k8s.io's PodMetrics summed per pod); a pod missing a container's figure is left out. */
  private podMetrics(pods: readonly Pod[], resource: string): PodMetrics {
    const out: PodMetrics = new Map();
    for (const pod of pods) {
      const m = this.ctx.backend.podMetrics(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
      if (!m || m.containers.length === 0) continue;
      const value = m.containers.reduce((sum, c) => sum + (resource === 'cpu' ? c.cpuCores * 1000 : c.memoryBytes * 1000), 0);
      out.set(pod.metadata?.name ?? '', { value: Math.round(value), timestampMs: Date.parse(m.timestamp), windowMs: (parseInt(m.window, 10) || 0) * 1000 });
    }
    return out;
  }

  /** computeReplicasForMetric for a Resource metric (computeStatusForResourceMetricGeneric). */
  private computeReplicasForMetric(
    spec: MetricSpec,
    current: number,
    pods: readonly Pod[],
    now: number,
  ): { replicas: number; metric: string; status: MetricStatus } {
    if (spec.type !== 'Resource' || !spec.resource) {
      throw new MetricError(
        'FailedGetMetric',
        `the ${spec.type} metric source is not supported by this agent (it serves the resource metrics of its pods only)`,
      );
    }
    const name = spec.resource.name;
    const target = spec.resource.target;
    const fail = (what: string, err: unknown) =>
      new MetricError('FailedGetResourceMetric', `failed to get ${name} ${what}: ${err instanceof Error ? err.message : String(err)}`);
    const metrics = this.podMetrics(pods, name);
    if (target.averageValue !== undefined) {
      try {
        if (metrics.size === 0) throw new Error(`unable to get metrics for resource ${name}: no metrics returned from resource metrics API`);
        const r = rawResourceReplicas(current, milli(target.averageValue), name, pods, metrics, now);
        return {
          replicas: r.replicas,
          metric: `${name} resource`,
          status: { type: 'Resource', resource: { name, current: { averageValue: canonicalQuantity(`${r.usage}m`) } } },
        };
      } catch (err) {
        throw fail('usage', err);
      }
    }
    if (target.averageUtilization === undefined) {
      throw new MetricError(
        'FailedGetResourceMetric',
        `invalid resource metric source: neither an average utilization target nor an average value (usage) target was set`,
      );
    }
    try {
      if (metrics.size === 0) throw new Error(`unable to get metrics for resource ${name}: no metrics returned from resource metrics API`);
      const r = resourceReplicas(current, target.averageUtilization, name, pods, metrics, now);
      return {
        replicas: r.replicas,
        metric: `${name} resource utilization (percentage of request)`,
        status: { type: 'Resource', resource: { name, current: { averageUtilization: r.utilization, averageValue: canonicalQuantity(`${r.rawAverage}m`) } } },
      };
    } catch (err) {
      throw fail('utilization', err);
    }
  }
}
