// autoscaling/v2 HorizontalPodAutoscalers as stored, the defaults of autoscaling/v2
// (pkg/apis/autoscaling/v2/defaults.go: minReplicas 1, a cpu Utilization metric of 80 % when none is
// given, a behavior's missing rules filled in), and the conversion to and from autoscaling/v1
// (pkg/apis/autoscaling/v1/conversion.go): targetCPUUtilizationPercentage ⇄ a Resource cpu
// Utilization metric, currentCPUUtilizationPercentage ⇄ its current value, and what v1 cannot say
// (other metrics, their current values, conditions, behavior) kept in the
// autoscaling.alpha.kubernetes.io annotations of the v1 object.

import type { ObjectMeta } from './types.js';

export interface CrossVersionObjectReference {
  kind: string;
  name: string;
  apiVersion?: string;
}

export interface MetricTarget {
  type: string;
  value?: string;
  averageValue?: string;
  averageUtilization?: number;
}

export interface MetricValueStatus {
  value?: string;
  averageValue?: string;
  averageUtilization?: number;
}

export interface MetricSpec {
  type: string;
  resource?: { name: string; target: MetricTarget };
  containerResource?: { name: string; container: string; target: MetricTarget };
  pods?: { metric: { name: string; selector?: unknown }; target: MetricTarget };
  object?: { describedObject: CrossVersionObjectReference; metric: { name: string; selector?: unknown }; target: MetricTarget };
  external?: { metric: { name: string; selector?: unknown }; target: MetricTarget };
}

export interface MetricStatus {
  type: string;
  resource?: { name: string; current: MetricValueStatus };
  containerResource?: { name: string; container: string; current: MetricValueStatus };
  pods?: { metric: { name: string }; current: MetricValueStatus };
  object?: { describedObject: CrossVersionObjectReference; metric: { name: string }; current: MetricValueStatus };
  external?: { metric: { name: string }; current: MetricValueStatus };
}

export interface HPAScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface HPAScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: HPAScalingPolicy[];
}

export interface HorizontalPodAutoscalerBehavior {
  scaleUp?: HPAScalingRules;
  scaleDown?: HPAScalingRules;
}

export interface HorizontalPodAutoscalerCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface HorizontalPodAutoscalerStatus {
  observedGeneration?: number;
  lastScaleTime?: string;
  currentReplicas?: number;
  desiredReplicas: number;
  currentMetrics?: MetricStatus[];
  conditions?: HorizontalPodAutoscalerCondition[];
}

export interface HorizontalPodAutoscaler {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: {
    scaleTargetRef: CrossVersionObjectReference;
    minReplicas?: number;
    maxReplicas: number;
    metrics?: MetricSpec[];
    behavior?: HorizontalPodAutoscalerBehavior;
  };
  status?: HorizontalPodAutoscalerStatus;
}

/** autoscaling/v1's HorizontalPodAutoscaler. */
export interface HorizontalPodAutoscalerV1 {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { scaleTargetRef: CrossVersionObjectReference; minReplicas?: number; maxReplicas: number; targetCPUUtilizationPercentage?: number };
  status?: { observedGeneration?: number; lastScaleTime?: string; currentReplicas: number; desiredReplicas: number; currentCPUUtilizationPercentage?: number };
}

/** DefaultCPUUtilization. */
export const defaultCPUUtilization = 80;

const scaleUpDefaults = (): HPAScalingRules => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const scaleDownDefaults = (): HPAScalingRules => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** copyHPAScalingRules: what the rules leave out, from the defaults. */
function withRuleDefaults(given: HPAScalingRules | undefined, defaults: HPAScalingRules): HPAScalingRules {
  if (!given) return defaults;
  const out: HPAScalingRules = { ...defaults, ...given };
  if (given.policies === undefined) out.policies = defaults.policies;
  if (given.stabilizationWindowSeconds === undefined) {
    if (defaults.stabilizationWindowSeconds === undefined) delete out.stabilizationWindowSeconds;
    else out.stabilizationWindowSeconds = defaults.stabilizationWindowSeconds;
  }
  return out;
}

