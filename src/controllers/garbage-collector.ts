// Garbage collection by ownerReferences (pkg/controller/garbagecollector) with background
// propagation: when an owner is deleted, the objects that name its uid in their ownerReferences
// (ReplicaSets of a Deployment, pods of a ReplicaSet or Job) are deleted, and theirs in turn.

import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';

export class GarbageCollector {
  /**
   * @param ownerKinds the kinds whose deletion is followed
   * @param dependentKinds the object-store kinds that may be dependents (pods always are)
   */
  constructor(
    private readonly ctx: ControllerContext,
    ownerKinds: readonly string[],
    private readonly dependentKinds: readonly string[],
  ) {
    for (const kind of ownerKinds) ctx.informer(kind).on({ onDelete: (o) => void this.ownerGone(o) });
  }

  private async ownerGone(owner: KubeObject): Promise<void> {
    const uid = owner.metadata?.uid;
    const ns = owner.metadata?.namespace ?? '';
    if (!uid) return;
    const ownedBy = (o: KubeObject) => (o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
    const tolerate = (err: unknown) => {
      if (!isConflictOrGone(err)) this.ctx.logger.error('Garbage collection failed', { owner: `${ns}/${owner.metadata?.name}`, err: String(err) });
    };
    for (const kind of this.dependentKinds) {
      for (const o of this.ctx.informer(kind).list(ns).filter(ownedBy)) {
        await this.ctx.storage(kind).delete!(ns, o.metadata!.name!, {}).catch(tolerate);
      }
    }
    for (const p of this.ctx.pods.list(ns).filter(ownedBy)) {
      if (!p.metadata?.deletionTimestamp) await this.ctx.backend.deletePod(ns, p.metadata!.name!, {}).catch(tolerate);
    }
  }
}
