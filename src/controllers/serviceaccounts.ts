// The ServiceAccount controller (pkg/controller/serviceaccount/serviceaccounts_controller.go): every
// namespace that is not being deleted has the `default` ServiceAccount; a namespace's creation, and
// the deletion of its account, have it (re)created.

import { defaultServiceAccountName } from '../api/service-account.js';
import type { NamespaceObject } from '../kubeapi/namespace-strategy.js';
import type { KubeObject } from '../kubeapi/backend.js';
import type { ControllerContext } from './context.js';
import type { Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';

/** The accounts ensured in each namespace (the controller's ServiceAccounts option). */
const ensured = [defaultServiceAccountName];

export class ServiceAccountsController {
  readonly queue: WorkQueue;
  private readonly namespaces: Informer<NamespaceObject>;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('serviceaccount', (ns) => this.sync(ns));
    this.namespaces = ctx.informer<NamespaceObject>('Namespace');
    this.namespaces.on({ onAdd: (ns) => this.queue.add(ns.metadata?.name ?? ''), onUpdate: (_o, ns) => this.queue.add(ns.metadata?.name ?? '') });
    ctx.informer<KubeObject>('ServiceAccount').on({
      onDelete: (sa) => {
        if (ensured.includes(sa.metadata?.name ?? '')) this.queue.add(sa.metadata?.namespace ?? '');
      },
    });
  }

  private async sync(name: string): Promise<void> {
    const ns = this.namespaces.get('', name);
    if (!ns || ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return;
    const storage = this.ctx.storage('ServiceAccount');
    for (const sa of ensured) {
      if (storage.get(name, sa)) continue;
      await storage.create!({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: name } }, {}).catch((err: unknown) => {
        const code = (err as { code?: number }).code;
        // AlreadyExists: made meanwhile; NotFound or Forbidden: the namespace went or is going.
        if (code !== 409 && code !== 404 && code !== 403) throw err;
      });
    }
  }
}
