// The resource table's row for node.k8s.io/v1 RuntimeClasses (cluster-scoped), kept by the object
// store (runtime-class-strategy.ts: validated as ValidateRuntimeClass does, the handler immutable), printed as
// `kubectl get runtimeclass` prints them (printRuntimeClass: NAME, HANDLER, AGE). The kubelet resolves
// a pod's runtimeClassName to its handler through them, and the RuntimeClass admission plugin
// (agent/runtime-class-admission.ts) sets a pod's overhead and scheduling from them.
// Upstream: pkg/registry/node/runtimeclass, pkg/printers/internalversion printRuntimeClass.

import type { RuntimeClass } from '../../api/validation/node.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

const handlerDescription =
  'handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class. ' +
  'The possible values are specific to the node & CRI configuration.  It is assumed that all handlers are available on every node, ' +
  'and handlers of the same name are equivalent on every node. For example, a handler called "runc" might specify that the runc OCI ' +
  'runtime (using native Linux containers) will be used to run the containers in a pod. The Handler must be lowercase, conform to the ' +
  'DNS Label (RFC 1123) requirements, and is immutable.';

function runtimeClassTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [col('Name', nameDescription, 0, 'string', 'name'), col('Handler', handlerDescription), col('Age', ageDescription)];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', (o as RuntimeClass).handler ?? '', translateTimestampSince(o.metadata?.creationTimestamp, opts.now)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const runtimeClasses = resource({
  group: 'node.k8s.io',
  version: 'v1',
  kind: 'RuntimeClass',
  resource: 'runtimeclasses',
  singular: 'runtimeclass',
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('RuntimeClass'),
  table: runtimeClassTable,
});
