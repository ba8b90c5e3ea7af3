// scheduling.k8s.io/v1 PriorityClasses: the built-in system classes (pkg/apis/scheduling
// SystemPriorityClasses), the defaults of scheduling/v1 (SetDefaults_PriorityClass: preemptionPolicy
// PreemptLowerPriority) and validation (pkg/apis/scheduling/validation ValidatePriorityClass and
// ValidatePriorityClassUpdate): a DNS subdomain name, the `system-` prefix reserved for the known
// system classes, a user class's value at most HighestUserDefinablePriority, an immutable value and
// preemptionPolicy.

import type { ObjectMeta } from '../types.js';
import { type FieldError, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { isDNS1123Subdomain } from './names.js';
import { validateAnnotations, validateLabels } from './pod.js';

export type PreemptionPolicy = 'PreemptLowerPriority' | 'Never';

export interface PriorityClass {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  value: number;
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: PreemptionPolicy;
}

/** HighestUserDefinablePriority: what a class not of the system may have at most. */
export const highestUserDefinablePriority = 1_000_000_000;
/** DefaultPriorityWhenNoDefaultClassExists. */
export const defaultPriorityWhenNoDefaultClassExists = 0;
export const systemPriorityClassPrefix = 'system-';

/** The classes the API server creates at start (scheduling's post-start hook), as stored. */
export const systemPriorityClasses: readonly PriorityClass[] = [
  {
    metadata: { name: 'system-node-critical' },
    value: 2_000_001_000,
    description: 'Used for system critical pods that must not be moved from their current node.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
  {
    metadata: { name: 'system-cluster-critical' },
    value: 2_000_000_000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
];

export function isSystemPriorityClass(name: string): boolean {
  return systemPriorityClasses.some((c) => c.metadata?.name === name);
}

const preemptionPolicies = ['PreemptLowerPriority', 'Never'];

/** SetDefaults_PriorityClass. */
export function defaultPriorityClass(pc: PriorityClass): PriorityClass {
  const out = structuredClone(pc);
  out.preemptionPolicy ??= 'PreemptLowerPriority';
  return out;
}

/** IsKnownSystemPriorityClass: undefined when it is one, else why not. */
function unknownSystemClass(name: string, value: number, globalDefault: boolean): string | undefined {
  const spc = systemPriorityClasses.find((c) => c.metadata?.name === name);
  if (!spc) return `${name} is not a known system priority class`;
  if (spc.value !== value) return `value of ${name} PriorityClass must be ${spc.value}`;
  if ((spc.globalDefault ?? false) !== globalDefault) return `globalDefault of ${name} PriorityClass must be ${spc.globalDefault ?? false}`;
  return undefined;
}

/** ValidatePriorityClass. */
export function validatePriorityClass(pc: PriorityClass): FieldError[] {
  const meta = pc.metadata ?? {};
  const path = newPath('metadata');
  const errs: FieldError[] = [];
  if (!meta.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(meta.name).map((m) => invalid(path.child('name'), meta.name, m)));
  if (meta.namespace) errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  const name = meta.name ?? '';
  if (name.startsWith(systemPriorityClassPrefix)) {
    const why = unknownSystemClass(name, pc.value, pc.globalDefault ?? false);
    if (why)
      errs.push(
        forbidden(path.child('name'), `priority class names with '${systemPriorityClassPrefix}' prefix are reserved for system use only. error: ${why}`),
      );
  } else if (pc.value > highestUserDefinablePriority) {
    errs.push(forbidden(newPath('value'), `maximum allowed value of a user defined priority is ${highestUserDefinablePriority}`));
  }
  if (pc.preemptionPolicy !== undefined && !preemptionPolicies.includes(pc.preemptionPolicy)) {
    errs.push(notSupported(newPath('preemptionPolicy'), pc.preemptionPolicy, preemptionPolicies));
  }
  return sortFieldErrors(errs);
}

/** ValidatePriorityClassUpdate: value and preemptionPolicy may not change. */
export function validatePriorityClassUpdate(next: PriorityClass, old: PriorityClass): FieldError[] {
  const errs: FieldError[] = [];
  if (next.value !== old.value) errs.push(forbidden(newPath('value'), 'may not be changed in an update.'));
  if (next.preemptionPolicy !== old.preemptionPolicy) errs.push(invalid(newPath('preemptionPolicy'), next.preemptionPolicy, 'field is immutable'));
  return errs;
}

/** The default class a pod without a class name gets: the global default of least value (getDefaultPriorityClass). */
export function defaultClassOf(classes: readonly PriorityClass[]): PriorityClass | undefined {
  let best: PriorityClass | undefined;
  for (const c of classes) if (c.globalDefault && (best === undefined || c.value < best.value)) best = c;
  return best;
}