/** SetDefaults_HorizontalPodAutoscaler of autoscaling/v2. */
export function defaultHorizontalPodAutoscaler(hpa: HorizontalPodAutoscaler): HorizontalPodAutoscaler {
  const out = structuredClone(hpa);
  const spec = (out.spec ??= {} as HorizontalPodAutoscaler['spec']);
  spec.minReplicas ??= 1;
  if (!spec.metrics || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: defaultCPUUtilization } } }];
  }
  if (spec.behavior) {
    spec.behavior = {
      scaleUp: withRuleDefaults(spec.behavior.scaleUp, scaleUpDefaults()),
      scaleDown: withRuleDefaults(spec.behavior.scaleDown, scaleDownDefaults()),
    };
  }
  return out;
}

// ---- autoscaling/v1 ⇄ v2 ----

export const otherMetricsAnnotation = 'autoscaling.alpha.kubernetes.io/metrics';
export const currentMetricsAnnotation = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const conditionsAnnotation = 'autoscaling.alpha.kubernetes.io/conditions';
export const behaviorAnnotation = 'autoscaling.alpha.kubernetes.io/behavior';
const v1Annotations = [otherMetricsAnnotation, currentMetricsAnnotation, conditionsAnnotation, behaviorAnnotation];

const isCpuUtilization = (m: MetricSpec) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target?.type === 'Utilization';

/** A v2 metric as autoscaling/v1's MetricSpec writes it in the annotation (the v2beta1 shape: targetAverageUtilization…). */
function metricSpecToV1(m: MetricSpec): Record<string, unknown> {
  const target = (t: MetricTarget | undefined) => ({
    ...(t?.averageUtilization !== undefined ? { targetAverageUtilization: t.averageUtilization } : {}),
    ...(t?.averageValue !== undefined ? { targetAverageValue: t.averageValue } : {}),
    ...(t?.value !== undefined ? { targetValue: t.value } : {}),
  });
  switch (m.type) {
    case 'Resource':
      return { type: m.type, resource: { name: m.resource?.name, ...target(m.resource?.target) } };
    case 'ContainerResource':
      return {
        type: m.type,
        containerResource: { name: m.containerResource?.name, container: m.containerResource?.container, ...target(m.containerResource?.target) },
      };
    case 'Pods':
      return {
        type: m.type,
        pods: { metricName: m.pods?.metric.name, ...(m.pods?.metric.selector ? { selector: m.pods.metric.selector } : {}), ...target(m.pods?.target) },
      };
    case 'Object':
      return {
        type: m.type,
        object: {
          target: m.object?.describedObject,
          metricName: m.object?.metric.name,
          ...(m.object?.metric.selector ? { selector: m.object.metric.selector } : {}),
          ...target(m.object?.target),
        },
      };
    case 'External':
      return {
        type: m.type,
        external: {
          metricName: m.external?.metric.name,
          ...(m.external?.metric.selector ? { metricSelector: m.external.metric.selector } : {}),
          ...(m.external?.target.value !== undefined ? { targetValue: m.external.target.value } : {}),
          ...(m.external?.target.averageValue !== undefined ? { targetAverageValue: m.external.target.averageValue } : {}),
        },
      };
    default:
      return { type: m.type };
  }
}

/** One source of autoscaling/v1's metric entries in the annotations, as JSON (the v2beta1 shape). */
interface V1Source {
  name: string;
  container: string;
  metricName: string;
  selector?: unknown;
  metricSelector?: unknown;
  target: CrossVersionObjectReference;
  targetAverageUtilization?: number;
  targetAverageValue?: string;
  targetValue?: string;
  currentAverageUtilization?: number;
  currentAverageValue?: string;
  currentValue?: string;
}

interface V1Metric {
  type: string;
  resource?: V1Source;
  containerResource?: V1Source;
  pods?: V1Source;
  object?: V1Source;
  external?: V1Source;
}

