// The workload controllers of the standalone agent, started together over one set of shared
// informers (kube-controller-manager's role, for the kinds this agent keeps): ReplicaSets, ReplicationControllers,
// Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Namespaces, PodDisruptionBudgets (the
// disruption controller), ResourceQuotas (the resource quota controller), HorizontalPodAutoscalers,
// ClusterRole aggregation, the `default` ServiceAccount and `kube-root-ca.crt` ConfigMap of every
// namespace, the garbage collector and, where claims are kept, the PV binder, the local provisioner
// and the pvc/pv-protection controllers. In
// cluster mode the cluster's own controllers run these.

import type { EventRecorderFactory } from '../events/recorder.js';
import type { KubeBackend } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { ControllerContext } from './context.js';
import { ClusterRoleAggregationController } from './clusterrole-aggregation.js';
import { CronJobController } from './cronjob.js';
import { DaemonSetController } from './daemonset.js';
import { DeploymentController } from './deployment.js';
import { DisruptionController } from './disruption.js';
import { GarbageCollector } from './garbage-collector.js';
import { HorizontalController } from './horizontal.js';
import { JobController } from './job.js';
import { LocalPathProvisioner, type LocalPathOptions } from './local-path-provisioner.js';
import { PersistentVolumeController } from './persistentvolume.js';
import { VolumeProtectionController } from './volume-protection.js';
import { NamespaceController } from './namespace.js';
import { ResourceQuotaController } from './resource-quota.js';
import { ReplicaSetController } from './replicaset.js';
import { RootCACertPublisher } from './root-ca-publisher.js';
import { ServiceAccountsController } from './serviceaccounts.js';
import { startReplicationManager } from './replication.js';
import { StatefulSetController } from './statefulset.js';

export interface WorkloadControllers {
  /** Resolves once every controller's queue is empty (tests, benchmarks). */
  idle(): Promise<void>;
  stop(): void;
}

/** What some controllers need beyond the backend: the CA the root CA publisher writes into every namespace, where the local provisioner keeps its volumes. */
export interface ControllerOptions {
  rootCA?: string;
  storage?: LocalPathOptions;
  /** --horizontal-pod-autoscaler-sync-period. */
  hpaSyncPeriodMs?: number;
}

export function startWorkloadControllers(
  backend: KubeBackend,
  clock: Clock,
  logger: Logger,
  events: EventRecorderFactory,
  opts: ControllerOptions = {},
): WorkloadControllers {
  const ctx = new ControllerContext(backend, clock, logger, events);
  if (opts.storage && backend.objects?.storage('PersistentVolumeClaim')) {
    const provisioner = new LocalPathProvisioner(ctx, opts.storage);
    new PersistentVolumeController(ctx, provisioner);
    new VolumeProtectionController(ctx);
    provisioner.ensureDefaultClass().catch((err: unknown) => logger.warn('The standard StorageClass was not stored', { err: String(err) }));
  }
  // Each registers its handlers and its work queue with the context; their order does not matter.
  new ReplicaSetController(ctx);
  if (backend.objects?.storage('ReplicationController')) startReplicationManager(ctx);
  new DeploymentController(ctx);
  new JobController(ctx);
  new StatefulSetController(ctx);
  new DaemonSetController(ctx);
  new CronJobController(ctx);
  if (backend.objects?.storage('PodDisruptionBudget')) new DisruptionController(ctx);
  if (backend.objects?.storage('ClusterRole')) new ClusterRoleAggregationController(ctx);
  if (backend.objects?.storage('ResourceQuota')) new ResourceQuotaController(ctx);
  if (backend.objects?.storage('HorizontalPodAutoscaler'))
    new HorizontalController(ctx, { ...(opts.hpaSyncPeriodMs !== undefined ? { syncPeriodMs: opts.hpaSyncPeriodMs } : {}) });
  new NamespaceController(ctx);
  if (backend.objects?.storage('ServiceAccount')) new ServiceAccountsController(ctx);
  if (opts.rootCA) new RootCACertPublisher(ctx, opts.rootCA);
  new GarbageCollector(ctx);
  ctx.start();
  return {
    idle: () => ctx.idle(),
    stop: () => ctx.stop(),
  };
}
