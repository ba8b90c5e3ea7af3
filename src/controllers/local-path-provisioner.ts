// The built-in local provisioner `podvisor.io/local-path` (rancher's local-path-provisioner, driven as
// sig-storage's external provisioner library drives one): a claim annotated for it
// (volume.kubernetes.io/storage-provisioner) gets a directory of its own under the root dir,
// `<root>/local-path/<pv>_<namespace>_<claim>` with mode 0777 (so non-root containers can write), and
// a PersistentVolume `pvc-<claim uid>` pre-bound to it (claimRef), of the class's reclaim policy, with
// the provisioned-by annotation and node affinity to this node; a WaitForFirstConsumer claim waits for
// the node the scheduler selected. The PV binder then binds them. The volume's deleter removes the
// directory when the binder reclaims a Delete volume. A claim of a class that allows expansion may
// grow: the new size is recorded on the volume and the claim's status (capacity is recorded, not
// enforced, as local-path does not enforce it). The `standard` class (default, WaitForFirstConsumer,
// Delete) is stored at the first start, as kind stores its own.

import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseQuantity } from '../api/quantity.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../api/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../api/validation/names.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { claimClass, selectedNodeAnnotation } from '../scheduler/volume-match.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import { annDynamicallyProvisioned, annStorageProvisioner, type VolumeDeleter } from './persistentvolume.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, workloadRef } from './workload-events.js';

export const localPathProvisioner = 'podvisor.io/local-path';
export const defaultClassName = 'standard';

type Claim = PersistentVolumeClaim & KubeObject;

export interface LocalPathOptions {
  /** The agent's root dir: volumes live in `<rootDir>/local-path`. */
  rootDir: string;
  /** This node's name: the volumes' node affinity and the selected node a claim must name. */
  nodeName: string;
}

/** The directory of a provisioned volume; throws for a name that could step out of the volumes' directory. */
export function volumeDir(rootDir: string, pvName: string, namespace: string, claim: string): string {
  for (const [what, v, errs] of [
    ['volume', pvName, isDNS1123Subdomain(pvName)],
    ['namespace', namespace, isDNS1123Label(namespace)],
    ['claim', claim, isDNS1123Subdomain(claim)],
  ] as const) {
    if (errs.length > 0 || v.includes('/') || v.includes('..')) throw new Error(`invalid ${what} name ${JSON.stringify(v)}: ${errs.join('; ')}`);
  }
  return join(localPathRoot(rootDir), `${pvName}_${namespace}_${claim}`);
}

export function localPathRoot(rootDir: string): string {
  return join(rootDir, 'local-path');
}

/** The `standard` StorageClass as it is stored at the first start. */
export function standardStorageClass(): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: defaultClassName, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: localPathProvisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
}

