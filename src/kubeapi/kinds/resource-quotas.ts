// The resource table's row for v1 ResourceQuotas: kept by the object store (strategies.ts
// resourceQuotaStrategy) with a status subresource the quota admission (quota-admission.ts) and the
// resource quota controller write, printed as kubectl 1.20+ prints them (printResourceQuota: NAME, AGE,
// REQUEST, LIMIT: `used/hard` per resource, limits.* under LIMIT). Upstream: pkg/registry/core/resourcequota.

import type { ResourceQuota } from '../../api/validation/resource-quota.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

/** The REQUEST and LIMIT cells: `pods: 1/2, requests.cpu: 500m/1`, limits.* in the second. */
export function quotaCells(q: ResourceQuota): [string, string] {
  const hard = (q.status?.hard ?? {}) as Record<string, string>;
  const used = (q.status?.used ?? {}) as Record<string, string>;
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const pieces = name.split('.');
    (pieces.length > 1 && pieces[0] === 'limits' ? limit : request).push(`${name}: ${used[name] ?? '0'}/${hard[name]}`);
  }
  return [request.join(', '), limit.join(', ')];
}

function quotaTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Age', ageDescription),
    col('Request', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    col('Limit', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
  ];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', translateTimestampSince(o.metadata?.creationTimestamp, opts.now), ...quotaCells(o as ResourceQuota)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const resourceQuotas = resource({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  resource: 'resourcequotas',
  singular: 'resourcequota',
  shortNames: ['quota'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('ResourceQuota'),
  table: quotaTable,
  status: ['get', 'patch', 'update'],
});
