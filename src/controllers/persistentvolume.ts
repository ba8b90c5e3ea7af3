// The persistent volume controller (pkg/controller/volume/persistentvolume/pv_controller.go): binds
// claims to volumes and keeps both phases.
// - A claim without a volume (syncUnboundClaim) is bound to the volume findMatchingVolume picks (the
//   one pre-bound to it by claimRef first); with none, a WaitForFirstConsumer claim waits for the
//   scheduler (event WaitForFirstConsumer) until a pod selects a node; a claim of a class with a
//   provisioner is annotated for it (volume.kubernetes.io/storage-provisioner, event
//   ExternalProvisioning); else FailedBinding. A claim naming its volume (spec.volumeName) is bound
//   to it when the volume is free and satisfies it.
// - A bound claim whose volume is gone is Lost (ClaimLost).
// - A volume without claimRef is Available; bound to a claim that is gone, Released, then reclaimed
//   by its policy: Retain keeps it Released, Delete has the volume's deleter (the local provisioner
//   for its own volumes) remove it, and Failed where none can (VolumeFailedDelete).
// Volumes bound by the controller carry pv.kubernetes.io/bound-by-controller; bound claims
// pv.kubernetes.io/bind-completed.

import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { claimClass, findMatchingVolume, isVolumeBoundToClaim, selectedNodeAnnotation, volumeSatisfiesClaim } from '../scheduler/volume-match.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, workloadRef } from './workload-events.js';

export const annBoundByController = 'pv.kubernetes.io/bound-by-controller';
export const annBindCompleted = 'pv.kubernetes.io/bind-completed';
export const annStorageProvisioner = 'volume.kubernetes.io/storage-provisioner';
export const annBetaStorageProvisioner = 'volume.beta.kubernetes.io/storage-provisioner';
export const annDynamicallyProvisioned = 'pv.kubernetes.io/provisioned-by';

type Claim = PersistentVolumeClaim & KubeObject;
type Volume = PersistentVolume & KubeObject;

/** Removes a volume's storage for the Delete reclaim policy; undefined when no deleter handles the volume. */
export interface VolumeDeleter {
  deleterFor(pv: PersistentVolume): ((pv: PersistentVolume) => Promise<void>) | undefined;
}

const claimRef = (c: Claim) => workloadRef(c, 'v1', 'PersistentVolumeClaim');
const volumeRef = (v: Volume) => ({ ...workloadRef(v, 'v1', 'PersistentVolume'), namespace: '' });

