// The resource table's rows for v1 PersistentVolumes and PersistentVolumeClaims: kept by the object
// store (storage-strategy.ts) with status subresources the PV binder writes, printed as `kubectl get
// pv,pvc` prints them (printPersistentVolume: NAME, CAPACITY, ACCESS MODES, RECLAIM POLICY, STATUS,
// CLAIM, STORAGECLASS, VOLUMEATTRIBUTESCLASS, REASON, AGE; printPersistentVolumeClaim: NAME, STATUS,
// VOLUME, CAPACITY, ACCESS MODES, STORAGECLASS, VOLUMEATTRIBUTESCLASS, AGE; VOLUMEMODE with -o wide).
// Upstream: pkg/registry/core/persistentvolume, persistentvolumeclaim, pkg/printers/internalversion.

import type { PersistentVolume, PersistentVolumeClaim } from '../../api/validation/storage.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

/** GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, each once. */
export function accessModesString(modes: readonly string[] | undefined): string {
  const short: Array<[string, string]> = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  return short
    .filter(([m]) => (modes ?? []).includes(m))
    .map(([, s]) => s)
    .join(',');
}

/** GetPersistentVolumeClass / GetPersistentVolumeClaimClass: the spec's class, else the beta annotation. */
export function volumeClassName(o: { metadata?: { annotations?: Record<string, string> }; spec?: { storageClassName?: string } }): string {
  return o.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? o.spec?.storageClassName ?? '';
}

function pvTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col(
      'Capacity',
      "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
    ),
    col(
      'Access Modes',
      'accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes',
    ),
    col(
      'Reclaim Policy',
      'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming',
    ),
    col(
      'Status',
      'phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase',
    ),
    col(
      'Claim',
      'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding',
    ),
    col(
      'StorageClass',
      'storageClassName is the name of StorageClass to which this persistent volume belongs. Empty value means that this volume does not belong to any StorageClass.',
    ),
    col(
      'VolumeAttributesClass',
      'Name of VolumeAttributesClass to which this persistent volume belongs. Empty value is not allowed. When this field is not set, it indicates that this volume does not belong to any VolumeAttributesClass. This field is mutable and can be changed by the CSI driver after a volume has been updated successfully to a new class. For an unbound PersistentVolume, the volumeAttributesClassName will be matched with unbound PersistentVolumeClaims during the binding process. This is a beta field and requires enabling VolumeAttributesClass feature (off by default).',
    ),
    col('Reason', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.'),
    col('Age', ageDescription),
    col(
      'VolumeMode',
      'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.',
      1,
    ),
  ];
  const rows = items.map((o) => {
    const pv = o as PersistentVolume;
    const ref = pv.spec?.claimRef;
    return {
      cells: [
        pv.metadata?.name ?? '',
        String(pv.spec?.capacity?.storage ?? '0'),
        accessModesString(pv.spec?.accessModes),
        pv.spec?.persistentVolumeReclaimPolicy ?? '',
        pv.metadata?.deletionTimestamp ? 'Terminating' : (pv.status?.phase ?? ''),
        ref ? `${ref.namespace ?? ''}/${ref.name ?? ''}` : '',
        volumeClassName(pv),
        pv.spec?.volumeAttributesClassName || '<unset>',
        pv.status?.reason ?? '',
        translateTimestampSince(pv.metadata?.creationTimestamp, opts.now),
        pv.spec?.volumeMode ?? '<unset>',
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

function pvcTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Status', 'phase represents the current phase of PersistentVolumeClaim.'),
    col('Volume', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
    col('Capacity', 'capacity represents the actual resources of the underlying volume.'),
    col(
      'Access Modes',
      'accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1',
    ),
    col(
      'StorageClass',
      'storageClassName is the name of the StorageClass required by the claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#class-1',
    ),
    col('VolumeAttributesClass', 'volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.'),
    col('Age', ageDescription),
    col('VolumeMode', 'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.', 1),
  ];
  const rows = items.map((o) => {
    const pvc = o as PersistentVolumeClaim;
    const bound = Boolean(pvc.spec?.volumeName);
    return {
      cells: [
        pvc.metadata?.name ?? '',
        pvc.metadata?.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? ''),
        pvc.spec?.volumeName ?? '',
        bound ? String(pvc.status?.capacity?.storage ?? '0') : '',
        bound ? accessModesString(pvc.status?.accessModes) : '',
        volumeClassName(pvc),
        pvc.spec?.volumeAttributesClassName || '<unset>',
        translateTimestampSince(pvc.metadata?.creationTimestamp, opts.now),
        pvc.spec?.volumeMode ?? '<unset>',
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const persistentVolumes = resource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  resource: 'persistentvolumes',
  singular: 'persistentvolume',
  shortNames: ['pv'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('PersistentVolume'),
  table: pvTable,
  status: ['get', 'patch', 'update'],
});

export const persistentVolumeClaims = resource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  resource: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  shortNames: ['pvc'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('PersistentVolumeClaim'),
  table: pvcTable,
  status: ['get', 'patch', 'update'],
});
