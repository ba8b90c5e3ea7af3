// The ResourceQuota admission plugin (plugin/pkg/admission/resourcequota) over the agent's stores: a
// created object of a namespace with quotas (or an updated one, for what it adds) is checked against
// them (quota-evaluators.ts checkRequest) and, when admitted, its usage is added to each quota's
// status.used before it is stored, so the next create sees it before the quota controller counts again. A quota whose status does not cover its
// spec yet (just created or changed) is counted first, from the namespace's objects. Checks of one
// namespace run one at a time; a dry run is checked alike and changes no usage.

import type { ResourceQuota } from '../api/validation/resource-quota.js';
import { forbiddenObject } from '../http/status.js';
import { OneAtATime } from '../util/one-at-a-time.js';
import type { KubeBackend, KubeObject } from './backend.js';
import { checkRequest, computeUsed, hasUsageStats, type CountedObject, type QuotaKind } from './quota-evaluators.js';

/** The group of an apiVersion ('' for `v1`). */
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** Every object of a namespace the quotas may count: its pods and the object store's namespaced kinds. */
export function namespaceObjects(backend: KubeBackend, namespace: string): CountedObject[] {
  const out: CountedObject[] = backend
    .listPods()
    .items.filter((p) => (p.metadata?.namespace ?? '') === namespace)
    .map((object) => ({ kind: { resource: 'pods', group: '' }, object }));
  for (const k of backend.objects?.kinds?.() ?? []) {
    if (!k.namespaced) continue;
    const kind = { resource: k.resource, group: groupOf(k.apiVersion) };
    for (const object of backend.objects!.storage(k.kind)?.list().items ?? []) {
      if ((object.metadata?.namespace ?? '') === namespace) out.push({ kind, object });
    }
  }
  return out;
}

/** The status the quota controller would write: hard from the spec, used counted now. */
export function quotaStatus(q: ResourceQuota, objects: readonly CountedObject[], nowMs: number): NonNullable<ResourceQuota['status']> {
  return { hard: { ...(q.spec?.hard ?? {}) }, used: computeUsed(q, objects, nowMs) };
}

const statusRetries = 3;

export class QuotaAdmission {
  private readonly namespaces = new OneAtATime();

  constructor(
    private readonly backend: KubeBackend,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits the creation of obj (a pod or an object of the store) or throws the API server's 403. */
  admitCreate(kind: QuotaKind, obj: KubeObject, opts: { dryRun?: boolean }): Promise<void> {
    return this.admit(kind, obj, undefined, opts);
  }

  /** Admits an update of an object of the store: what it adds to the replaced object's usage must fit. */
  admitUpdate(kind: QuotaKind, obj: KubeObject, old: KubeObject, opts: { dryRun?: boolean }): Promise<void> {
    return this.admit(kind, obj, old, opts);
  }

  private admit(kind: QuotaKind, obj: KubeObject, old: KubeObject | undefined, opts: { dryRun?: boolean }): Promise<void> {
    // A quota's own creation is not counted against quotas: its status is what the count writes.
    if (kind.group === '' && kind.resource === 'resourcequotas') return Promise.resolve();
    const storage = this.backend.objects?.storage('ResourceQuota');
    const ns = obj.metadata?.namespace ?? '';
    if (!storage || !ns) return Promise.resolve();
    return this.namespaces.run(ns, async () => {
      for (let attempt = 1; ; attempt++) {
        const quotas = (storage.list().items as Array<ResourceQuota & KubeObject>).filter((q) => q.metadata?.namespace === ns);
        if (quotas.length === 0) return;
        let objects: CountedObject[] | undefined;
        const current = quotas.map((q) => {
          if (hasUsageStats(q)) return q;
          objects ??= namespaceObjects(this.backend, ns);
          return { ...q, status: quotaStatus(q, objects, this.now()) };
        });
        const decision = checkRequest(current, kind, obj, old, this.now());
        if ('refusal' in decision) {
          const name = obj.metadata?.name || obj.metadata?.generateName || 'Unknown';
          throw forbiddenObject(kind.resource, kind.group, name, decision.refusal);
        }
        if (opts.dryRun) return;
        try {
          for (const q of decision.updated) await storage.updateStatus!(q as KubeObject, {});
          return;
        } catch (err) {
          // A quota the controller wrote meanwhile is read again (upstream retries its quota updates).
          if ((err as { code?: number }).code !== 409 || attempt >= statusRetries) throw err;
        }
      }
    });
  }
}
