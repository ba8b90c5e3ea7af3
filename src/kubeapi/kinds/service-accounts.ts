// The resource table's row for core/v1 ServiceAccounts: kept by the object store
// (strategies.ts serviceAccountStrategy), printed as `kubectl get sa` prints them (printServiceAccount:
// NAME, SECRETS, AGE), with the serviceaccounts/token subresource (TokenRequest) where the backend
// signs tokens. Upstream: pkg/registry/core/serviceaccount.

import type { ServiceAccount } from '../../api/service-account.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';
import { tokenSubresource } from '../serviceaccount/token-request.js';

function serviceAccountTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Secrets', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', 0, 'integer'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', (o as ServiceAccount).secrets?.length ?? 0, translateTimestampSince(o.metadata?.creationTimestamp, opts.now)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const serviceAccounts = resource<ServiceAccount & KubeObject>({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  resource: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('ServiceAccount'),
  table: serviceAccountTable,
  connect: { token: tokenSubresource },
});
