// The resource table's row for apiextensions.k8s.io/v1 CustomResourceDefinitions: cluster-scoped, kept
// by the object store (apiextensions/crd-strategy.ts), with a status subresource, printed as the API
// server prints them (NAME, CREATED AT). Upstream: apiextensions-apiserver pkg/registry/customresourcedefinition.

import { col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

function crdTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col(
      'Created At',
      'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
      0,
      'date',
    ),
  ];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', o.metadata?.creationTimestamp ?? null],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows as never, opts);
}

export const customResourceDefinitions = resource({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  resource: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('CustomResourceDefinition'),
  table: crdTable,
  status: ['get', 'patch', 'update'],
});
