// The namespace controller (pkg/controller/namespace, its namespaced_resources_deleter): a Namespace
// being deleted has every object of every namespaced kind in it deleted, and its API pods; while
// something remains its status says what (NamespaceContentRemaining, NamespaceFinalizersRemaining);
// once nothing does, the `kubernetes` finalizer is removed and the object store lets the Namespace go.
// Event-driven: the Namespace watch and the deletions of its content enqueue it.

import type { Pod } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { kubernetesFinalizer, type NamespaceCondition, type NamespaceObject } from '../kubeapi/namespace-strategy.js';
import { canonicalJSON } from '../api/defaults.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import type { Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';

const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class NamespaceController {
  readonly queue: WorkQueue;
  private readonly namespaces: Informer<NamespaceObject>;
  private readonly kinds: Array<{ kind: string; resource: string }>;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('namespace', (key) => this.sync(key));
    this.namespaces = ctx.informer<NamespaceObject>('Namespace');
    const changed = (ns: NamespaceObject) => {
      if (ns.metadata?.deletionTimestamp) this.queue.add(ns.metadata.name ?? '');
    };
    this.namespaces.on({ onAdd: changed, onUpdate: (_o, ns) => changed(ns) });
    const contentChanged = (o: KubeObject) => {
      const ns = o.metadata?.namespace ?? '';
      if (this.namespaces.get('', ns)?.metadata?.deletionTimestamp) this.queue.add(ns);
    };
    this.kinds = (ctx.backend.objects?.kinds?.() ?? [])
      .filter((k) => k.namespaced)
      .map((k) => ({ kind: k.kind, resource: k.apiVersion.includes('/') ? `${k.resource}.${k.apiVersion.split('/')[0]}` : k.resource }));
    for (const { kind } of this.kinds) ctx.informer(kind).on({ onUpdate: (_o, x) => contentChanged(x), onDelete: contentChanged });
    ctx.pods.on({ onUpdate: (_o, p) => contentChanged(p), onDelete: contentChanged });
  }

  private async sync(name: string): Promise<void> {
    const ns = this.namespaces.get('', name);
    if (!ns?.metadata?.deletionTimestamp) return;
    const tolerate = (err: unknown) => {
      if (!isConflictOrGone(err)) this.ctx.logger.error('Namespace content deletion failed', { namespace: name, err: String(err) });
    };
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const count = (o: KubeObject, resource: string) => {
      remaining.set(resource, (remaining.get(resource) ?? 0) + 1);
      for (const f of o.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    };
    for (const { kind, resource } of this.kinds) {
      const storage = this.ctx.storage(kind);
      for (const o of storage.list().items.filter((x) => x.metadata?.namespace === name)) {
        if (!o.metadata?.deletionTimestamp) await storage.delete!(name, o.metadata!.name!, { propagationPolicy: 'Background' }).catch(tolerate);
      }
      for (const o of storage.list().items) if (o.metadata?.namespace === name) count(o, resource);
    }
    for (const p of this.ctx.backend.listPods().items.filter((x: Pod) => x.metadata?.namespace === name)) {
      if (!p.metadata?.deletionTimestamp) {
        const code = await this.ctx.backend.deletePod(name, p.metadata!.name!, {}).then(
          () => 200,
          (err: unknown) => (err as { code?: number }).code ?? 500,
        );
        // A static pod is not the API's to delete: it does not hold the namespace.
        if (code === 403) continue;
        if (code !== 200 && code !== 404) this.ctx.logger.error('Namespace content deletion failed', { namespace: name, pod: p.metadata?.name, code });
      }
      if (this.ctx.backend.getPod(name, p.metadata!.name!)) count(p, 'pods');
    }
    if (remaining.size === 0) return this.finalize(ns);
    const now = stamp(this.ctx.clock.now());
    const describe = (m: Map<string, number>, what: string) => [...m].map(([k, n]) => `${k}${what} ${n} resource instances`).join(', ');
    const conditions: NamespaceCondition[] = [
      {
        type: 'NamespaceContentRemaining',
        status: 'True',
        lastTransitionTime: now,
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${describe(remaining, ' has')}`,
      },
      finalizers.size > 0
        ? {
            type: 'NamespaceFinalizersRemaining',
            status: 'True',
            lastTransitionTime: now,
            reason: 'SomeFinalizersRemain',
            message: `Some content in the namespace has finalizers remaining: ${describe(finalizers, ' in')}`,
          }
        : {
            type: 'NamespaceFinalizersRemaining',
            status: 'False',
            lastTransitionTime: now,
            reason: 'ContentHasNoFinalizers',
            message: 'All content-preserving finalizers finished',
          },
    ];
    const old = ns.status?.conditions ?? [];
    const same = (a: NamespaceCondition[], b: NamespaceCondition[]) =>
      canonicalJSON(a.map(({ lastTransitionTime: _t, ...c }) => c)) === canonicalJSON(b.map(({ lastTransitionTime: _t, ...c }) => c));
    if (same(old, conditions)) return;
    await this.ctx.storage('Namespace').update!({ ...ns, status: { ...ns.status, phase: 'Terminating', conditions } } as KubeObject, {}).catch(tolerate);
  }

  /** Nothing is left: the `kubernetes` finalizer goes, and with the last finalizer the Namespace (finalize). */
  private async finalize(ns: NamespaceObject): Promise<void> {
    const spec = { ...(ns.spec ?? {}), finalizers: (ns.spec?.finalizers ?? []).filter((f) => f !== kubernetesFinalizer) };
    await this.ctx.storage('Namespace').update!({ ...ns, spec } as KubeObject, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }
}
