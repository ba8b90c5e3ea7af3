// The resource quota controller (pkg/controller/resourcequota): keeps each ResourceQuota's status —
// hard as the spec says, used as counted over the namespace's objects (quota-evaluators.ts) — synced
// when the quota changes, when a pod of its namespace is added, changes phase or goes (a pod that ends
// frees its compute resources, as upstream counts only non-terminal pods), when an object of a kind it
// may count is added or deleted, and every five minutes (--resource-quota-sync-period) on the clock.

import type { Pod } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';
import type { ResourceQuota } from '../api/validation/resource-quota.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { namespaceObjects, quotaStatus } from '../kubeapi/quota-admission.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';

/** kube-controller-manager's --resource-quota-sync-period default. */
export const quotaResyncMs = 5 * 60 * 1000;

export class ResourceQuotaController {
  readonly queue: WorkQueue;
  private readonly quotas: Informer<ResourceQuota & KubeObject>;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('resourcequota', (key) => this.sync(key));
    this.quotas = ctx.informer('ResourceQuota');
    this.quotas.on({
      onAdd: (q) => this.queue.add(objectKey(q)),
      onUpdate: (old, q) => {
        if (canonicalJSON(old.spec) !== canonicalJSON(q.spec) || canonicalJSON(q.status?.hard) !== canonicalJSON(q.spec?.hard)) this.queue.add(objectKey(q));
      },
    });
    const namespaceChanged = (o: KubeObject) => {
      for (const q of this.quotas.list(o.metadata?.namespace ?? '')) this.queue.add(objectKey(q));
    };
    ctx.pods.on({
      onAdd: namespaceChanged,
      onUpdate: (old: Pod, pod: Pod) => {
        if (old.status?.phase !== pod.status?.phase || old.metadata?.deletionTimestamp !== pod.metadata?.deletionTimestamp) namespaceChanged(pod);
      },
      onDelete: namespaceChanged,
    });
    for (const k of ctx.backend.objects?.kinds?.() ?? []) {
      if (!k.namespaced || k.kind === 'ResourceQuota' || k.kind === 'Event') continue;
      ctx.informer(k.kind).on({ onAdd: namespaceChanged, onDelete: namespaceChanged });
    }
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const q = this.quotas.get(ns, name);
    if (!q || q.metadata?.deletionTimestamp) return;
    const status = quotaStatus(q, namespaceObjects(this.ctx.backend, ns), this.ctx.clock.now());
    if (canonicalJSON(status) !== canonicalJSON(q.status)) {
      try {
        await this.ctx.storage('ResourceQuota').updateStatus!({ ...q, status } as KubeObject, {});
      } catch (err) {
        if (!isConflictOrGone(err)) throw err;
        // Written meanwhile (an admission added its usage): that write enqueues it again.
      }
    }
    this.queue.addAfter(key, quotaResyncMs);
  }
}
