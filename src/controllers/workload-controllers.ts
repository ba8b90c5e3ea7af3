// The workload controllers of the standalone agent, started together over one set of shared
// informers (kube-controller-manager's role, for the kinds this agent keeps): ReplicaSets,
// Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Namespaces and the garbage collector. In
// cluster mode the cluster's own controllers run these.

import type { EventRecorderFactory } from '../events/recorder.js';
import type { KubeBackend } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { ControllerContext } from './context.js';
import { CronJobController } from './cronjob.js';
import { DaemonSetController } from './daemonset.js';
import { DeploymentController } from './deployment.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job.js';
import { NamespaceController } from './namespace.js';
import { ReplicaSetController } from './replicaset.js';
import { StatefulSetController } from './statefulset.js';

export interface WorkloadControllers {
  /** Resolves once every controller's queue is empty (tests, benchmarks). */
  idle(): Promise<void>;
  stop(): void;
}

export function startWorkloadControllers(backend: KubeBackend, clock: Clock, logger: Logger, events: EventRecorderFactory): WorkloadControllers {
  const ctx = new ControllerContext(backend, clock, logger, events);
  const replicaSets = new ReplicaSetController(ctx);
  const deployments = new DeploymentController(ctx);
  const jobs = new JobController(ctx);
  const statefulSets = new StatefulSetController(ctx);
  const daemonSets = new DaemonSetController(ctx);
  const cronJobs = new CronJobController(ctx);
  const namespaces = new NamespaceController(ctx);
  const garbageCollector = new GarbageCollector(ctx);
  ctx.start();
  const queues = [
    replicaSets.queue,
    deployments.queue,
    jobs.queue,
    statefulSets.queue,
    daemonSets.queue,
    cronJobs.queue,
    namespaces.queue,
    garbageCollector.queue,
  ];
  return {
    idle: async () => {
      await Promise.all(queues.map((q) => q.idle()));
    },
    stop: () => {
      for (const q of queues) q.stop();
      ctx.stop();
    },
  };
}