/** The inverse of metricSpecToV1. */
function metricSpecFromV1(m: V1Metric): MetricSpec {
  const target = (t: V1Source | undefined): MetricTarget => {
    if (t?.targetAverageUtilization !== undefined) return { type: 'Utilization', averageUtilization: t.targetAverageUtilization };
    if (t?.targetAverageValue !== undefined) return { type: 'AverageValue', averageValue: t.targetAverageValue };
    return { type: 'Value', ...(t?.targetValue !== undefined ? { value: t.targetValue } : {}) };
  };
  const sel = (s: unknown) => (s ? { selector: s } : {});
  switch (m.type) {
    case 'Resource':
      return { type: m.type, resource: { name: m.resource!.name, target: target(m.resource) } };
    case 'ContainerResource':
      return {
        type: m.type,
        containerResource: { name: m.containerResource!.name, container: m.containerResource!.container, target: target(m.containerResource) },
      };
    case 'Pods':
      return { type: m.type, pods: { metric: { name: m.pods!.metricName, ...sel(m.pods!.selector) }, target: target(m.pods) } };
    case 'Object':
      return {
        type: m.type,
        object: { describedObject: m.object!.target, metric: { name: m.object!.metricName, ...sel(m.object!.selector) }, target: target(m.object) },
      };
    case 'External':
      return { type: m.type, external: { metric: { name: m.external!.metricName, ...sel(m.external!.metricSelector) }, target: target(m.external) } };
    default:
      return { type: m.type };
  }
}

/** A v2 metric status as autoscaling/v1's MetricStatus writes it (currentAverageUtilization…). */
function metricStatusToV1(s: MetricStatus): Record<string, unknown> {
  const current = (c: MetricValueStatus | undefined) => ({
    ...(c?.averageUtilization !== undefined ? { currentAverageUtilization: c.averageUtilization } : {}),
    ...(c?.averageValue !== undefined ? { currentAverageValue: c.averageValue } : {}),
    ...(c?.value !== undefined ? { currentValue: c.value } : {}),
  });
  if (s.type === 'Resource') return { type: s.type, resource: { name: s.resource?.name, ...current(s.resource?.current) } };
  if (s.type === 'ContainerResource')
    return {
      type: s.type,
      containerResource: { name: s.containerResource?.name, container: s.containerResource?.container, ...current(s.containerResource?.current) },
    };
  if (s.type === 'Pods') return { type: s.type, pods: { metricName: s.pods?.metric.name, ...current(s.pods?.current) } };
  if (s.type === 'Object')
    return { type: s.type, object: { target: s.object?.describedObject, metricName: s.object?.metric.name, ...current(s.object?.current) } };
  if (s.type === 'External') return { type: s.type, external: { metricName: s.external?.metric.name, ...current(s.external?.current) } };
  return { type: s.type };
}

function metricStatusFromV1(s: V1Metric): MetricStatus {
  const current = (c: V1Source | undefined): MetricValueStatus => ({
    ...(c?.currentAverageUtilization !== undefined ? { averageUtilization: c.currentAverageUtilization } : {}),
    ...(c?.currentAverageValue !== undefined ? { averageValue: c.currentAverageValue } : {}),
    ...(c?.currentValue !== undefined ? { value: c.currentValue } : {}),
  });
  if (s.type === 'Resource') return { type: s.type, resource: { name: s.resource!.name, current: current(s.resource) } };
  if (s.type === 'ContainerResource')
    return {
      type: s.type,
      containerResource: { name: s.containerResource!.name, container: s.containerResource!.container, current: current(s.containerResource) },
    };
  if (s.type === 'Pods') return { type: s.type, pods: { metric: { name: s.pods!.metricName }, current: current(s.pods) } };
  if (s.type === 'Object')
    return { type: s.type, object: { describedObject: s.object!.target, metric: { name: s.object!.metricName }, current: current(s.object) } };
  if (s.type === 'External') return { type: s.type, external: { metric: { name: s.external!.metricName }, current: current(s.external) } };
  return { type: s.type };
}

