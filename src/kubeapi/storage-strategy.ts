// How StorageClasses, PersistentVolumes and PersistentVolumeClaims are checked on their way into
// storage (pkg/registry/storage/storageclass, pkg/registry/core/persistentvolume and
// persistentvolumeclaim strategies) and the admission plugins of the storage kinds:
// StorageObjectInUseProtection (the kubernetes.io/pv-protection and pvc-protection finalizers on
// create), DefaultStorageClass (a claim that names no class gets the default one) and
// PersistentVolumeClaimResize (a bound claim grows only where its class allows expansion).

import { kindTypes } from '../api/schema.js';
import {
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  defaultStorageClass,
  isDefaultStorageClass,
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimUpdate,
  validatePersistentVolumeUpdate,
  validateStorageClass,
  validateStorageClassUpdate,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../api/validation/storage.js';
import { ApiError } from '../http/status.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

export const pvProtectionFinalizer = 'kubernetes.io/pv-protection';
export const pvcProtectionFinalizer = 'kubernetes.io/pvc-protection';

function withFinalizer(o: KubeObject, finalizer: string): KubeObject {
  const f = o.metadata?.finalizers ?? [];
  if (f.includes(finalizer)) return o;
  return { ...o, metadata: { ...o.metadata, finalizers: [...f, finalizer] } };
}

export const storageClassStrategy: ObjectStrategy = {
  kind: 'StorageClass',
  resource: 'storageclasses',
  apiVersion: 'storage.k8s.io/v1',
  namespaced: false,
  schemaType: kindTypes.StorageClass,
  defaults: (o) => defaultStorageClass(o as StorageClass) as KubeObject,
  validate: (o) => validateStorageClass(o as StorageClass),
  validateUpdate: (next, old) => validateStorageClassUpdate(next as StorageClass, old as StorageClass),
};

export const persistentVolumeStrategy: ObjectStrategy = {
  kind: 'PersistentVolume',
  resource: 'persistentvolumes',
  apiVersion: 'v1',
  namespaced: false,
  schemaType: kindTypes.PersistentVolume,
  statusSubresource: true,
  noGeneration: true,
  // PrepareForCreate: Pending since the volume's creation (PersistentVolumeLastPhaseTransitionTime).
  initialStatus: (created) => ({ phase: 'Pending', lastPhaseTransitionTime: created }),
  defaults: (o) => defaultPersistentVolume(o as PersistentVolume) as KubeObject,
  prepareForCreate: (o) => withFinalizer(o, pvProtectionFinalizer),
  validate: (o) => validatePersistentVolume(o as PersistentVolume),
  validateUpdate: (next, old) => validatePersistentVolumeUpdate(next as PersistentVolume, old as PersistentVolume),
};

/** The default class a claim without one gets: the newest of those marked default (GetDefaultClass). */
export function defaultClassOf(classes: readonly StorageClass[]): StorageClass | undefined {
  const defaults = classes.filter(isDefaultStorageClass);
  defaults.sort((a, b) => {
    const ta = a.metadata?.creationTimestamp ?? '';
    const tb = b.metadata?.creationTimestamp ?? '';
    if (ta !== tb) return ta > tb ? -1 : 1;
    return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
  });
  return defaults[0];
}

/** DefaultStorageClass on create; PersistentVolumeClaimResize on update. */
function admitClaim(o: KubeObject, read: (kind: string) => readonly KubeObject[], old: KubeObject | undefined): KubeObject {
  const pvc = o as PersistentVolumeClaim & KubeObject;
  if (!old) {
    if (pvc.spec?.storageClassName !== undefined) return pvc;
    const def = defaultClassOf(read('StorageClass') as StorageClass[]);
    if (!def) return pvc;
    return { ...pvc, spec: { ...pvc.spec, storageClassName: def.metadata?.name ?? '' } } as KubeObject;
  }
  const was = old as PersistentVolumeClaim;
  const before = was.spec?.resources?.requests?.storage;
  const after = pvc.spec?.resources?.requests?.storage;
  if (before === undefined || after === undefined || String(before) === String(after)) return pvc;
  const className = pvc.spec?.storageClassName ?? '';
  const sc = (read('StorageClass') as StorageClass[]).find((c) => c.metadata?.name === className);
  // PersistentVolumeClaimResize: only a claim of a class that allows expansion may grow.
  if (!className || !sc?.allowVolumeExpansion) {
    const name = pvc.metadata?.name ?? '';
    throw new ApiError(
      403,
      'Forbidden',
      `persistentvolumeclaims ${JSON.stringify(name)} is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`,
      { name, kind: 'persistentvolumeclaims' },
    );
  }
  return pvc;
}

export const persistentVolumeClaimStrategy: ObjectStrategy = {
  kind: 'PersistentVolumeClaim',
  resource: 'persistentvolumeclaims',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.PersistentVolumeClaim,
  statusSubresource: true,
  noGeneration: true,
  initialStatus: () => ({ phase: 'Pending' }),
  defaults: (o) => defaultPersistentVolumeClaim(o as PersistentVolumeClaim) as KubeObject,
  prepareForCreate: (o) => withFinalizer(o, pvcProtectionFinalizer),
  validate: (o) => validatePersistentVolumeClaim(o as PersistentVolumeClaim),
  validateUpdate: (next, old) => validatePersistentVolumeClaimUpdate(next as PersistentVolumeClaim, old as PersistentVolumeClaim),
  admit: admitClaim,
};

export const storageStrategies: readonly ObjectStrategy[] = [storageClassStrategy, persistentVolumeStrategy, persistentVolumeClaimStrategy];
