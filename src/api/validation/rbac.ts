// Validation of rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and ClusterRoleBindings
// (pkg/apis/rbac/validation ValidateRole, ValidateClusterRole, ValidateRoleBinding,
// ValidateClusterRoleBinding and their updates): names are path segments (minimalNameRequirements),
// rules name verbs and either resources or non-resource URLs, bindings a Role or ClusterRole of the
// group and subjects of a known kind; a binding's roleRef never changes.

import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject } from 'kubernetes-types/rbac/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from './names.js';
import { validateAnnotations, validateLabels } from './pod.js';

export type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject };

export const rbacGroup = 'rbac.authorization.k8s.io';

/** path.IsValidPathSegmentName: not `.` or `..`, without `/` or `%`. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const c of ['/', '%']) if (name.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
}

/** ValidateObjectMeta with the path-segment name rule, for a namespaced or cluster-scoped kind. */
function validateMeta(meta: ObjectMeta | undefined, namespaced: boolean): FieldError[] {
  const path = newPath('metadata');
  const m = meta ?? {};
  const errs: FieldError[] = [];
  if (!m.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isValidPathSegmentName(m.name).map((msg) => invalid(path.child('name'), m.name, msg)));
  if (namespaced) {
    if (!m.namespace) errs.push(required(path.child('namespace'), ''));
    else errs.push(...isDNS1123Label(m.namespace).map((msg) => invalid(path.child('namespace'), m.namespace, msg)));
  } else if (m.namespace) errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  errs.push(...validateLabels(m.labels, path.child('labels')));
  errs.push(...validateAnnotations(m.annotations, path.child('annotations')));
  return errs;
}

/** A []string as Go's %#v prints it in a field error: `[]string{"/healthz"}`. */
function goStrings(values: readonly string[]): { toString(): string } {
  const text = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
  return { toString: () => text };
}

/** validatePolicyRule. */
function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs?.length) errs.push(required(path.child('verbs'), 'verbs must contain at least one value'));
  if (rule.nonResourceURLs?.length) {
    const urls = goStrings(rule.nonResourceURLs);
    if (namespaced) errs.push(invalid(path.child('nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) {
      errs.push(invalid(path.child('nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (!rule.apiGroups?.length) errs.push(required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (!rule.resources?.length) errs.push(required(path.child('resources'), 'resource rules must supply at least one resource'));
  if (rule.resourceNames?.length && (rule.resources?.length ?? 0) > 1) {
    errs.push(required(path.child('resourceNames'), 'resource names cannot apply to multiple resources'));
  }
  return errs;
}

function validateRules(rules: readonly PolicyRule[] | undefined, namespaced: boolean): FieldError[] {
  return (rules ?? []).flatMap((r, i) => validatePolicyRule(r ?? {}, namespaced, newPath('rules').index(i)));
}

export function validateRole(role: Role): FieldError[] {
  return sortFieldErrors([...validateMeta(role.metadata, true), ...validateRules(role.rules, true)]);
}

export function validateClusterRole(role: ClusterRole): FieldError[] {
  return sortFieldErrors([...validateMeta(role.metadata, false), ...validateRules(role.rules, false)]);
}

/** ValidateServiceAccountName: a DNS-1123 subdomain. */
function validateSubject(s: Subject, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(required(path.child('name'), ''));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.name) errs.push(...isDNS1123Subdomain(s.name).map((msg) => invalid(path.child('name'), s.name, msg)));
      if (s.apiGroup) errs.push(notSupported(path.child('apiGroup'), s.apiGroup, ['']));
      if (!namespaced && !s.namespace) errs.push(required(path.child('namespace'), ''));
      break;
    case 'User':
    case 'Group':
      if (!s.name) errs.push(invalid(path.child('name'), s.name ?? '', `${s.kind === 'User' ? 'user' : 'group'} name cannot be empty`));
      if (s.apiGroup !== rbacGroup) errs.push(notSupported(path.child('apiGroup'), s.apiGroup ?? '', [rbacGroup]));
      break;
    default:
      errs.push(notSupported(path.child('kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(b: RoleBinding | ClusterRoleBinding, namespaced: boolean): FieldError[] {
  const errs = validateMeta(b.metadata, namespaced);
  const ref: Partial<RoleRef> = b.roleRef ?? {};
  const refPath = newPath('roleRef');
  if (ref.apiGroup !== rbacGroup) errs.push(notSupported(refPath.child('apiGroup'), ref.apiGroup ?? '', [rbacGroup]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(notSupported(refPath.child('kind'), ref.kind ?? '', kinds));
  if (!ref.name) errs.push(required(refPath.child('name'), ''));
  else errs.push(...isValidPathSegmentName(ref.name).map((msg) => invalid(refPath.child('name'), ref.name, msg)));
  (b.subjects ?? []).forEach((s, i) => errs.push(...validateSubject(s ?? {}, namespaced, newPath('subjects').index(i))));
  return errs;
}

export function validateRoleBinding(b: RoleBinding): FieldError[] {
  return sortFieldErrors(validateBinding(b, true));
}

export function validateClusterRoleBinding(b: ClusterRoleBinding): FieldError[] {
  return sortFieldErrors(validateBinding(b, false));
}

/**
 * The v1 defaults of a binding (pkg/apis/rbac/v1 defaults.go): roleRef.apiGroup and the apiGroup of
 * User and Group subjects default to rbac.authorization.k8s.io.
 */
export function defaultBinding<T extends RoleBinding | ClusterRoleBinding>(input: T): T {
  const b = structuredClone(input);
  if (b.roleRef && !b.roleRef.apiGroup) b.roleRef.apiGroup = rbacGroup;
  for (const s of b.subjects ?? []) {
    if (!s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = rbacGroup;
  }
  return b;
}

/** Go's %v of a RoleRef struct, as `cannot change roleRef` prints the value. */
function goRoleRef(r: Partial<RoleRef> | undefined): { toString(): string } {
  const text = `{APIGroup:${r?.apiGroup ?? ''} Kind:${r?.kind ?? ''} Name:${r?.name ?? ''}}`;
  return { toString: () => text };
}

/** ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate: the roleRef may not change. */
export function validateBindingUpdate(next: RoleBinding | ClusterRoleBinding, old: RoleBinding | ClusterRoleBinding): FieldError[] {
  const a = next.roleRef ?? {};
  const b = old.roleRef ?? {};
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  return [invalid(newPath('roleRef'), goRoleRef(next.roleRef), 'cannot change roleRef')];
}