export class LocalPathProvisioner implements VolumeDeleter {
  private readonly claims: Informer<Claim>;
  private readonly volumes: Informer<PersistentVolume & KubeObject>;
  private readonly classes: Informer<StorageClass & KubeObject>;
  private readonly queue: WorkQueue;
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: LocalPathOptions,
  ) {
    this.recorder = ctx.recorder(`${localPathProvisioner}_${opts.nodeName}`);
    this.claims = ctx.informer<Claim>('PersistentVolumeClaim');
    this.volumes = ctx.informer<PersistentVolume & KubeObject>('PersistentVolume');
    this.classes = ctx.informer<StorageClass & KubeObject>('StorageClass');
    this.queue = ctx.workQueue('local-path-provisioner', (key) => this.sync(key));
    this.claims.on({ onAdd: (c) => this.queue.add(objectKey(c)), onUpdate: (_o, c) => this.queue.add(objectKey(c)) });
  }

  /** Stores the `standard` class unless a class of that name exists. */
  async ensureDefaultClass(): Promise<void> {
    const storage = this.ctx.storage('StorageClass');
    if (storage.get!('', defaultClassName)) return;
    await storage.create!(standardStorageClass() as KubeObject, {}).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
  }

  deleterFor(pv: PersistentVolume): ((pv: PersistentVolume) => Promise<void>) | undefined {
    if (pv.metadata?.annotations?.[annDynamicallyProvisioned] !== localPathProvisioner) return undefined;
    return async (v) => {
      const ref = v.spec?.claimRef;
      const dir = volumeDir(this.opts.rootDir, v.metadata?.name ?? '', ref?.namespace ?? '', ref?.name ?? '');
      if (v.spec?.hostPath?.path !== dir) throw new Error(`volume ${v.metadata?.name ?? ''} is not at ${dir}: not removed`);
      await rm(dir, { recursive: true, force: true });
    };
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const claim = this.claims.get(ns, name);
    if (!claim || claim.metadata?.deletionTimestamp) return;
    try {
      if (claim.spec?.volumeName) await this.expand(claim);
      else await this.provision(claim);
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      this.queue.add(key);
    }
  }

  private async provision(claim: Claim): Promise<void> {
    if (claim.metadata?.annotations?.[annStorageProvisioner] !== localPathProvisioner) return;
    const sc = this.classes.get('', claimClass(claim));
    if (!sc || sc.provisioner !== localPathProvisioner) return;
    const selected = claim.metadata?.annotations?.[selectedNodeAnnotation];
    if (sc.volumeBindingMode === 'WaitForFirstConsumer' && !selected) return;
    const ref = workloadRef(claim, 'v1', 'PersistentVolumeClaim');
    if (selected && selected !== this.opts.nodeName) {
      this.recorder.event(
        ref,
        'Warning',
        'ProvisioningFailed',
        `failed to provision volume with StorageClass "${sc.metadata?.name ?? ''}": node "${selected}" is not this node`,
      );
      return;
    }
    const pvName = `pvc-${claim.metadata?.uid ?? ''}`;
    if (this.volumes.get('', pvName)) return;
    const unsupported = (claim.spec?.accessModes ?? []).filter((m) => m !== 'ReadWriteOnce' && m !== 'ReadWriteOncePod');
    if (unsupported.length > 0 || claim.spec?.volumeMode === 'Block') {
      const why =
        claim.spec?.volumeMode === 'Block'
          ? 'Only Filesystem volume mode is supported'
          : `Only support ReadWriteOnce and ReadWriteOncePod access modes, not ${unsupported.join(', ')}`;
      this.recorder.event(ref, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${sc.metadata?.name ?? ''}": ${why}`);
      return;
    }
    const namespace = claim.metadata?.namespace ?? '';
    const name = claim.metadata?.name ?? '';
    this.recorder.event(ref, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${namespace}/${name}"`);
    let dir: string;
    try {
      dir = volumeDir(this.opts.rootDir, pvName, namespace, name);
      await mkdir(dir, { recursive: true, mode: 0o777 });
      await chmod(dir, 0o777);
    } catch (err) {
      this.recorder.event(ref, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${sc.metadata?.name ?? ''}": ${errorText(err)}`);
      return;
    }
    const pv: PersistentVolume = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: pvName,
        annotations: { [annDynamicallyProvisioned]: localPathProvisioner, 'local.path.provisioner/selected-node': this.opts.nodeName },
      },
      spec: {
        accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
        capacity: { storage: String(claim.spec?.resources?.requests?.storage ?? '0') },
        claimRef: {
          kind: 'PersistentVolumeClaim',
          apiVersion: 'v1',
          namespace,
          name,
          uid: claim.metadata?.uid ?? '',
          resourceVersion: claim.metadata?.resourceVersion ?? '',
        },
        hostPath: { path: dir, type: 'DirectoryOrCreate' },
        nodeAffinity: {
          required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [this.opts.nodeName] }] }] },
        },
        persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
        storageClassName: sc.metadata?.name ?? '',
        volumeMode: 'Filesystem',
        ...(sc.mountOptions ? { mountOptions: sc.mountOptions } : {}),
      },
    };
    await this.ctx.storage('PersistentVolume').create!(pv as KubeObject, {});
    this.recorder.event(ref, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`);
  }

  /** A bound claim that asks for more than its volume has: the volume's capacity and the claim's status record the new size. */
  private async expand(claim: Claim): Promise<void> {
    const pv = this.volumes.get('', claim.spec!.volumeName!);
    if (!pv || pv.metadata?.annotations?.[annDynamicallyProvisioned] !== localPathProvisioner) return;
    const want = claim.spec?.resources?.requests?.storage;
    if (want === undefined || claim.status?.phase !== 'Bound') return;
    const sc = this.classes.get('', claimClass(claim));
    if (!sc?.allowVolumeExpansion) return;
    const has = String(pv.spec?.capacity?.storage ?? '');
    if (has === String(want) && String(claim.status?.capacity?.storage ?? '') === String(want)) return;
    if (parseQuantity(String(want)).cmp(parseQuantity(has || '0')) < 0) return;
    const ref = workloadRef(claim, 'v1', 'PersistentVolumeClaim');
    if (has !== String(want)) {
      this.recorder.event(ref, 'Normal', 'Resizing', `External resizer is resizing volume ${pv.metadata?.name ?? ''}`);
      await this.ctx.storage('PersistentVolume').update!(
        { ...pv, spec: { ...pv.spec, capacity: { ...pv.spec?.capacity, storage: String(want) } } } as KubeObject,
        {},
      );
    }
    await this.ctx.storage('PersistentVolumeClaim').updateStatus!(
      { ...claim, status: { ...(claim.status ?? {}), capacity: { ...(claim.status?.capacity ?? {}), storage: String(want) } } } as KubeObject,
      {},
    );
    this.recorder.event(ref, 'Normal', 'VolumeResizeSuccessful', `resize volume "${pv.metadata?.name ?? ''}" by resizer "${localPathProvisioner}" succeeded`);
  }
}
