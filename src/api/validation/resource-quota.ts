// Validation of v1 ResourceQuotas (pkg/apis/core/validation ValidateResourceQuota): the names of the
// resources in spec.hard (standard quota resources or fully qualified, such as count/deployments.apps),
// non-negative quantities (integers for object counts), the scopes (known, valid for every resource
// limited, no conflicting pair) and the scope selector; status.hard and status.used alike.

import type { ResourceQuota, ResourceQuotaSpec } from 'kubernetes-types/core/v1.js';
import { type FieldError, type FieldPath, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { parseQuantity, QuantityError } from '../quantity.js';
import { isQualifiedName } from './names.js';
import { validateObjectMeta } from './pod.js';

export type { ResourceQuota, ResourceQuotaSpec };

/** helper.IsStandardQuotaResourceName's names. */
export const standardQuotaResources = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
]);

const standardResourceNames = new Set([...standardQuotaResources, 'storage']);

/** Resources whose quantities are whole numbers (helper.IsIntegerResourceName, with object counts). */
const integerResources = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

export const quotaScopes = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'] as const;

/** The resources a scope may limit (helper.IsResourceQuotaScopeValidForResource). */
const podObjectCountResources = new Set(['pods', 'count/pods']);
const podComputeResources = new Set([
  'cpu',
  'memory',
  'requests.cpu',
  'requests.memory',
  'limits.cpu',
  'limits.memory',
  'ephemeral-storage',
  'requests.ephemeral-storage',
  'limits.ephemeral-storage',
]);

function scopeValidForResource(scope: string, resource: string): boolean {
  if (scope === 'BestEffort') return podObjectCountResources.has(resource);
  return (
    podObjectCountResources.has(resource) ||
    podComputeResources.has(resource) ||
    resource.startsWith('hugepages-') ||
    resource.startsWith('requests.hugepages-')
  );
}

const isHugePages = (n: string) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || n.startsWith('limits.hugepages-');

/** ValidateResourceQuotaResourceName. */
function validateQuotaResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errs.length) return errs;
  if (!name.includes('/')) {
    if (!standardResourceNames.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource type or fully qualified'));
    if (!standardQuotaResources.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource for quota'));
  }
  return errs;
}

function validateQuantity(name: string, raw: unknown, path: FieldPath): FieldError[] {
  let milli: bigint;
  try {
    milli = parseQuantity(String(raw)).milliValue();
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    return [invalid(path, String(raw), err.message)];
  }
  const errs: FieldError[] = [];
  if (milli < 0n) errs.push(invalid(path, String(raw), 'must be greater than or equal to 0'));
  if ((integerResources.has(name) || name.startsWith('count/')) && milli % 1000n !== 0n) errs.push(invalid(path, String(raw), 'must be an integer'));
  return errs;
}

function validateList(list: Record<string, unknown> | undefined, path: FieldPath): FieldError[] {
  return Object.entries(list ?? {}).flatMap(([k, v]) => [...validateQuotaResourceName(k, path.key(k)), ...validateQuantity(k, v, path.key(k))]);
}

/** The scopes as Go's %#v prints []core.ResourceQuotaScope in a field error. */
function goScopes(scopes: readonly string[]): { toString(): string } {
  const text = `[]core.ResourceQuotaScope{${scopes.map((s) => JSON.stringify(s)).join(', ')}}`;
  return { toString: () => text };
}

function validateScopes(spec: ResourceQuotaSpec, path: FieldPath): FieldError[] {
  const scopes = spec.scopes ?? [];
  if (scopes.length === 0) return [];
  const errs: FieldError[] = [];
  const p = path.child('scopes');
  const hard = Object.keys(spec.hard ?? {}).sort();
  for (const scope of scopes) {
    if (!(quotaScopes as readonly string[]).includes(scope)) errs.push(invalid(p, goScopes(scopes), 'unsupported scope'));
    for (const k of hard) {
      if (standardQuotaResources.has(k) && !scopeValidForResource(scope, k)) errs.push(invalid(p, goScopes(scopes), 'unsupported scope applied to resource'));
    }
  }
  const set = new Set(scopes);
  if (set.has('BestEffort') && set.has('NotBestEffort')) errs.push(invalid(p, goScopes(scopes), 'conflicting scopes'));
  if (set.has('Terminating') && set.has('NotTerminating')) errs.push(invalid(p, goScopes(scopes), 'conflicting scopes'));
  return errs;
}

const selectorOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

function validateScopeSelector(spec: ResourceQuotaSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const p = path.child('scopeSelector');
  (spec.scopeSelector?.matchExpressions ?? []).forEach((e, i) => {
    const ep = p.child('matchExpressions').index(i);
    if (!(quotaScopes as readonly string[]).includes(e.scopeName)) errs.push(invalid(ep.child('scopeName'), e.scopeName, 'unsupported scope'));
    if (!selectorOperators.includes(e.operator)) errs.push(notSupported(ep.child('operator'), e.operator, selectorOperators));
    const hasValues = (e.values ?? []).length > 0;
    if ((e.operator === 'In' || e.operator === 'NotIn') && !hasValues)
      errs.push(required(ep.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && hasValues)
      errs.push(invalid(ep.child('values'), e.values, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  });
  return errs;
}

export function validateResourceQuotaSpec(spec: ResourceQuotaSpec | undefined): FieldError[] {
  const s = spec ?? {};
  const path = newPath('spec');
  return [...validateList(s.hard as Record<string, unknown>, path.child('hard')), ...validateScopes(s, path), ...validateScopeSelector(s, path)];
}

export function validateResourceQuota(q: ResourceQuota): FieldError[] {
  const status = newPath('status');
  return sortFieldErrors([
    ...validateObjectMeta(q.metadata),
    ...validateResourceQuotaSpec(q.spec),
    ...validateList(q.status?.hard as Record<string, unknown>, status.child('hard')),
    ...validateList(q.status?.used as Record<string, unknown>, status.child('used')),
  ]);
}
