// What every workload's validation shares (pkg/apis/apps/validation and pkg/apis/batch/validation):
// the label selector (ValidateLabelSelector), the pod template against it (labels must match,
// the template's pod spec, its restart policy), non-negative counts, Go's rendering of a label map.

import type { LabelSelector, PodTemplateSpec } from '../types.js';
import type { Pod } from '../types.js';
import { type FieldError, type FieldPath, invalid, notSupported, required } from '../field-errors.js';
import { selectorIsEmpty, selectorMatches } from '../label-selector.js';
import { isQualifiedName } from './names.js';
import { validateAnnotations, validateLabels, validatePodSpec } from './pod.js';

export const nonNegative = 'must be greater than or equal to 0';

/** A label map as Go's %v prints it in a field error (`map[string]string{"app":"web"}`). */
export function goStringMap(m: Readonly<Record<string, string>> | undefined): { toString(): string } {
  const entries = Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const text = `map[string]string{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;
  return { toString: () => text };
}

export function validateNonNegative(value: number | undefined, path: FieldPath): FieldError[] {
  return value !== undefined && value !== null && value < 0 ? [invalid(path, value, nonNegative)] : [];
}

export function validateLabelSelector(selector: LabelSelector | undefined, path: FieldPath): FieldError[] {
  if (!selector) return [];
  const errs = validateLabels(selector.matchLabels, path.child('matchLabels'));
  (selector.matchExpressions ?? []).forEach((e, i) => {
    const p = path.child('matchExpressions').index(i);
    errs.push(...isQualifiedName(e.key ?? '').map((m) => invalid(p.child('key'), e.key, m)));
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values?.length) errs.push(required(p.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (e.values?.length)
          errs.push({ type: 'Forbidden', field: p.child('values').toString(), detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" });
        break;
      default:
        errs.push(invalid(p.child('operator'), e.operator, 'not a valid selector operator'));
    }
  });
  return errs;
}

export interface TemplateRules {
  /** The restart policies allowed (Always for apps, OnFailure/Never for Jobs). */
  restartPolicies: readonly string[];
  /** The kind's word in "empty selector is invalid for <kind>". */
  kindWord: string;
}

/** spec.selector and spec.template of a workload (ValidateDeploymentSpec's selector and template part). */
export function validateSelectorAndTemplate(
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  path: FieldPath,
  rules: TemplateRules,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!selector) errs.push(required(path.child('selector'), ''));
  else {
    errs.push(...validateLabelSelector(selector, path.child('selector')));
    if (selectorIsEmpty(selector)) errs.push(invalid(path.child('selector'), selector, `empty selector is invalid for ${rules.kindWord}`));
  }
  errs.push(...validatePodTemplate(template, path.child('template'), rules));
  if (selector && template && !selectorIsEmpty(selector) && !selectorMatches(selector, template.metadata?.labels)) {
    errs.push(invalid(path.child('template', 'metadata', 'labels'), goStringMap(template.metadata?.labels), '`selector` does not match template `labels`'));
  }
  return errs;
}

/** ValidatePodTemplateSpec plus the kind's restart policy rule. */
export function validatePodTemplate(template: PodTemplateSpec | undefined, path: FieldPath, rules: Pick<TemplateRules, 'restartPolicies'>): FieldError[] {
  if (!template) return [required(path, '')];
  const errs: FieldError[] = [];
  errs.push(...validateLabels(template.metadata?.labels, path.child('metadata', 'labels')));
  errs.push(...validateAnnotations(template.metadata?.annotations, path.child('metadata', 'annotations')));
  errs.push(...validatePodSpec(template.spec as Pod['spec'], path.child('spec')));
  const restart = template.spec?.restartPolicy ?? '';
  if (restart && !rules.restartPolicies.includes(restart)) errs.push(notSupported(path.child('spec', 'restartPolicy'), restart, rules.restartPolicies));
  return errs;
}

/** An int-or-percent field (maxSurge, maxUnavailable): non-negative, a percent at most 100%. */
export function validateIntOrPercent(value: number | string | undefined, path: FieldPath): FieldError[] {
  if (value === undefined) return [];
  if (typeof value === 'number') return validateNonNegative(value, path);
  const m = /^(\d+)%$/.exec(value);
  if (!m)
    return [
      invalid(
        path,
        value,
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      ),
    ];
  if (Number(m[1]) > 100) return [invalid(path, value, 'must not be greater than 100%')];
  return [];
}

/** The integer an int-or-percent stands for (0 for a malformed one). */
export function intOrPercentValue(value: number | string | undefined): { value: number; percent: boolean } {
  if (typeof value === 'number') return { value, percent: false };
  const m = /^(\d+)%$/.exec(value ?? '');
  return m ? { value: Number(m[1]), percent: true } : { value: 0, percent: false };
}
