// The pvc-protection and pv-protection controllers (pkg/controller/volume/pvcprotection,
// pvprotection): a claim being deleted keeps its kubernetes.io/pvc-protection finalizer while a pod
// that has not finished uses it, and loses it once none does; a volume being deleted keeps
// kubernetes.io/pv-protection while it is Bound.

import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { pvcProtectionFinalizer, pvProtectionFinalizer } from '../kubeapi/storage-strategy.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import { podsUsingClaim } from './persistentvolume.js';
import type { WorkQueue } from './work-queue.js';

type Claim = PersistentVolumeClaim & KubeObject;
type Volume = PersistentVolume & KubeObject;

function withoutFinalizer<T extends KubeObject>(o: T, finalizer: string): T {
  return { ...o, metadata: { ...o.metadata, finalizers: (o.metadata?.finalizers ?? []).filter((f) => f !== finalizer) } };
}

export class VolumeProtectionController {
  private readonly claims: Informer<Claim>;
  private readonly volumes: Informer<Volume>;
  private readonly claimQueue: WorkQueue;
  private readonly volumeQueue: WorkQueue;

  constructor(private readonly ctx: ControllerContext) {
    this.claims = ctx.informer<Claim>('PersistentVolumeClaim');
    this.volumes = ctx.informer<Volume>('PersistentVolume');
    this.claimQueue = ctx.workQueue('pvc-protection', (key) => this.syncClaim(key));
    this.volumeQueue = ctx.workQueue('pv-protection', (key) => this.syncVolume(key));
    this.claims.on({ onAdd: (c) => this.claimQueue.add(objectKey(c)), onUpdate: (_o, c) => this.claimQueue.add(objectKey(c)) });
    this.volumes.on({ onAdd: (v) => this.volumeQueue.add(objectKey(v)), onUpdate: (_o, v) => this.volumeQueue.add(objectKey(v)) });
    // A pod that ends or goes may free the claims it used.
    const podChanged = (p: Pod) => {
      for (const v of p.spec?.volumes ?? [])
        if (v.persistentVolumeClaim?.claimName) this.claimQueue.add(`${p.metadata?.namespace ?? ''}/${v.persistentVolumeClaim.claimName}`);
    };
    ctx.pods.on({ onUpdate: (_o, p) => podChanged(p), onDelete: podChanged });
  }

  private async syncClaim(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const claim = this.claims.get(ns, name);
    if (!claim?.metadata?.deletionTimestamp || !(claim.metadata.finalizers ?? []).includes(pvcProtectionFinalizer)) return;
    if (podsUsingClaim(this.ctx.pods.list(ns), ns, name).length > 0) return;
    await this.ctx.storage('PersistentVolumeClaim').update!(withoutFinalizer(claim, pvcProtectionFinalizer), {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
      this.claimQueue.add(key);
    });
  }

  private async syncVolume(key: string): Promise<void> {
    const name = key.slice(key.indexOf('/') + 1);
    const pv = this.volumes.get('', name);
    if (!pv?.metadata?.deletionTimestamp || !(pv.metadata.finalizers ?? []).includes(pvProtectionFinalizer)) return;
    if (pv.status?.phase === 'Bound') return;
    await this.ctx.storage('PersistentVolume').update!(withoutFinalizer(pv, pvProtectionFinalizer), {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
      this.volumeQueue.add(key);
    });
  }
}
