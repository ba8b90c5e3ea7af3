// The replication manager (pkg/controller/replication): upstream runs the ReplicaSet controller over
// ReplicationControllers, converting each RC to a ReplicaSet (its selector map as matchLabels) in its
// informer adapters; here the ReplicaSet controller is given the RC kind to keep, with its group
// version (v1), its events' source (replication-controller) and the same conversion.

import { asReplicaSet, type ReplicationController } from '../api/replication-controller.js';
import type { ControllerContext } from './context.js';
import { ReplicaSetController, type ReplicatedKind } from './replicaset.js';

export const replicationControllerKind: ReplicatedKind = {
  kind: 'ReplicationController',
  apiVersion: 'v1',
  component: 'replication-controller',
  queueName: 'replicationmanager',
  asReplicaSet: (o) => asReplicaSet(o as ReplicationController),
};

export function startReplicationManager(ctx: ControllerContext): ReplicaSetController {
  return new ReplicaSetController(ctx, replicationControllerKind);
}