export class PersistentVolumeController {
  private readonly claims: Informer<Claim>;
  private readonly volumes: Informer<Volume>;
  private readonly classes: Informer<StorageClass & KubeObject>;
  private readonly claimQueue: WorkQueue;
  private readonly volumeQueue: WorkQueue;
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly deleter: VolumeDeleter,
  ) {
    this.recorder = ctx.recorder('persistentvolume-controller');
    this.claims = ctx.informer<Claim>('PersistentVolumeClaim');
    this.volumes = ctx.informer<Volume>('PersistentVolume');
    this.classes = ctx.informer<StorageClass & KubeObject>('StorageClass');
    this.claimQueue = ctx.workQueue('persistentvolume-claims', (key) => this.syncClaimKey(key));
    this.volumeQueue = ctx.workQueue('persistentvolume-volumes', (key) => this.syncVolumeKey(key));
    const claimChanged = (c: Claim) => {
      this.claimQueue.add(objectKey(c));
      if (c.spec?.volumeName) this.volumeQueue.add(`/${c.spec.volumeName}`);
    };
    this.claims.on({
      onAdd: claimChanged,
      onUpdate: (_o, c) => claimChanged(c),
      // A deleted claim releases its volume.
      onDelete: (c) => {
        for (const v of this.volumes.list())
          if (v.spec?.claimRef?.name === c.metadata?.name && v.spec?.claimRef?.namespace === c.metadata?.namespace) this.volumeQueue.add(objectKey(v));
      },
    });
    const volumeChanged = (v: Volume) => {
      this.volumeQueue.add(objectKey(v));
      // An available volume may be the match of any pending claim (upstream's periodic resync).
      for (const c of this.claims.list()) if (!c.spec?.volumeName || c.spec.volumeName === v.metadata?.name) this.claimQueue.add(objectKey(c));
    };
    this.volumes.on({ onAdd: volumeChanged, onUpdate: (_o, v) => volumeChanged(v), onDelete: volumeChanged });
    this.classes.on({
      onAdd: () => {
        for (const c of this.claims.list()) if (!c.spec?.volumeName) this.claimQueue.add(objectKey(c));
      },
    });
  }

  private storageClass(name: string): StorageClass | undefined {
    return name ? this.classes.get('', name) : undefined;
  }

  private async syncClaimKey(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const claim = this.claims.get(ns, name);
    if (!claim) return;
    try {
      if (!claim.spec?.volumeName) await this.syncUnboundClaim(claim);
      else await this.syncBoundClaim(claim);
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      this.claimQueue.add(key);
    }
  }

  private async syncVolumeKey(key: string): Promise<void> {
    const name = key.slice(key.indexOf('/') + 1);
    const pv = this.volumes.get('', name);
    if (!pv) return;
    try {
      await this.syncVolume(pv);
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      this.volumeQueue.add(key);
    }
  }

  // --- claims ---

  private async syncUnboundClaim(claim: Claim): Promise<void> {
    const className = claimClass(claim);
    const sc = this.storageClass(className);
    const delayBinding = sc?.volumeBindingMode === 'WaitForFirstConsumer';
    const pv = findMatchingVolume(claim, this.volumes.list(), undefined, delayBinding);
    if (pv) {
      await this.bind(pv as Volume, claim);
      return;
    }
    if (delayBinding && !claim.metadata?.annotations?.[selectedNodeAnnotation]) {
      this.recorder.event(claimRef(claim), 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
      await this.setClaimPhase(claim, 'Pending');
      return;
    }
    if (className && sc?.provisioner) {
      await this.provisionClaim(claim, sc);
      return;
    }
    if (className && !sc) {
      this.recorder.event(claimRef(claim), 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
    } else {
      this.recorder.event(claimRef(claim), 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
    }
    await this.setClaimPhase(claim, 'Pending');
  }

  /** provisionClaim for an out-of-tree provisioner: the claim is annotated with it, and the provisioner creates the volume. */
  private async provisionClaim(claim: Claim, sc: StorageClass): Promise<void> {
    const provisioner = sc.provisioner;
    const ann = claim.metadata?.annotations ?? {};
    if (ann[annStorageProvisioner] !== provisioner || ann[annBetaStorageProvisioner] !== provisioner) {
      await this.ctx.storage('PersistentVolumeClaim').update!(
        {
          ...claim,
          metadata: { ...claim.metadata, annotations: { ...ann, [annStorageProvisioner]: provisioner, [annBetaStorageProvisioner]: provisioner } },
        } as KubeObject,
        {},
      );
      this.recorder.event(
        claimRef(claim),
        'Normal',
        'ExternalProvisioning',
        `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      return;
    }
    await this.setClaimPhase(claim, 'Pending');
  }

  private async syncBoundClaim(claim: Claim): Promise<void> {
    const volumeName = claim.spec!.volumeName!;
    const pv = this.volumes.get('', volumeName);
    const wasBound = claim.metadata?.annotations?.[annBindCompleted] === 'yes';
    if (!pv) {
      if (wasBound) {
        if (claim.status?.phase !== 'Lost') {
          this.recorder.event(claimRef(claim), 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
          await this.setClaimPhase(claim, 'Lost');
        }
        return;
      }
      this.recorder.event(
        claimRef(claim),
        'Normal',
        'FailedBinding',
        `volume "${volumeName}" requested by claim "${objectKey(claim)}" not found, will try again next time`,
      );
      await this.setClaimPhase(claim, 'Pending');
      return;
    }
    if (!pv.spec?.claimRef) {
      // The claim names a free volume: bind it if it satisfies the claim.
      const why = volumeSatisfiesClaim(pv, claim);
      if (why) {
        this.recorder.event(claimRef(claim), 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volumeName}": ${why}`);
        await this.setClaimPhase(claim, 'Pending');
        return;
      }
      await this.bind(pv, claim);
      return;
    }
    if (isVolumeBoundToClaim(pv, claim)) {
      await this.bind(pv, claim);
      return;
    }
    // The volume is bound to another claim.
    if (wasBound) {
      if (claim.status?.phase !== 'Lost') {
        this.recorder.event(claimRef(claim), 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
        await this.setClaimPhase(claim, 'Lost');
      }
      return;
    }
    this.recorder.event(claimRef(claim), 'Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
    await this.setClaimPhase(claim, 'Pending');
  }

  /** bind: the volume's claimRef, its phase Bound, the claim's volumeName and annotations, its phase Bound with the volume's capacity and modes. */
  private async bind(pv0: Volume, claim0: Claim): Promise<void> {
    let pv = pv0;
    const ref = pv.spec?.claimRef;
    if (!ref || ref.uid !== claim0.metadata?.uid) {
      const ann = { ...(pv.metadata?.annotations ?? {}) };
      if (!ref) ann[annBoundByController] = 'yes';
      pv = (await this.ctx.storage('PersistentVolume').update!(
        {
          ...pv,
          metadata: { ...pv.metadata, annotations: ann },
          spec: {
            ...pv.spec,
            claimRef: {
              kind: 'PersistentVolumeClaim',
              namespace: claim0.metadata?.namespace ?? '',
              name: claim0.metadata?.name ?? '',
              uid: claim0.metadata?.uid ?? '',
              apiVersion: 'v1',
              resourceVersion: claim0.metadata?.resourceVersion ?? '',
            },
          },
        } as KubeObject,
        {},
      )) as Volume;
    }
    await this.setVolumePhase(pv, 'Bound');
    let claim = claim0;
    const cann = claim.metadata?.annotations ?? {};
    const volumeName = pv.metadata?.name ?? '';
    if (claim.spec?.volumeName !== volumeName || cann[annBindCompleted] !== 'yes') {
      const annotations: Record<string, string> = { ...cann, [annBindCompleted]: 'yes' };
      if (claim.spec?.volumeName !== volumeName) annotations[annBoundByController] = 'yes';
      claim = (await this.ctx.storage('PersistentVolumeClaim').update!(
        { ...claim, metadata: { ...claim.metadata, annotations }, spec: { ...claim.spec, volumeName } } as KubeObject,
        {},
      )) as Claim;
    }
    const status = {
      ...(claim.status ?? {}),
      phase: 'Bound',
      accessModes: pv.spec?.accessModes ?? [],
      capacity: { ...(claim.status?.capacity ?? {}), storage: pv.spec?.capacity?.storage ?? '0' },
    };
    if (JSON.stringify(status) !== JSON.stringify(claim.status)) {
      if (claim.status?.phase !== 'Bound') this.recorder.event(claimRef(claim), 'Normal', 'Bound', `Successfully bound to volume "${volumeName}"`);
      await this.ctx.storage('PersistentVolumeClaim').updateStatus!({ ...claim, status } as KubeObject, {});
    }
  }

  private async setClaimPhase(claim: Claim, phase: string): Promise<void> {
    if (claim.status?.phase === phase) return;
    await this.ctx.storage('PersistentVolumeClaim').updateStatus!({ ...claim, status: { ...(claim.status ?? {}), phase } } as KubeObject, {});
  }

  private async setVolumePhase(pv: Volume, phase: string, reason?: { reason: string; message: string }): Promise<Volume> {
    if (pv.status?.phase === phase && (pv.status?.message ?? '') === (reason?.message ?? '')) return pv;
    const status: Record<string, unknown> = { phase };
    if (reason) Object.assign(status, reason);
    status.lastPhaseTransitionTime =
      pv.status?.phase === phase && pv.status.lastPhaseTransitionTime
        ? pv.status.lastPhaseTransitionTime
        : new Date(this.ctx.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return (await this.ctx.storage('PersistentVolume').updateStatus!({ ...pv, status } as KubeObject, {})) as Volume;
  }

  // --- volumes ---

  private async syncVolume(pv: Volume): Promise<void> {
    const ref = pv.spec?.claimRef;
    if (!ref) {
      await this.setVolumePhase(pv, 'Available');
      return;
    }
    if (!ref.uid) {
      // Pre-bound by the user to a claim the claim's sync binds.
      await this.setVolumePhase(pv, 'Available');
      this.claimQueue.add(`${ref.namespace ?? ''}/${ref.name ?? ''}`);
      return;
    }
    const claim = this.claims.get(ref.namespace ?? '', ref.name ?? '');
    if (!claim || claim.metadata?.uid !== ref.uid) {
      await this.released(pv);
      return;
    }
    if (!claim.spec?.volumeName) {
      // Being bound (by this controller or the scheduler's PreBind): the claim's sync finishes it.
      this.claimQueue.add(objectKey(claim));
      return;
    }
    if (claim.spec.volumeName === pv.metadata?.name) {
      await this.setVolumePhase(pv, 'Bound');
      return;
    }
    // The claim is bound to another volume: a volume this controller bound is freed.
    if (pv.metadata?.annotations?.[annBoundByController] === 'yes') {
      const { [annBoundByController]: _gone, ...annotations } = pv.metadata.annotations;
      const { claimRef: _ref, ...spec } = pv.spec ?? {};
      const next = (await this.ctx.storage('PersistentVolume').update!({ ...pv, metadata: { ...pv.metadata, annotations }, spec } as KubeObject, {})) as Volume;
      await this.setVolumePhase(next, 'Available');
    } else {
      await this.released(pv);
    }
  }

  /** The claim is gone: Released, then the reclaim policy (reclaimVolume). */
  private async released(pv0: Volume): Promise<void> {
    let pv = pv0;
    if (pv.status?.phase === 'Failed') return;
    if (pv.status?.phase !== 'Released') pv = await this.setVolumePhase(pv, 'Released');
    const policy = pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Retain') return;
    if (policy === 'Recycle') {
      this.recorder.event(volumeRef(pv), 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
      await this.setVolumePhase(pv, 'Failed', { reason: 'VolumeFailedRecycle', message: 'No recycler plugin found for the volume!' });
      return;
    }
    const remove = this.deleter.deleterFor(pv);
    if (!remove) {
      // An external provisioner's volume is its own to delete; one made by hand has no deleter here.
      if (pv.metadata?.annotations?.[annDynamicallyProvisioned]) return;
      const message = `error getting deleter volume plugin for volume "${pv.metadata?.name ?? ''}": no deletable volume plugin matched`;
      this.recorder.event(volumeRef(pv), 'Warning', 'VolumeFailedDelete', message);
      await this.setVolumePhase(pv, 'Failed', { reason: 'VolumeFailedDelete', message });
      return;
    }
    try {
      await remove(pv);
    } catch (err) {
      this.recorder.event(volumeRef(pv), 'Warning', 'VolumeFailedDelete', errorText(err));
      await this.setVolumePhase(pv, 'Failed', { reason: 'VolumeFailedDelete', message: errorText(err) });
      return;
    }
    await this.ctx.storage('PersistentVolume').delete!('', pv.metadata?.name ?? '', {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }
}

/** The pods of a namespace that use a claim and still hold it (not Succeeded or Failed). */
export function podsUsingClaim(pods: readonly Pod[], namespace: string, claim: string): Pod[] {
  return pods.filter(
    (p) =>
      (p.metadata?.namespace ?? '') === namespace &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed' &&
      (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim),
  );
}
