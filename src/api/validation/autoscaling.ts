// Validation of HorizontalPodAutoscalers (pkg/apis/autoscaling/validation ValidateHorizontalPodAutoscaler),
// on the stored (autoscaling/v2) form, which is the internal one's: metadata, min and max replicas,
// the scale target reference, then — when that is sound — the metrics, then the behavior. An
// autoscaling/v1 object is judged after its conversion, as the API server judges the internal object.

import type { HorizontalPodAutoscaler, HPAScalingRules, MetricSpec, MetricTarget } from '../autoscaling.js';
import { parseQuantity } from '../quantity.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { validateObjectMeta } from './pod.js';

/** MaxPeriodSeconds and MaxStabilizationWindowSeconds. */
const maxPeriodSeconds = 1800;
const maxStabilizationWindowSeconds = 3600;
const metricSourceTypes = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const selectPolicies = ['Disabled', 'Max', 'Min'];
const policyTypes = ['Percent', 'Pods'];

/** IsValidPathSegmentName. */
function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  if (name.includes('/')) errs.push("may not contain '/'");
  if (name.includes('%')) errs.push("may not contain '%'");
  return errs;
}

function validateReference(ref: HorizontalPodAutoscaler['spec']['scaleTargetRef'] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['kind', 'name'] as const) {
    const v = ref?.[key];
    if (!v) errs.push(required(path.child(key), ''));
    else errs.push(...pathSegmentErrors(v).map((m) => invalid(path.child(key), v, m)));
  }
  return errs;
}

function positive(q: string | undefined): boolean {
  try {
    return q !== undefined && parseQuantity(q).milliValue() > 0n;
  } catch {
    return false;
  }
}

function validateMetricTarget(t: MetricTarget | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = t?.type ?? '';
  if (!type) errs.push(required(path.child('type'), 'must specify a metric target type'));
  if (!['Utilization', 'Value', 'AverageValue'].includes(type))
    errs.push(invalid(path.child('type'), type, 'must be either Utilization, Value, or AverageValue'));
  if (t?.value !== undefined && !positive(t.value)) errs.push(invalid(path.child('value'), t.value, 'must be positive'));
  if (t?.averageValue !== undefined && !positive(t.averageValue)) errs.push(invalid(path.child('averageValue'), t.averageValue, 'must be positive'));
  if (t?.averageUtilization !== undefined && t.averageUtilization < 1)
    errs.push(invalid(path.child('averageUtilization'), t.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateResourceSource(src: { name?: string; target?: MetricTarget }, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!src.name) errs.push(required(path.child('name'), 'must specify a resource name'));
  errs.push(...validateMetricTarget(src.target, path.child('target')));
  if (src.target?.averageUtilization === undefined && src.target?.averageValue === undefined)
    errs.push(required(path.child('target', 'averageUtilization'), 'must set either a target raw value or a target utilization'));
  if (src.target?.averageUtilization !== undefined && src.target?.averageValue !== undefined)
    errs.push(forbidden(path.child('target', 'averageValue'), 'may not set both a target raw value and a target utilization'));
  return errs;
}

const sourceField: Record<string, keyof MetricSpec> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  External: 'external',
  ContainerResource: 'containerResource',
};

function validateMetricSpec(m: MetricSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!m.type) errs.push(required(path.child('type'), 'must specify a metric source type'));
  if (!metricSourceTypes.includes(m.type)) errs.push(notSupported(path.child('type'), m.type ?? '', metricSourceTypes));
  const present = (['object', 'pods', 'resource', 'external', 'containerResource'] as const).filter((k) => m[k] !== undefined);
  if (m.resource && present.length === 1) errs.push(...validateResourceSource(m.resource, path.child('resource')));
  if (m.containerResource && present.length === 1) {
    errs.push(...validateResourceSource(m.containerResource, path.child('containerResource')));
    if (!m.containerResource.container) errs.push(required(path.child('containerResource', 'container'), 'must specify a container'));
  }
  for (const k of ['object', 'pods', 'external'] as const) {
    const src = m[k] as { metric?: { name?: string }; target?: MetricTarget } | undefined;
    if (src && present.length === 1) {
      if (!src.metric?.name) errs.push(required(path.child(k, 'metric', 'name'), 'must specify a metric name'));
      errs.push(...validateMetricTarget(src.target, path.child(k, 'target')));
    }
  }
  const expected = sourceField[m.type];
  if (expected && m[expected] === undefined) errs.push(required(path.child(expected), 'must populate information for the given metric source'));
  if (present.length !== 1)
    for (const k of present.filter((k) => k !== expected)) errs.push(forbidden(path.child(k), 'must populate the given metric source only'));
  return errs;
}

