// The API server's defaults for the apps/v1 and batch/v1 workloads (pkg/apis/apps/v1/defaults.go,
// pkg/apis/batch/v1/defaults.go): replicas, update strategies, history limits, Job counts and modes,
// CronJob policies, and the v1 pod defaults applied to every pod template.

import type { CronJob, DaemonSet, Deployment, Job, PodTemplateSpec, ReplicaSet, StatefulSet } from './types.js';
import type { Pod } from './types.js';
import { applyV1Defaults } from './defaults.js';

type Template = PodTemplateSpec | undefined;

/** SetDefaults_PodTemplateSpec: the pod defaults on a template (its metadata left as written). */
export function defaultTemplate(t: Template): PodTemplateSpec {
  const template = t ?? {};
  const pod = applyV1Defaults({ metadata: {}, spec: template.spec as Pod['spec'] } as Pod);
  // SetDefaults_Pod's own defaults are the pod's, not its template's.
  if (template.spec?.enableServiceLinks === undefined) delete pod.spec!.enableServiceLinks;
  // The API server's encoding always carries a container's resources (`resources: {}`).
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) c.resources ??= {};
  return { ...template, spec: pod.spec as PodTemplateSpec['spec'] };
}

export function defaultDeployment(input: Deployment): Deployment {
  const d = structuredClone(input);
  const spec = (d.spec ??= {} as NonNullable<Deployment['spec']>);
  spec.replicas ??= 1;
  const strategy = (spec.strategy ??= {});
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  spec.template = defaultTemplate(spec.template);
  return d;
}

export function defaultReplicaSet(input: ReplicaSet): ReplicaSet {
  const rs = structuredClone(input);
  const spec = (rs.spec ??= {} as NonNullable<ReplicaSet['spec']>);
  spec.replicas ??= 1;
  spec.template = defaultTemplate(spec.template);
  return rs;
}

export function defaultStatefulSet(input: StatefulSet): StatefulSet {
  const s = structuredClone(input);
  const spec = (s.spec ??= {} as NonNullable<StatefulSet['spec']>);
  spec.replicas ??= 1;
  spec.podManagementPolicy ||= 'OrderedReady';
  const strategy = (spec.updateStrategy ??= {});
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    ru.partition ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  spec.persistentVolumeClaimRetentionPolicy ??= {};
  spec.persistentVolumeClaimRetentionPolicy.whenDeleted ||= 'Retain';
  spec.persistentVolumeClaimRetentionPolicy.whenScaled ||= 'Retain';
  spec.template = defaultTemplate(spec.template);
  return s;
}

export function defaultDaemonSet(input: DaemonSet): DaemonSet {
  const ds = structuredClone(input);
  const spec = (ds.spec ??= {} as NonNullable<DaemonSet['spec']>);
  const strategy = (spec.updateStrategy ??= {});
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  spec.template = defaultTemplate(spec.template);
  return ds;
}

/** SetDefaults_Job on a Job's spec (also a CronJob's jobTemplate). */
function defaultJobSpec(spec: NonNullable<Job['spec']>): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  if (spec.backoffLimit === undefined) spec.backoffLimit = spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ||= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ||= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  for (const rule of spec.podFailurePolicy?.rules ?? []) {
    for (const pattern of rule.onPodConditions ?? []) pattern.status ||= 'True';
  }
  spec.template = defaultTemplate(spec.template) as NonNullable<Job['spec']>['template'];
}

export function defaultJob(input: Job): Job {
  const job = structuredClone(input);
  defaultJobSpec((job.spec ??= {} as NonNullable<Job['spec']>));
  return job;
}

export function defaultCronJob(input: CronJob): CronJob {
  const cj = structuredClone(input);
  const spec = (cj.spec ??= {} as NonNullable<CronJob['spec']>);
  spec.concurrencyPolicy ||= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  spec.jobTemplate ??= {};
  defaultJobSpec((spec.jobTemplate.spec ??= {} as NonNullable<Job['spec']>));
  return cj;
}
