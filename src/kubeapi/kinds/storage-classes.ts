// The resource table's row for storage.k8s.io/v1 StorageClasses: kept by the object store
// (storage-strategy.ts), printed as `kubectl get sc` prints them (printStorageClass: NAME with
// ` (default)` for the default class, PROVISIONER, RECLAIMPOLICY, VOLUMEBINDINGMODE,
// ALLOWVOLUMEEXPANSION, AGE). Upstream: pkg/registry/storage/storageclass, pkg/printers/internalversion.

import { isDefaultStorageClass, type StorageClass } from '../../api/validation/storage.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

function storageClassTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Provisioner', 'Indicates the type of the provisioner.'),
    col('ReclaimPolicy', 'Dynamically provisioned PersistentVolumes of this storage class are created with this reclaimPolicy. Defaults to Delete.'),
    col(
      'VolumeBindingMode',
      'VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound. When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.',
    ),
    col('AllowVolumeExpansion', 'AllowVolumeExpansion shows whether the storage class allow volume expand'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => {
    const sc = o as StorageClass;
    const name = sc.metadata?.name ?? '';
    return {
      cells: [
        isDefaultStorageClass(sc) ? `${name} (default)` : name,
        sc.provisioner ?? '',
        sc.reclaimPolicy ?? 'Delete',
        sc.volumeBindingMode ?? 'Immediate',
        String(sc.allowVolumeExpansion ?? false),
        translateTimestampSince(sc.metadata?.creationTimestamp, opts.now),
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const storageClasses = resource({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'StorageClass',
  resource: 'storageclasses',
  singular: 'storageclass',
  shortNames: ['sc'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('StorageClass'),
  table: storageClassTable,
});
