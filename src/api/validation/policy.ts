// Validation of policy/v1 PodDisruptionBudgets (pkg/apis/policy/validation ValidatePodDisruptionBudget):
// metadata, minAvailable and maxUnavailable (exclusive; each a non-negative integer or a percent of at
// most 100%), the label selector and unhealthyPodEvictionPolicy.

import type { PodDisruptionBudget, PodDisruptionBudgetSpec } from 'kubernetes-types/policy/v1.js';
import { type FieldError, invalid, newPath, notSupported, sortFieldErrors } from '../field-errors.js';
import { validateObjectMeta } from './pod.js';
import { validateIntOrPercent, validateLabelSelector } from './workload.js';

export type { PodDisruptionBudget, PodDisruptionBudgetSpec };

const unhealthyPodEvictionPolicies = ['AlwaysAllow', 'IfHealthyBudget'];

/** A pointer field as Go's %#v prints it inside a struct. */
function goPointer(type: string, value: unknown): string {
  return value === undefined || value === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`;
}

/** The spec as Go's %#v prints policy.PodDisruptionBudgetSpec in a field error. */
function goSpec(s: PodDisruptionBudgetSpec): { toString(): string } {
  const text =
    `policy.PodDisruptionBudgetSpec{MinAvailable:${goPointer('intstr.IntOrString', s.minAvailable)}, ` +
    `Selector:${goPointer('v1.LabelSelector', s.selector)}, MaxUnavailable:${goPointer('intstr.IntOrString', s.maxUnavailable)}, ` +
    `UnhealthyPodEvictionPolicy:${goPointer('policy.UnhealthyPodEvictionPolicyType', s.unhealthyPodEvictionPolicy)}}`;
  return { toString: () => text };
}

/** ValidatePodDisruptionBudgetSpec. */
export function validatePodDisruptionBudgetSpec(s: PodDisruptionBudgetSpec | undefined): FieldError[] {
  const spec = newPath('spec');
  const errs: FieldError[] = [];
  const v = s ?? {};
  if (v.minAvailable !== undefined && v.maxUnavailable !== undefined) {
    errs.push(invalid(spec, goSpec(v), 'minAvailable and maxUnavailable cannot be both set'));
  }
  errs.push(...validateIntOrPercent(v.minAvailable, spec.child('minAvailable')));
  errs.push(...validateIntOrPercent(v.maxUnavailable, spec.child('maxUnavailable')));
  errs.push(...validateLabelSelector(v.selector, spec.child('selector')));
  if (v.unhealthyPodEvictionPolicy !== undefined && !unhealthyPodEvictionPolicies.includes(v.unhealthyPodEvictionPolicy)) {
    errs.push(notSupported(spec.child('unhealthyPodEvictionPolicy'), v.unhealthyPodEvictionPolicy, unhealthyPodEvictionPolicies));
  }
  return errs;
}

export function validatePodDisruptionBudget(pdb: PodDisruptionBudget): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(pdb.metadata), ...validatePodDisruptionBudgetSpec(pdb.spec)]);
}