function validateScalingRules(rules: HPAScalingRules | undefined, path: FieldPath): FieldError[] {
  if (!rules) return [];
  const errs: FieldError[] = [];
  const w = rules.stabilizationWindowSeconds;
  if (w !== undefined && w < 0) errs.push(invalid(path.child('stabilizationWindowSeconds'), w, 'must be greater than or equal to zero'));
  if (w !== undefined && w > maxStabilizationWindowSeconds)
    errs.push(invalid(path.child('stabilizationWindowSeconds'), w, `must be less than or equal to ${maxStabilizationWindowSeconds}`));
  if (rules.selectPolicy !== undefined && !selectPolicies.includes(rules.selectPolicy))
    errs.push(notSupported(path.child('selectPolicy'), rules.selectPolicy, selectPolicies));
  const policies = path.child('policies');
  if (!rules.policies || rules.policies.length === 0) errs.push(required(policies, 'must specify at least one Policy'));
  (rules.policies ?? []).forEach((p, i) => {
    const at = policies.index(i);
    if (!policyTypes.includes(p.type)) errs.push(notSupported(at.child('type'), p.type, policyTypes));
    if (!(p.value > 0)) errs.push(invalid(at.child('value'), p.value, 'must be greater than zero'));
    if (!(p.periodSeconds > 0)) errs.push(invalid(at.child('periodSeconds'), p.periodSeconds, 'must be greater than zero'));
    if (p.periodSeconds > maxPeriodSeconds) errs.push(invalid(at.child('periodSeconds'), p.periodSeconds, `must be less than or equal to ${maxPeriodSeconds}`));
  });
  return errs;
}

/** validateHorizontalPodAutoscalerSpec, with MinReplicasLowerBound 1 (HPAScaleToZero is off). */
function validateSpec(spec: HorizontalPodAutoscaler['spec'] | undefined): FieldError[] {
  const path = newPath('spec');
  const errs: FieldError[] = [];
  const min = spec?.minReplicas;
  const max = spec?.maxReplicas ?? 0;
  if (min !== undefined && min < 1) errs.push(invalid(path.child('minReplicas'), min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(invalid(path.child('maxReplicas'), max, 'must be greater than 0'));
  if (min !== undefined && max < min) errs.push(invalid(path.child('maxReplicas'), max, 'must be greater than or equal to `minReplicas`'));
  const refErrs = validateReference(spec?.scaleTargetRef, path.child('scaleTargetRef'));
  if (refErrs.length) return [...errs, ...refErrs];
  const metricErrs = (spec?.metrics ?? []).flatMap((m, i) => validateMetricSpec(m, path.child('metrics').index(i)));
  if (metricErrs.length) return [...errs, ...metricErrs];
  return [
    ...errs,
    ...validateScalingRules(spec?.behavior?.scaleUp, path.child('behavior', 'scaleUp')),
    ...validateScalingRules(spec?.behavior?.scaleDown, path.child('behavior', 'scaleDown')),
  ];
}

export function validateHorizontalPodAutoscaler(hpa: HorizontalPodAutoscaler): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(hpa.metadata), ...validateSpec(hpa.spec)]);
}
