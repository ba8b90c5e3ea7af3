// Garbage collection by ownerReferences (pkg/controller/garbagecollector), over every namespaced kind
// the object store keeps and the pods, with the three propagation policies:
// - Background: once an owner is gone, each dependent that names it is deleted — unless another of
//   its owners still exists, when only the dangling reference is removed;
// - Orphan (the owner's `orphan` finalizer): its dependents lose their reference to it, then the
//   finalizer goes and with it the owner;
// - Foreground (the `foregroundDeletion` finalizer): its dependents are deleted (in the foreground
//   themselves), and the owner stays until none that blocks it (blockOwnerDeletion) is left.

import type { Pod } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import type { WorkQueue } from './work-queue.js';

const orphanFinalizer = 'orphan';
const foregroundFinalizer = 'foregroundDeletion';

/** A dependent: an object of a stored kind, or a pod. */
type Dependent = { kind: string; object: KubeObject };

const refersTo = (o: KubeObject, uid: string) => (o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);

export class GarbageCollector {
  /** Owners being deleted with the orphan or foreground finalizer, as `kind/namespace/name`. */
  readonly queue: WorkQueue;
  private readonly kinds: string[];

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('garbage-collector', (key) => this.sync(key));
    this.kinds = (ctx.backend.objects?.kinds?.() ?? []).filter((k) => k.namespaced).map((k) => k.kind);
    for (const kind of this.kinds) {
      ctx.informer(kind).on({
        onAdd: (o) => this.ownerChanged(kind, o),
        onUpdate: (_old, o) => {
          this.ownerChanged(kind, o);
          this.dependentChanged(o);
        },
        onDelete: (o) => {
          void this.ownerGone(o);
          this.dependentChanged(o);
        },
      });
    }
    ctx.pods.on({
      onUpdate: (_old, p) => this.dependentChanged(p),
      // A pod owns too (a StatefulSet's claims under whenScaled: Delete).
      onDelete: (p) => {
        this.dependentChanged(p);
        void this.ownerGone(p);
      },
    });
  }

  private ownerChanged(kind: string, o: KubeObject): void {
    const f = o.metadata?.finalizers ?? [];
    if (o.metadata?.deletionTimestamp && (f.includes(orphanFinalizer) || f.includes(foregroundFinalizer))) {
      this.queue.add(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
    }
  }

  /** A dependent changed or went: its owners waiting for their dependents look again. */
  private dependentChanged(o: KubeObject): void {
    const ns = o.metadata?.namespace ?? '';
    for (const ref of o.metadata?.ownerReferences ?? []) {
      if (!this.kinds.includes(ref.kind)) continue;
      const owner = this.ctx.informer(ref.kind).get(ns, ref.name);
      if (owner?.metadata?.uid === ref.uid && owner.metadata?.deletionTimestamp) this.ownerChanged(ref.kind, owner);
    }
  }

  /** Every object and pod of the owner's namespace that names it. */
  private dependentsOf(owner: KubeObject): Dependent[] {
    const ns = owner.metadata?.namespace ?? '';
    const uid = owner.metadata?.uid ?? '';
    const out: Dependent[] = [];
    for (const kind of this.kinds) for (const o of this.ctx.informer(kind).list(ns)) if (refersTo(o, uid)) out.push({ kind, object: o });
    for (const p of this.ctx.pods.list(ns)) if (refersTo(p, uid)) out.push({ kind: 'Pod', object: p });
    return out;
  }

  /** The owner a reference names still exists (an owner of a kind not kept here is taken to exist). */
  private ownerExists(ns: string, ref: { kind: string; name: string; uid: string }): boolean {
    if (ref.kind === 'Pod') return this.ctx.pods.get(ns, ref.name)?.metadata?.uid === ref.uid;
    if (!this.kinds.includes(ref.kind)) return true;
    return this.ctx.informer(ref.kind).get(ns, ref.name)?.metadata?.uid === ref.uid;
  }

  private tolerate(owner: string) {
    return (err: unknown) => {
      if (!isConflictOrGone(err)) this.ctx.logger.error('Garbage collection failed', { owner, err: String(err) });
    };
  }

  /** Background propagation: the owner is gone; its dependents go unless another owner holds them. */
  private async ownerGone(owner: KubeObject): Promise<void> {
    const uid = owner.metadata?.uid;
    const ns = owner.metadata?.namespace ?? '';
    if (!uid) return;
    const tolerate = this.tolerate(`${ns}/${owner.metadata?.name}`);
    for (const d of this.dependentsOf(owner)) {
      const others = (d.object.metadata?.ownerReferences ?? []).filter((r) => r.uid !== uid);
      if (others.some((r) => this.ownerExists(ns, r))) await this.dropReference(d, uid).catch(tolerate);
      else await this.deleteDependent(d, 'Background').catch(tolerate);
    }
  }

  private async sync(key: string): Promise<void> {
    const [kind, ns, name] = key.split('/') as [string, string, string];
    const owner = this.ctx.storage(kind).get(ns, name);
    if (!owner?.metadata?.deletionTimestamp) return;
    const uid = owner.metadata.uid ?? '';
    const finalizers = owner.metadata.finalizers ?? [];
    if (finalizers.includes(orphanFinalizer)) {
      // orphanDependents: every reference to the owner removed, then its finalizer.
      for (const d of this.dependentsOf(owner)) await this.dropReference(d, uid);
      return this.removeFinalizer(kind, ns, name, orphanFinalizer);
    }
    if (!finalizers.includes(foregroundFinalizer)) return;
    for (const d of this.dependentsOf(owner)) {
      if (!d.object.metadata?.deletionTimestamp) await this.deleteDependent(d, 'Foreground').catch(this.tolerate(key));
    }
    const blocking = this.dependentsOf(owner).filter((d) =>
      (d.object.metadata?.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion === true),
    );
    if (blocking.length === 0) await this.removeFinalizer(kind, ns, name, foregroundFinalizer);
  }

  private async deleteDependent(d: Dependent, policy: 'Background' | 'Foreground'): Promise<void> {
    const ns = d.object.metadata?.namespace ?? '';
    const name = d.object.metadata?.name ?? '';
    if (d.kind === 'Pod') {
      if (!d.object.metadata?.deletionTimestamp) await this.ctx.backend.deletePod(ns, name, {});
      return;
    }
    await this.ctx.storage(d.kind).delete!(ns, name, { propagationPolicy: policy });
  }

  /** Removes the references to an owner from a dependent, read afresh (a stale write is retried by the queue). */
  private async dropReference(d: Dependent, uid: string): Promise<void> {
    const ns = d.object.metadata?.namespace ?? '';
    const name = d.object.metadata?.name ?? '';
    const fresh = d.kind === 'Pod' ? this.ctx.backend.getPod(ns, name) : this.ctx.storage(d.kind).get(ns, name);
    if (!fresh || !refersTo(fresh, uid)) return;
    const refs = (fresh.metadata?.ownerReferences ?? []).filter((r) => r.uid !== uid);
    const meta = { ...fresh.metadata, ownerReferences: refs };
    if (refs.length === 0) delete (meta as { ownerReferences?: unknown }).ownerReferences;
    if (d.kind === 'Pod') await this.ctx.backend.updatePod({ ...(fresh as Pod), metadata: meta });
    else await this.ctx.storage(d.kind).update!({ ...fresh, metadata: meta }, {});
  }

  private async removeFinalizer(kind: string, ns: string, name: string, finalizer: string): Promise<void> {
    const fresh = this.ctx.storage(kind).get(ns, name);
    if (!fresh?.metadata?.finalizers?.includes(finalizer)) return;
    const finalizers = fresh.metadata.finalizers.filter((f) => f !== finalizer);
    const meta = { ...fresh.metadata, finalizers };
    if (finalizers.length === 0) delete (meta as { finalizers?: unknown }).finalizers;
    await this.ctx.storage(kind).update!({ ...fresh, metadata: meta }, {});
  }
}
