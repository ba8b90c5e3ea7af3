// What the HPA controller does with a metrics' proposal before it scales (pkg/controller/podautoscaler/
// horizontal.go): without a `behavior`, the highest recommendation of the downscale stabilization
// window (300 s) and the scale-up limit max(2×current, 4) (normalizeDesiredReplicas,
// stabilizeRecommendation, convertDesiredReplicasWithRules); with one, the scale-up and scale-down
// stabilization windows and the rate the policies allow over their periods, chosen by selectPolicy
// (normalizeDesiredReplicasWithBehaviors, stabilizeRecommendationWithBehaviors,
// convertDesiredReplicasWithBehaviorRate, calculateScale{Up,Down}Limit…, storeScaleEvent). Each step
// sets the AbleToScale and ScalingLimited conditions with upstream's reasons. Time is the caller's (ms).

import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HPAScalingRules } from '../api/autoscaling.js';

interface Recommendation {
  recommendation: number;
  timestamp: number;
}

interface ScaleEvent {
  replicaChange: number;
  timestamp: number;
  outdated: boolean;
}

const scaleUpLimitFactor = 2.0;
const scaleUpLimitMinimum = 4.0;

/** The time as the API writes it (RFC 3339, seconds). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** setCondition: a condition of the type set, its lastTransitionTime moved only when its status changes. */
export function setCondition(hpa: HorizontalPodAutoscaler, type: string, status: 'True' | 'False', reason: string, message: string, now: number): void {
  const st = (hpa.status ??= { desiredReplicas: 0 });
  const list = (st.conditions ??= []);
  let c = list.find((x) => x.type === type);
  if (!c) {
    c = { type, status: '' } as HorizontalPodAutoscalerCondition;
    list.push(c);
  }
  if (c.status !== status) c.lastTransitionTime = rfc3339(now);
  c.status = status;
  c.reason = reason;
  c.message = message;
}

/** calculateScaleUpLimit. */
export function calculateScaleUpLimit(currentReplicas: number): number {
  return Math.trunc(Math.max(scaleUpLimitFactor * currentReplicas, scaleUpLimitMinimum));
}