/** The stored (v2) object as autoscaling/v1 serves it. */
export function hpaToV1(hpa: HorizontalPodAutoscaler): HorizontalPodAutoscalerV1 {
  const annotations: Record<string, string> = { ...(hpa.metadata?.annotations ?? {}) };
  const metrics = hpa.spec?.metrics ?? [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => m !== cpu);
  if (others.length > 0) annotations[otherMetricsAnnotation] = JSON.stringify(others.map(metricSpecToV1));
  const status = hpa.status;
  if (status?.currentMetrics?.length) annotations[currentMetricsAnnotation] = JSON.stringify(status.currentMetrics.map(metricStatusToV1));
  if (status?.conditions?.length) annotations[conditionsAnnotation] = JSON.stringify(status.conditions);
  if (hpa.spec?.behavior) annotations[behaviorAnnotation] = JSON.stringify(hpa.spec.behavior);
  const cpuStatus = status?.currentMetrics?.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu')?.resource?.current.averageUtilization;
  const metadata = { ...hpa.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: {
      scaleTargetRef: hpa.spec?.scaleTargetRef,
      ...(hpa.spec?.minReplicas !== undefined ? { minReplicas: hpa.spec.minReplicas } : {}),
      maxReplicas: hpa.spec?.maxReplicas,
      ...(cpu?.resource?.target.averageUtilization !== undefined ? { targetCPUUtilizationPercentage: cpu.resource.target.averageUtilization } : {}),
    },
    status: {
      ...(status?.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status?.lastScaleTime ? { lastScaleTime: status.lastScaleTime } : {}),
      currentReplicas: status?.currentReplicas ?? 0,
      desiredReplicas: status?.desiredReplicas ?? 0,
      ...(cpuStatus !== undefined ? { currentCPUUtilizationPercentage: cpuStatus } : {}),
    },
  } as HorizontalPodAutoscalerV1;
}

function parseAnnotation<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The entries of an annotation converted one by one; one that is not an object of its shape is left out. */
function convertEach<T, U>(items: T[] | undefined, convert: (item: T) => U): U[] | undefined {
  if (!Array.isArray(items)) return undefined;
  return items.flatMap((item) => {
    try {
      return [convert(item)];
    } catch {
      return [];
    }
  });
}

/** An autoscaling/v1 object as stored (v2); its annotations give back what v1 cannot say. */
export function hpaFromV1(v1: HorizontalPodAutoscalerV1): HorizontalPodAutoscaler {
  const annotations = { ...(v1.metadata?.annotations ?? {}) };
  const others = parseAnnotation<V1Metric[]>(annotations[otherMetricsAnnotation]) ?? [];
  const current = parseAnnotation<V1Metric[]>(annotations[currentMetricsAnnotation]);
  const conditions = parseAnnotation<HorizontalPodAutoscalerCondition[]>(annotations[conditionsAnnotation]);
  const behavior = parseAnnotation<HorizontalPodAutoscalerBehavior>(annotations[behaviorAnnotation]);
  for (const k of v1Annotations) delete annotations[k];
  const metadata = { ...v1.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const metrics: MetricSpec[] = [];
  const target = v1.spec?.targetCPUUtilizationPercentage;
  if (target !== undefined && target !== null)
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } });
  metrics.push(...(convertEach(others, metricSpecFromV1) ?? []));
  const s = v1.status;
  const out: HorizontalPodAutoscaler = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: {
      scaleTargetRef: v1.spec?.scaleTargetRef as CrossVersionObjectReference,
      ...(v1.spec?.minReplicas !== undefined ? { minReplicas: v1.spec.minReplicas } : {}),
      maxReplicas: v1.spec?.maxReplicas as number,
      ...(metrics.length ? { metrics } : {}),
      ...(behavior ? { behavior } : {}),
    },
  };
  if (s) {
    const currentMetrics = current
      ? convertEach(current, metricStatusFromV1)
      : s.currentCPUUtilizationPercentage !== undefined
        ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: s.currentCPUUtilizationPercentage } } }]
        : undefined;
    out.status = {
      ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
      ...(s.lastScaleTime ? { lastScaleTime: s.lastScaleTime } : {}),
      currentReplicas: s.currentReplicas ?? 0,
      desiredReplicas: s.desiredReplicas ?? 0,
      ...(currentMetrics ? { currentMetrics } : {}),
      ...(conditions ? { conditions } : {}),
    };
  }
  return out;
}
