// The resource table's row for v1 LimitRanges: kept by the object store (strategies.ts
// limitRangeStrategy: SetDefaults_LimitRangeItem, ValidateLimitRange), read at pod admission by the
// LimitRanger (limit-ranger.ts), printed as `kubectl get limitrange` prints them (printLimitRange: NAME,
// CREATED AT). Upstream: pkg/registry/core/limitrange.

import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';
import { col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';

const createdAtDescription =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function limitRangeTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [col('Name', nameDescription, 0, 'string', 'name'), col('Created At', createdAtDescription, 0, 'date')];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', o.metadata?.creationTimestamp ?? ''],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const limitRanges = resource({
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  resource: 'limitranges',
  singular: 'limitrange',
  shortNames: ['limits'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('LimitRange'),
  table: limitRangeTable,
});
