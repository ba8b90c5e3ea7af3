// What a ResourceQuota counts of an object, as upstream's quota evaluators count it
// (pkg/quota/v1/evaluator/core: pods, services; generic object counts), and the quota admission's
// check of a created object (plugin/pkg/admission/resourcequota controller.go checkRequest), as pure
// functions over the quotas and the objects of a namespace.
//
// Pods: `count/pods` counts every pod stored, `pods` and the compute resources (cpu, memory,
// requests.*, limits.*, ephemeral-storage) only pods not terminal (Succeeded, Failed, or deleted past
// their grace period: QuotaV1Pod). Services: services, services.nodeports, services.loadbalancers.
// Every other kind: `count/<resource>.<group>` and, for configmaps, secrets, persistentvolumeclaims,
// replicationcontrollers and resourcequotas, the plain name. Scopes (Terminating, NotTerminating,
// BestEffort, NotBestEffort, PriorityClass through the scope selector) select the pods a quota counts.

import type { Pod } from '../api/types.js';
import type { ResourceQuota } from '../api/validation/resource-quota.js';
import { computePodQOS } from '../status/qos.js';
import { addAmounts, amountOf, amountString, podTotal, type Amount, type ResourceList } from './pod-resources.js';

/** The kind of an object, as quota names it: its plural resource and API group ('' for core). */
export interface QuotaKind {
  resource: string;
  group: string;
}

const legacyCountNames = new Set(['configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas', 'services', 'pods']);

/** `count/<resource>.<group>`, `count/<resource>` in the core group. */
export function objectCountName(k: QuotaKind): string {
  return k.group ? `count/${k.resource}.${k.group}` : `count/${k.resource}`;
}

const podComputeNames = new Set([
  'pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
]);

/** Of the resources a quota limits, those an object of this kind uses (evaluator.MatchingResources). */
export function matchingResources(k: QuotaKind, names: readonly string[]): string[] {
  const count = objectCountName(k);
  return names.filter((n) => {
    if (n === count) return true;
    if (k.group === '' && k.resource === 'pods') return podComputeNames.has(n) || n.startsWith('requests.hugepages-') || n.startsWith('hugepages-');
    if (k.group === '' && k.resource === 'services') return n === 'services' || n === 'services.nodeports' || n === 'services.loadbalancers';
    return k.group === '' && legacyCountNames.has(k.resource) && n === k.resource;
  });
}

/** QuotaV1Pod: the pod still holds its compute resources (not terminal, not deleted past its grace period). */
export function podHoldsResources(pod: Pod, nowMs: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const del = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (del && grace !== undefined && grace !== null && nowMs > Date.parse(del) + grace * 1000) return false;
  return true;
}

const one = (): Amount => ({ milli: 1000n, like: '1' });

/** PodUsageFunc: count/pods always; pods and the compute resources while the pod holds them. */
function podUsage(pod: Pod, nowMs: number): Map<string, Amount> {
  const out = new Map<string, Amount>([['count/pods', one()]]);
  if (!podHoldsResources(pod, nowMs)) return out;
  out.set('pods', one());
  const requests = podTotal(pod, 'requests');
  const limits = podTotal(pod, 'limits');
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, req] of requests) {
    if (r.startsWith('hugepages-')) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
  }
  return out;
}

interface ServiceLike {
  spec?: { type?: string; ports?: unknown[]; allocateLoadBalancerNodePorts?: boolean };
}

/** The service evaluator: services, nodeports of a NodePort or LoadBalancer Service, loadbalancers. */
function serviceUsage(svc: ServiceLike): Map<string, Amount> {
  const out = new Map<string, Amount>([
    ['services', one()],
    ['count/services', one()],
  ]);
  const type = svc.spec?.type ?? 'ClusterIP';
  const ports = BigInt(svc.spec?.ports?.length ?? 0);
  if (type === 'NodePort' || (type === 'LoadBalancer' && svc.spec?.allocateLoadBalancerNodePorts !== false))
    out.set('services.nodeports', { milli: ports * 1000n, like: String(ports) });
  if (type === 'LoadBalancer') out.set('services.loadbalancers', one());
  return out;
}

