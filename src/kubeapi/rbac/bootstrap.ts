// The RBAC bootstrap policy put in place at each start, as kube-apiserver's rbac/bootstrap-roles
// post-start hook does (pkg/registry/rbac/rest/storage_rbac.go ensureRBACPolicy, with
// pkg/registry/rbac/reconciliation): a missing cluster role or binding is created; one present whose
// annotation rbac.authorization.kubernetes.io/autoupdate is not "false" gets back the labels,
// annotations, rules (an aggregated role: its aggregationRule's selectors) and subjects it lacks,
// keeping what was added to it (RemoveExtraPermissions false); one annotated "false" is left alone.

import type { ClusterRole, ClusterRoleBinding, PolicyRule, Subject } from '../../api/validation/rbac.js';
import { canonicalJSON } from '../../api/defaults.js';
import type { KubeObject, Storage } from '../backend.js';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.js';

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
function reconcileRole(current: ClusterRole & KubeObject, wanted: ClusterRole): (ClusterRole & KubeObject) | undefined {
  let next: (ClusterRole & KubeObject) | undefined;
  const meta = mergedMeta(current.metadata, wanted.metadata?.labels ?? {});
  if (meta) next = { ...current, metadata: meta };
  if (wanted.aggregationRule) {
    const selectors = union(current.aggregationRule?.clusterRoleSelectors, wanted.aggregationRule.clusterRoleSelectors);
    if (selectors) next = { ...(next ?? current), aggregationRule: { clusterRoleSelectors: selectors } };
  } else {
    const rules = union<PolicyRule>(current.rules, wanted.rules);
    if (rules) next = { ...(next ?? current), rules };
  }
  return next;
}

function reconcileBinding(current: ClusterRoleBinding & KubeObject, wanted: ClusterRoleBinding): (ClusterRoleBinding & KubeObject) | undefined {
  let next: (ClusterRoleBinding & KubeObject) | undefined;
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

async function ensure<T extends KubeObject>(storage: Storage, wanted: T, reconcile: (current: T, wanted: T) => T | undefined): Promise<void> {
  const current = storage.get('', wanted.metadata?.name ?? '') as T | undefined;
  if (!current) {
    await storage.create!(wanted, {});
    return;
  }
  if (!autoUpdates(current)) return;
  const next = reconcile(current, wanted);
  if (next) await storage.update!(next, {});
}

/** Creates or reconciles the bootstrap cluster roles and bindings in the stores given. */
export async function ensureBootstrapPolicy(storages: { clusterRoles: Storage; clusterRoleBindings: Storage }): Promise<void> {
  for (const role of bootstrapRoleObjects()) await ensure(storages.clusterRoles, role, reconcileRole);
  for (const binding of bootstrapBindingObjects()) await ensure(storages.clusterRoleBindings, binding, reconcileBinding);
}
