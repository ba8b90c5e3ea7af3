// The workload controllers of the standalone agent, started together over one set of shared
// informers (kube-controller-manager's role, for the kinds this agent keeps): ReplicaSets, ReplicationControllers,
// Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Namespaces, PodDisruptionBudgets (the
// disruption controller), HorizontalPodAutoscalers and the garbage collector. In
// cluster mode the cluster's own controllers run these.

import type { EventRecorderFactory } from '../events/recorder.js';
import type { KubeBackend } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { ControllerContext } from './context.js';
import { CronJobController } from './cronjob.js';
import { DaemonSetController } from './daemonset.js';
import { DeploymentController } from './deployment.js';
import { DisruptionController } from './disruption.js';
import { GarbageCollector } from './garbage-collector.js';
import { HorizontalController } from './horizontal.js';
import { JobController } from './job.js';
import { NamespaceController } from './namespace.js';
import { ReplicaSetController } from './replicaset.js';
import { startReplicationManager } from './replication.js';
import { StatefulSetController } from './statefulset.js';

export interface WorkloadControllers {
  /** Resolves once every controller's queue is empty (tests, benchmarks). */
  idle(): Promise<void>;
  stop(): void;
}

export interface WorkloadControllerOptions {
  /** --horizontal-pod-autoscaler-sync-period. */
  hpaSyncPeriodMs?: number;
}

export function startWorkloadControllers(
  backend: KubeBackend,
  clock: Clock,
  logger: Logger,
  events: EventRecorderFactory,
  opts: WorkloadControllerOptions = {},
): WorkloadControllers {
  const ctx = new ControllerContext(backend, clock, logger, events);
  // Each registers its handlers and its work queue with the context; their order does not matter.
  new ReplicaSetController(ctx);
  if (backend.objects?.storage('ReplicationController')) startReplicationManager(ctx);
  new DeploymentController(ctx);
  new JobController(ctx);
  new StatefulSetController(ctx);
  new DaemonSetController(ctx);
  new CronJobController(ctx);
  if (backend.objects?.storage('PodDisruptionBudget')) new DisruptionController(ctx);
  if (backend.objects?.storage('HorizontalPodAutoscaler'))
    new HorizontalController(ctx, { ...(opts.hpaSyncPeriodMs !== undefined ? { syncPeriodMs: opts.hpaSyncPeriodMs } : {}) });
  new NamespaceController(ctx);
  new GarbageCollector(ctx);
  ctx.start();
  return {
    idle: () => ctx.idle(),
    stop: () => ctx.stop(),
  };
}