/** convertDesiredReplicasWithRules: the replicas within min, max and the scale-up limit, with the ScalingLimited reason. */
export function convertDesiredReplicasWithRules(
  current: number,
  desired: number,
  min: number,
  max: number,
): { replicas: number; reason: string; message: string } {
  const scaleUpLimit = calculateScaleUpLimit(current);
  let maximum: number;
  let reason: string;
  let message: string;
  if (max > scaleUpLimit) {
    maximum = scaleUpLimit;
    reason = 'ScaleUpLimit';
    message = 'the desired replica count is increasing faster than the maximum scale rate';
  } else {
    maximum = max;
    reason = 'TooManyReplicas';
    message = 'the desired replica count is more than the maximum replica count';
  }
  if (desired < min) return { replicas: min, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
  if (desired > maximum) return { replicas: maximum, reason, message };
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

/** getReplicasChangePerPeriod. */
function changeInPeriod(periodSeconds: number, events: readonly ScaleEvent[], now: number): number {
  const cutoff = now - periodSeconds * 1000;
  let replicas = 0;
  for (const e of events) if (e.timestamp > cutoff) replicas += e.replicaChange;
  return replicas;
}

/** calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimitWithRules(current: number, ups: readonly ScaleEvent[], downs: readonly ScaleEvent[], rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const min = rules.selectPolicy === 'Min';
  let result = min ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const periodStart = current - changeInPeriod(p.periodSeconds, ups, now) + changeInPeriod(p.periodSeconds, downs, now);
    const proposed = p.type === 'Pods' ? periodStart + p.value : Math.ceil(periodStart * (1 + p.value / 100));
    result = min ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimitWithRules(
  current: number,
  ups: readonly ScaleEvent[],
  downs: readonly ScaleEvent[],
  rules: HPAScalingRules,
  now: number,
): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const min = rules.selectPolicy === 'Min';
  let result = min ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const periodStart = current - changeInPeriod(p.periodSeconds, ups, now) + changeInPeriod(p.periodSeconds, downs, now);
    const proposed = p.type === 'Pods' ? periodStart - p.value : Math.trunc(periodStart * (1 - p.value / 100));
    result = min ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** The controller's memory of one HPA: its recent recommendations and scale events (kept in memory, as upstream's). */
export class HpaHistory {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleUpEvents = new Map<string, ScaleEvent[]>();
  private readonly scaleDownEvents = new Map<string, ScaleEvent[]>();

  /** @param downscaleStabilisationWindowMs --horizontal-pod-autoscaler-downscale-stabilization (5 min). */
  constructor(readonly downscaleStabilisationWindowMs = 5 * 60_000) {}

  forget(key: string): void {
    this.recommendations.delete(key);
    this.scaleUpEvents.delete(key);
    this.scaleDownEvents.delete(key);
  }

  /** recordInitialRecommendation. */
  recordInitial(key: string, currentReplicas: number, now: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ recommendation: currentReplicas, timestamp: now }]);
  }

  private record(key: string, index: number | undefined, rec: Recommendation): void {
    const list = this.recommendations.get(key) ?? [];
    if (index !== undefined) list[index] = rec;
    else list.push(rec);
    this.recommendations.set(key, list);
  }

  /** stabilizeRecommendation: the highest recommendation within the downscale window, this one recorded. */
  private stabilize(key: string, desired: number, now: number): number {
    let max = desired;
    let old: number | undefined;
    const cutoff = now - this.downscaleStabilisationWindowMs;
    (this.recommendations.get(key) ?? []).forEach((r, i) => {
      if (r.timestamp < cutoff) old = i;
      else if (r.recommendation > max) max = r.recommendation;
    });
    this.record(key, old, { recommendation: desired, timestamp: now });
    return max;
  }

  /** normalizeDesiredReplicas: for an HPA without behavior. */
  normalize(hpa: HorizontalPodAutoscaler, key: string, current: number, desired: number, min: number, now: number): number {
    const stabilized = this.stabilize(key, desired, now);
    if (stabilized !== desired) {
      setCondition(
        hpa,
        'AbleToScale',
        'True',
        'ScaleDownStabilized',
        'recent recommendations were higher than current one, applying the highest recent recommendation',
        now,
      );
    } else {
      setCondition(hpa, 'AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size', now);
    }
    const r = convertDesiredReplicasWithRules(current, stabilized, min, hpa.spec.maxReplicas);
    setCondition(hpa, 'ScalingLimited', r.replicas === stabilized ? 'False' : 'True', r.reason, r.message, now);
    return r.replicas;
  }

  /** stabilizeRecommendationWithBehaviors. */
  private stabilizeWithBehaviors(key: string, current: number, desired: number, up: HPAScalingRules, down: HPAScalingRules, now: number) {
    const upCutoff = now - (up.stabilizationWindowSeconds ?? 0) * 1000;
    const downCutoff = now - (down.stabilizationWindowSeconds ?? 0) * 1000;
    let upRec = desired;
    let downRec = desired;
    let old: number | undefined;
    (this.recommendations.get(key) ?? []).forEach((r, i) => {
      if (r.timestamp > upCutoff) upRec = Math.min(r.recommendation, upRec);
      if (r.timestamp > downCutoff) downRec = Math.max(r.recommendation, downRec);
      if (r.timestamp < upCutoff && r.timestamp < downCutoff) old = i;
    });
    let recommendation = current;
    if (recommendation < upRec) recommendation = upRec;
    if (recommendation > downRec) recommendation = downRec;
    this.record(key, old, { recommendation: desired, timestamp: now });
    return desired >= current
      ? {
          recommendation,
          reason: 'ScaleUpStabilized',
          message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
        }
      : {
          recommendation,
          reason: 'ScaleDownStabilized',
          message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
        };
  }

  /** convertDesiredReplicasWithBehaviorRate. */
  private behaviorRate(key: string, current: number, desired: number, min: number, max: number, up: HPAScalingRules, down: HPAScalingRules, now: number) {
    const ups = this.scaleUpEvents.get(key) ?? [];
    const downs = this.scaleDownEvents.get(key) ?? [];
    if (desired > current) {
      const limit = Math.max(scaleUpLimitWithRules(current, ups, downs, up, now), current);
      const [maximum, reason, message] =
        max > limit
          ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
          : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
      if (desired > maximum) return { replicas: maximum, reason, message };
    } else if (desired < current) {
      const limit = Math.min(scaleDownLimitWithRules(current, ups, downs, down, now), current);
      const [minimum, reason, message] =
        min < limit
          ? [limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate']
          : [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
      if (desired < minimum) return { replicas: minimum, reason, message };
    }
    return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
  }

  /** normalizeDesiredReplicasWithBehaviors (the scale-down window defaulted to the controller's when the behavior leaves it out). */
  normalizeWithBehaviors(hpa: HorizontalPodAutoscaler, key: string, current: number, desired: number, min: number, now: number): number {
    const behavior = hpa.spec.behavior!;
    const up = behavior.scaleUp ?? {};
    const down = { ...behavior.scaleDown };
    down.stabilizationWindowSeconds ??= Math.trunc(this.downscaleStabilisationWindowMs / 1000);
    const s = this.stabilizeWithBehaviors(key, current, desired, up, down, now);
    if (s.recommendation !== desired) setCondition(hpa, 'AbleToScale', 'True', s.reason, s.message, now);
    else setCondition(hpa, 'AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size', now);
    const r = this.behaviorRate(key, current, s.recommendation, min, hpa.spec.maxReplicas, up, down, now);
    setCondition(hpa, 'ScalingLimited', r.replicas === s.recommendation ? 'False' : 'True', r.reason, r.message, now);
    return r.replicas;
  }

  /** storeScaleEvent: kept only for an HPA with behavior, reusing an event older than the longest policy period. */
  storeScaleEvent(hpa: HorizontalPodAutoscaler, key: string, previous: number, next: number, now: number): void {
    const behavior = hpa.spec.behavior;
    if (!behavior) return;
    const upward = next > previous;
    const rules = upward ? behavior.scaleUp : behavior.scaleDown;
    const events = (upward ? this.scaleUpEvents : this.scaleDownEvents).get(key) ?? [];
    const longest = Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds));
    for (const e of events) if (e.timestamp < now - longest * 1000) e.outdated = true;
    const event = { replicaChange: Math.abs(next - previous), timestamp: now, outdated: false };
    const i = events.findIndex((e) => e.outdated);
    if (i >= 0) events[i] = event;
    else events.push(event);
    (upward ? this.scaleUpEvents : this.scaleDownEvents).set(key, events);
  }
}
