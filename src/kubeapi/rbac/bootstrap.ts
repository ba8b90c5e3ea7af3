// The RBAC bootstrap policy put in place at each start, as kube-apiserver's rbac/bootstrap-roles
// post-start hook does (pkg/registry/rbac/rest/storage_rbac.go ensureRBACPolicy, with
// pkg/registry/rbac/reconciliation): a missing cluster role or binding is created; one present whose
// annotation rbac.authorization.kubernetes.io/autoupdate is not "false" gets back the labels,
// annotations, rules (an aggregated role: its aggregationRule's selectors) and subjects it lacks,
// keeping what was added to it (RemoveExtraPermissions false); one annotated "false" is left alone.

import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from '../../api/validation/rbac.js';
import { canonicalJSON } from '../../api/defaults.js';
import type { KubeObject, Storage } from '../backend.js';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles, bootstrapRoleBindings, bootstrapRoles } from './bootstrap-policy.js';

export const autoUpdateAnnotation = 'rbac.authorization.kubernetes.io/autoupdate';
const bootstrappingLabel = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const apiVersion = 'rbac.authorization.k8s.io/v1';

function containsEqual<T>(list: readonly T[], item: T): boolean {
  const key = canonicalJSON(item);
  return list.some((x) => canonicalJSON(x) === key);
}

/** `items` with those of `wanted` it lacks appended; undefined when it lacks none. */
function union<T>(items: readonly T[] | undefined, wanted: readonly T[] | undefined): T[] | undefined {
  const have = [...(items ?? [])];
  const missing = (wanted ?? []).filter((w) => !containsEqual(have, w));
  return missing.length ? [...have, ...missing] : undefined;
}

/** Labels and annotations the object lacks merged in (the reconciler's merge of maps); undefined when none is missing. */
function mergedMeta(meta: KubeObject['metadata'], labels: Record<string, string>): KubeObject['metadata'] | undefined {
  const have = meta ?? {};
  const missingLabels = Object.entries(labels).filter(([k]) => have.labels?.[k] === undefined);
  const missingAnnotation = have.annotations?.[autoUpdateAnnotation] === undefined;
  if (!missingLabels.length && !missingAnnotation) return undefined;
  return {
    ...have,
    labels: { ...Object.fromEntries(missingLabels), ...have.labels },
    annotations: { [autoUpdateAnnotation]: 'true', ...have.annotations },
  };
}

function autoUpdates(o: KubeObject): boolean {
  return o.metadata?.annotations?.[autoUpdateAnnotation] !== 'false';
}

/** The role reconciled toward the bootstrap one: what it lacks added; undefined when it lacks nothing. */
function reconcileRole<T extends (ClusterRole | Role) & KubeObject>(current: T, wanted: T): T | undefined {
  let next: T | undefined;
  const meta = mergedMeta(current.metadata, wanted.metadata?.labels ?? {});
  if (meta) next = { ...current, metadata: meta };
  if ('aggregationRule' in wanted && wanted.aggregationRule) {
    const selectors = union((current as ClusterRole).aggregationRule?.clusterRoleSelectors, wanted.aggregationRule.clusterRoleSelectors);
    if (selectors) next = { ...(next ?? current), aggregationRule: { clusterRoleSelectors: selectors } };
  } else {
    const rules = union<PolicyRule>(current.rules, wanted.rules);
    if (rules) next = { ...(next ?? current), rules };
  }
  return next;
}

function reconcileBinding<T extends (ClusterRoleBinding | RoleBinding) & KubeObject>(current: T, wanted: T): T | undefined {
  let next: T | undefined;
  const meta = mergedMeta(current.metadata, wanted.metadata?.labels ?? {});
  if (meta) next = { ...current, metadata: meta };
  const subjects = union<Subject>(current.subjects, wanted.subjects);
  if (subjects) next = { ...(next ?? current), subjects };
  return next;
}

/** The bootstrap cluster roles as objects (labels, annotation, apiVersion and kind). */
export function bootstrapRoleObjects(): Array<ClusterRole & KubeObject> {
  return bootstrapClusterRoles.map((r) => ({
    apiVersion,
    kind: 'ClusterRole',
    metadata: { name: r.metadata.name, labels: { ...bootstrappingLabel, ...r.metadata.labels }, annotations: { [autoUpdateAnnotation]: 'true' } },
    ...(r.aggregationRule ? { aggregationRule: structuredClone(r.aggregationRule) } : { rules: structuredClone(r.rules ?? []) }),
  }));
}

export function bootstrapBindingObjects(): Array<ClusterRoleBinding & KubeObject> {
  return bootstrapClusterRoleBindings.map((b) => ({
    apiVersion,
    kind: 'ClusterRoleBinding',
    metadata: { name: b.metadata.name, labels: { ...bootstrappingLabel }, annotations: { [autoUpdateAnnotation]: 'true' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: b.roleRef },
    ...(b.subjects ? { subjects: structuredClone(b.subjects) } : {}),
  }));
}

/** The namespaced roles and bindings of the policy, as objects. */
export function bootstrapNamespacedObjects(): { roles: Array<Role & KubeObject>; roleBindings: Array<RoleBinding & KubeObject> } {
  const metadata = (m: { namespace: string; name: string }) => ({ ...m, labels: { ...bootstrappingLabel }, annotations: { [autoUpdateAnnotation]: 'true' } });
  return {
    roles: bootstrapRoles.map((r) => ({ apiVersion, kind: 'Role', metadata: metadata(r.metadata), rules: structuredClone(r.rules) })),
    roleBindings: bootstrapRoleBindings.map((b) => ({
      apiVersion,
      kind: 'RoleBinding',
      metadata: metadata(b.metadata),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: b.roleRef },
      subjects: structuredClone(b.subjects),
    })),
  };
}

async function ensure<T extends KubeObject>(storage: Storage, wanted: T, reconcile: (current: T, wanted: T) => T | undefined): Promise<void> {
  const current = storage.get(wanted.metadata?.namespace ?? '', wanted.metadata?.name ?? '') as T | undefined;
  if (!current) {
    await storage.create!(wanted, {});
    return;
  }
  if (!autoUpdates(current)) return;
  const next = reconcile(current, wanted);
  if (next) await storage.update!(next, {});
}

/** Creates or reconciles the bootstrap roles and bindings in the stores given (the namespaced ones when given their stores). */
export async function ensureBootstrapPolicy(storages: {
  clusterRoles: Storage;
  clusterRoleBindings: Storage;
  roles?: Storage;
  roleBindings?: Storage;
}): Promise<void> {
  for (const role of bootstrapRoleObjects()) await ensure(storages.clusterRoles, role, reconcileRole);
  for (const binding of bootstrapBindingObjects()) await ensure(storages.clusterRoleBindings, binding, reconcileBinding);
  const namespaced = bootstrapNamespacedObjects();
  if (storages.roles) for (const role of namespaced.roles) await ensure(storages.roles, role, reconcileRole);
  if (storages.roleBindings) for (const binding of namespaced.roleBindings) await ensure(storages.roleBindings, binding, reconcileBinding);
}