/** What one object uses (evaluator.Usage). */
export function usageOf(k: QuotaKind, obj: unknown, nowMs: number): Map<string, Amount> {
  if (k.group === '' && k.resource === 'pods') return podUsage(obj as Pod, nowMs);
  if (k.group === '' && k.resource === 'services') return serviceUsage(obj as ServiceLike);
  const out = new Map<string, Amount>([[objectCountName(k), one()]]);
  if (k.group === '' && legacyCountNames.has(k.resource)) out.set(k.resource, one());
  return out;
}

function isBestEffort(pod: Pod): boolean {
  return computePodQOS(pod) === 'BestEffort';
}

function isTerminating(pod: Pod): boolean {
  const ads = pod.spec?.activeDeadlineSeconds;
  return ads !== undefined && ads !== null && ads >= 0;
}

function podMatchesScope(scope: string, operator: string, values: readonly string[], pod: Pod): boolean {
  switch (scope) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const pc = pod.spec?.priorityClassName ?? '';
      if (operator === 'Exists') return pc !== '';
      if (operator === 'DoesNotExist') return pc === '';
      if (operator === 'In') return values.includes(pc);
      if (operator === 'NotIn') return pc !== '' && !values.includes(pc);
      return false;
    }
    case 'CrossNamespacePodAffinity': {
      const terms = [
        ...(pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ...(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ...(pod.spec?.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
        ...(pod.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
      ];
      return terms.some((t) => (t.namespaces ?? []).length > 0 || t.namespaceSelector !== undefined);
    }
    default:
      return false;
  }
}

/** The quota's scopes (spec.scopes and the scope selector's expressions), as (scope, operator, values). */
function scopesOf(q: ResourceQuota): Array<{ scope: string; operator: string; values: readonly string[] }> {
  return [
    ...(q.spec?.scopes ?? []).map((scope) => ({ scope, operator: 'Exists', values: [] })),
    ...(q.spec?.scopeSelector?.matchExpressions ?? []).map((e) => ({ scope: e.scopeName, operator: e.operator, values: e.values ?? [] })),
  ];
}

/** The quota counts this object: every scope selects it (only pods have scopes to match). */
export function quotaSelects(q: ResourceQuota, k: QuotaKind, obj: unknown): boolean {
  const scopes = scopesOf(q);
  if (scopes.length === 0) return true;
  if (!(k.group === '' && k.resource === 'pods')) return false;
  return scopes.every((s) => podMatchesScope(s.scope, s.operator, s.values, obj as Pod));
}

/** The resources a pod's containers must each set when a quota limits them (podEvaluator.Constraints). */
const requiredPerContainer = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** `must specify limits.cpu for: app; requests.cpu for: app,sidecar`, or undefined. */
export function podConstraints(required: readonly string[], pod: Pod): string | undefined {
  const need = required.filter((r) => requiredPerContainer.has(r));
  if (need.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    const res = c.resources as { requests?: ResourceList; limits?: ResourceList } | undefined;
    const has = new Set<string>();
    for (const r of Object.keys(res?.requests ?? {})) if (r === 'cpu' || r === 'memory') has.add(r).add(`requests.${r}`);
    for (const r of Object.keys(res?.limits ?? {})) if (r === 'cpu' || r === 'memory') has.add(`limits.${r}`);
    for (const r of need) if (!has.has(r)) (missing.get(r) ?? missing.set(r, new Set()).get(r)!).add(c.name);
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

/** An object of a namespace, with its kind. */
export interface CountedObject {
  kind: QuotaKind;
  object: unknown;
}

/** The quota's status.used: for each resource it limits, the sum over the objects it selects (CalculateUsage). */
export function computeUsed(q: ResourceQuota, objects: readonly CountedObject[], nowMs: number): ResourceList {
  const hard = Object.keys(q.spec?.hard ?? {});
  const used = new Map<string, Amount>();
  for (const { kind, object } of objects) {
    const names = matchingResources(kind, hard);
    if (names.length === 0 || !quotaSelects(q, kind, object)) continue;
    const usage = usageOf(kind, object, nowMs);
    for (const n of names) {
      const a = usage.get(n);
      if (a) used.set(n, addAmounts(used.get(n), a));
    }
  }
  const out: ResourceList = {};
  for (const n of hard.sort()) out[n] = amountString(used.get(n) ?? { milli: 0n, like: '0' });
  return out;
}

const prettyPrint = (m: ReadonlyMap<string, Amount>, names: readonly string[]) =>
  names
    .filter((n) => m.has(n))
    .map((n) => `${n}=${amountString(m.get(n)!)}`)
    .join(',');

/** What checkRequest decided: the refusal's text, or the quotas with the object's usage added. */
export type QuotaDecision = { refusal: string } | { updated: ResourceQuota[] };

/**
 * checkRequest for a created object: each quota of its namespace that selects it and limits what it
 * uses must have room for it (`exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`);
 * a pod must set each compute resource such a quota limits (`failed quota: q: must specify …`).
 * `status` gives each quota's current status (hard and used), computed by the caller where unknown.
 */
export function checkCreate(quotas: readonly ResourceQuota[], k: QuotaKind, obj: unknown, nowMs: number): QuotaDecision {
  return checkRequest(quotas, k, obj, undefined, nowMs);
}

/**
 * checkRequest for a create (old undefined) or an update: an update is charged what it adds to the
 * usage of the object it replaces, never less than nothing (SubtractWithNonNegativeResult), so a
 * Service turned NodePort counts its nodeports.
 */
export function checkRequest(quotas: readonly ResourceQuota[], k: QuotaKind, obj: unknown, old: unknown, nowMs: number): QuotaDecision {
  const interesting: ResourceQuota[] = [];
  for (const q of quotas) {
    const hard = Object.keys(q.status?.hard ?? {});
    const restricted = matchingResources(k, hard);
    if (restricted.length === 0 || !quotaSelects(q, k, obj)) continue;
    if (k.group === '' && k.resource === 'pods') {
      const c = podConstraints(restricted, obj as Pod);
      if (c) return { refusal: `failed quota: ${q.metadata?.name ?? ''}: ${c}` };
    }
    interesting.push(q);
  }
  if (interesting.length === 0) return { updated: [] };
  const delta = usageOf(k, obj, nowMs);
  if (old !== undefined) {
    const before = usageOf(k, old, nowMs);
    for (const [n, a] of delta) {
      const prev = before.get(n);
      if (prev) delta.set(n, { milli: a.milli > prev.milli ? a.milli - prev.milli : 0n, like: a.like });
    }
  }
  for (const [n, a] of delta) if (a.milli === 0n) delta.delete(n);
  if (delta.size === 0) return { updated: [] };
  const updated: ResourceQuota[] = [];
  for (const q of interesting) {
    const hardList = (q.status?.hard ?? {}) as ResourceList;
    const usedList = (q.status?.used ?? {}) as ResourceList;
    const requestedNames = Object.keys(hardList)
      .filter((n) => delta.has(n))
      .sort();
    const used = new Map(Object.entries(usedList).map(([n, v]) => [n, amountOf(String(v))]));
    const hard = new Map(Object.entries(hardList).map(([n, v]) => [n, amountOf(String(v))]));
    const newUsed = new Map(used);
    for (const n of requestedNames) newUsed.set(n, addAmounts(used.get(n), delta.get(n)!));
    const exceeded = requestedNames.filter((n) => newUsed.get(n)!.milli > hard.get(n)!.milli);
    if (exceeded.length > 0) {
      const zero = (m: Map<string, Amount>) => new Map(exceeded.map((n) => [n, m.get(n) ?? { milli: 0n, like: '0' }]));
      return {
        refusal: `exceeded quota: ${q.metadata?.name ?? ''}, requested: ${prettyPrint(delta, exceeded)}, used: ${prettyPrint(zero(used), exceeded)}, limited: ${prettyPrint(hard, exceeded)}`,
      };
    }
    if (requestedNames.length === 0) continue;
    const out: ResourceList = { ...usedList };
    for (const n of requestedNames) out[n] = amountString(newUsed.get(n)!);
    updated.push({ ...q, status: { ...q.status, used: out } });
  }
  return { updated };
}

/** Every resource the quota limits has a usage in its status (hasUsageStats) and its hard is the spec's. */
export function hasUsageStats(q: ResourceQuota): boolean {
  const hard = (q.spec?.hard ?? {}) as ResourceList;
  const status = q.status ?? {};
  const statusHard = (status.hard ?? {}) as ResourceList;
  const used = (status.used ?? {}) as ResourceList;
  return Object.keys(hard).every((n) => statusHard[n] === hard[n] && used[n] !== undefined) && Object.keys(statusHard).length === Object.keys(hard).length;
}
