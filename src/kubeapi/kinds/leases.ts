// The resource table's row for coordination.k8s.io/v1 Leases: kept by the object store
// (lease-strategy.ts); the node agent's heartbeat Lease in kube-node-lease, which `kubectl describe
// node` reads. kubectl's lease columns (printLease): NAME, HOLDER, AGE.
// Upstream: pkg/registry/coordination/lease, pkg/printers/internalversion printLease.

import type { KubeObject } from '../backend.js';
import type { LeaseSpec } from '../lease-strategy.js';
import { resource } from '../resource-def.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import { translateTimestampSince } from '../../printers/ages.js';

function leaseTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [col('Name', nameDescription, 0, 'string', 'name'), col('Holder', 'The holder of the lease'), col('Age', ageDescription)];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', (o as { spec?: LeaseSpec }).spec?.holderIdentity ?? '', translateTimestampSince(o.metadata?.creationTimestamp, opts.now)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const leases = resource({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  resource: 'leases',
  singular: 'lease',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('Lease'),
  table: leaseTable,
});
