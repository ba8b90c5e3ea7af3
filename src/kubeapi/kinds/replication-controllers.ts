// The resource table's row for v1 ReplicationControllers: kept by the object store
// (strategies.ts replicationControllerStrategy), kept running by the ReplicaSet controller
// (controllers/replication.ts), with status and autoscaling/v1 scale subresources (`kubectl scale
// rc`; the Scale's selector from the RC's selector map), printed as `kubectl get rc` prints them
// (printReplicationController: NAME, DESIRED, CURRENT, READY, AGE; wide: CONTAINERS, IMAGES, SELECTOR,
// the same columns as a ReplicaSet's). Upstream: pkg/registry/core/replicationcontroller.

import type { ReplicationController } from '../../api/replication-controller.js';
import type { ReplicaSet } from '../../api/types.js';
import { replicaSetTable } from '../../printers/workload-tables.js';
import { rowObject, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { mergeSchema } from '../patch.js';
import { resource } from '../resource-def.js';
import { podMergeKeys } from './pods.js';

/** The RC as a ReplicaSet's columns read it: its selector map as matchLabels. */
function asReplicaSet(rc: ReplicationController): ReplicaSet {
  const { selector, ...spec } = rc.spec ?? {};
  return { ...rc, spec: { ...spec, selector: { matchLabels: { ...(selector ?? {}) } } } } as ReplicaSet;
}

function rcTable(items: readonly KubeObject[], opts: TableOptions) {
  const t = replicaSetTable(
    items.map((o) => asReplicaSet(o as ReplicationController)),
    opts,
  );
  t.rows.forEach((r, i) => (r.object = rowObject(items[i]!, opts.includeObject ?? 'Metadata')));
  return t;
}

const mergeKeys: Record<string, string> = { 'status.conditions': 'type' };
for (const [path, key] of Object.entries(podMergeKeys)) if (path.startsWith('spec.')) mergeKeys[`spec.template.${path}`] = key;

export const replicationControllers = resource({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  resource: 'replicationcontrollers',
  singular: 'replicationcontroller',
  shortNames: ['rc'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('ReplicationController'),
  table: rcTable,
  mergeSchema: mergeSchema(mergeKeys),
  status: ['get', 'patch', 'update'],
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector', labelSelectorIsMap: true },
});
