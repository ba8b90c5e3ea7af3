// The workload controllers of the standalone agent, started together over one set of shared
// informers (kube-controller-manager's role, for the kinds this agent keeps): ReplicaSets,
// Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Namespaces, PodDisruptionBudgets (the
// disruption controller), the garbage collector and, where claims are kept, the PV binder, the local
// provisioner and the pvc/pv-protection controllers. In
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
import { JobController } from './job.js';
import { LocalPathProvisioner, type LocalPathOptions } from './local-path-provisioner.js';
import { PersistentVolumeController } from './persistentvolume.js';
import { VolumeProtectionController } from './volume-protection.js';
import { NamespaceController } from './namespace.js';
import { ReplicaSetController } from './replicaset.js';
import { StatefulSetController } from './statefulset.js';

export interface WorkloadControllers {
  /** Resolves once every controller's queue is empty (tests, benchmarks). */
  idle(): Promise<void>;
  stop(): void;
}

export function startWorkloadControllers(
  backend: KubeBackend,
  clock: Clock,
  logger: Logger,
  events: EventRecorderFactory,
  storage?: LocalPathOptions,
): WorkloadControllers {
  const ctx = new ControllerContext(backend, clock, logger, events);
  if (storage && backend.objects?.storage('PersistentVolumeClaim')) {
    const provisioner = new LocalPathProvisioner(ctx, storage);
    new PersistentVolumeController(ctx, provisioner);
    new VolumeProtectionController(ctx);
    provisioner.ensureDefaultClass().catch((err: unknown) => logger.warn('The standard StorageClass was not stored', { err: String(err) }));
  }
  // Each registers its handlers and its work queue with the context; their order does not matter.
  new ReplicaSetController(ctx);
  new DeploymentController(ctx);
  new JobController(ctx);
  new StatefulSetController(ctx);
  new DaemonSetController(ctx);
  new CronJobController(ctx);
  if (backend.objects?.storage('PodDisruptionBudget')) new DisruptionController(ctx);
  new NamespaceController(ctx);
  new GarbageCollector(ctx);
  ctx.start();
  return {
    idle: () => ctx.idle(),
    stop: () => ctx.stop(),
  };
}
