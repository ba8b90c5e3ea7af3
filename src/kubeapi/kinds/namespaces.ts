// The resource table's row for core/v1 Namespaces: the Namespaces the object store keeps (created and
// deleted through the API: Terminating until the namespace controller has deleted their content),
// plus those that exist without being stored — the system namespaces and any a static pod uses —
// listed as Active. `default`, `kube-system` and `kube-public` may not be deleted (NamespaceLifecycle).

import type { KubeBackend, KubeObject, Storage } from '../backend.js';
import { ApiError } from '../../http/status.js';
import { defaultNamespaceObject } from '../../api/namespace.js';
import { resource } from '../resource-def.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import { translateTimestampSince } from '../../printers/ages.js';

const systemNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/** The namespaces the API server refuses to delete (immortalNamespaces). */
const immortalNamespaces = ['default', 'kube-system', 'kube-public'];

/** A namespace that exists without being stored, created when its first pod was (or with no time when it has none). */
function implicitNamespace(b: KubeBackend, name: string): KubeObject {
  const created = b
    .listPods()
    .items.filter((p) => (p.metadata?.namespace ?? 'default') === name)
    .map((p) => p.metadata?.creationTimestamp)
    .filter((t): t is string => typeof t === 'string')
    .sort()[0];
  const metadata = { name, ...(created ? { creationTimestamp: created } : {}) };
  return { kind: 'Namespace', apiVersion: 'v1', ...defaultNamespaceObject({ metadata }) } as KubeObject;
}

/** A backend that stores no Namespaces: the namespaces its pods use, and `default`, read-only. */
function readOnlyNamespaces(b: KubeBackend): Storage {
  return {
    list: () => ({
      items: b
        .namespaces()
        .sort()
        .map((n) => implicitNamespace(b, n)),
      resourceVersion: b.listPods().resourceVersion,
    }),
    get: (_ns, name) => (b.namespaces().includes(name) ? implicitNamespace(b, name) : undefined),
  };
}

function namespaceStorage(b: KubeBackend): Storage {
  const stored = b.objects?.storage('Namespace');
  if (!stored) return readOnlyNamespaces(b);
  const implicit = () => {
    const names = new Set([...systemNamespaces, ...b.namespaces()]);
    for (const o of stored.list().items) names.delete(o.metadata?.name ?? '');
    return [...names].map((n) => implicitNamespace(b, n));
  };
  return {
    list: () => {
      const l = stored.list();
      const items = [...l.items, ...implicit()].sort((x, y) => ((x.metadata?.name ?? '') < (y.metadata?.name ?? '') ? -1 : 1));
      return { items, ...(l.resourceVersion !== undefined ? { resourceVersion: l.resourceVersion } : {}) };
    },
    get: (_ns, name) => stored.get('', name) ?? implicit().find((o) => o.metadata?.name === name),
    create: (obj, opts) => stored.create!(obj, opts),
    // A namespace that exists without being stored is stored by its first write.
    update: async (obj, opts) => {
      const name = obj.metadata?.name ?? '';
      if (!stored.get('', name) && implicit().some((o) => o.metadata?.name === name)) await stored.create!(implicitNamespace(b, name), {});
      const current = stored.get('', name);
      return stored.update!(
        { ...obj, metadata: { ...obj.metadata, resourceVersion: obj.metadata?.resourceVersion ?? current?.metadata?.resourceVersion } },
        opts,
      );
    },
    delete: async (_ns, name, opts) => {
      if (immortalNamespaces.includes(name)) {
        throw new ApiError(403, 'Forbidden', `namespaces ${JSON.stringify(name)} is forbidden: this namespace may not be deleted`, {
          name,
          kind: 'namespaces',
        });
      }
      if (!stored.get('', name) && implicit().some((o) => o.metadata?.name === name)) await stored.create!(implicitNamespace(b, name), {});
      return stored.delete!('', name, opts);
    },
    watch: (rv, on) => stored.watch!(rv, on),
  };
}

/** kubectl's namespace columns (printNamespace): NAME, STATUS, AGE. */
function namespaceTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [col('Name', nameDescription, 0, 'string', 'name'), col('Status', 'The status of the namespace'), col('Age', ageDescription)];
  const rows = items.map((o) => ({
    cells: [
      o.metadata?.name ?? '',
      (o as { status?: { phase?: string } }).status?.phase ?? '',
      translateTimestampSince(o.metadata?.creationTimestamp, opts.now),
    ],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const namespaces = resource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  storage: namespaceStorage,
  table: namespaceTable,
});
