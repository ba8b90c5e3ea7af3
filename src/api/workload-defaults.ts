// The API server's defaults for the apps/v1 and batch/v1 workloads (pkg/apis/apps/v1/defaults.go,
// pkg/apis/batch/v1/defaults.go): replicas, update strategies, history limits, Job counts and modes,
// CronJob policies, and the v1 pod defaults applied to every pod template.

import type { CronJob, DaemonSet, Deployment, Job, PodTemplateSpec, ReplicaSet, StatefulSet } from './types.js';
import type { Pod } from './types.js';
import { defaultPodSpec } from './defaults.js';

type Template = PodTemplateSpec | undefined;

/** The pod spec's defaults on a template (its metadata left as written; SetDefaults_Pod's are a Pod's alone). */
export function defaultTemplate(t: Template): PodTemplateSpec {
  const template = t ?? {};
  const spec = structuredClone(template.spec ?? { containers: [] }) as NonNullable<Pod['spec']>;
  defaultPodSpec(spec);
  return { ...template, spec: spec as PodTemplateSpec['spec'] };
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
  spec.volumeClaimTemplates = spec.volumeClaimTemplates?.map(defaultClaimTemplate);
  if (!spec.volumeClaimTemplates) delete spec.volumeClaimTemplates;
  return s;
}

type ClaimTemplate = NonNullable<NonNullable<StatefulSet['spec']>['volumeClaimTemplates']>[number];

/**
 * A StatefulSet's volume claim template as the API server stores it: a v1 PersistentVolumeClaim
 * (apiVersion and kind written out), volumeMode Filesystem and status phase Pending
 * (SetDefaults_PersistentVolumeClaim, SetDefaults_PersistentVolumeClaimSpec).
 */
function defaultClaimTemplate(input: ClaimTemplate): ClaimTemplate {
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...input } as ClaimTemplate;
  const spec = (claim.spec ??= {});
  spec.volumeMode ??= 'Filesystem';
  return { ...claim, status: { ...(claim.status ?? {}), phase: claim.status?.phase || 'Pending' } };
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

/** SetDefaults_Job on a Job's spec (a CronJob's jobTemplate gets only its pod template's defaults). */
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

/**
 * SetDefaults_Job's labels: a Job without labels has its template's. The API server applies it again
 * when it reads the stored Job back, so a created Job carries the labels PrepareForCreate gave its template.
 */
export function withTemplateLabels(job: Job): Job {
  const labels = job.spec?.template?.metadata?.labels;
  if (!labels || Object.keys(job.metadata?.labels ?? {}).length > 0) return job;
  return { ...job, metadata: { ...job.metadata, labels: { ...labels } } };
}

export function defaultJob(input: Job): Job {
  const job = structuredClone(input);
  defaultJobSpec((job.spec ??= {} as NonNullable<Job['spec']>));
  return withTemplateLabels(job);
}

/** SetDefaults_Endpoints: each port's protocol TCP. */
export function defaultEndpoints<T extends { subsets?: Array<{ ports?: Array<{ protocol?: string }> }> }>(input: T): T {
  const ep = structuredClone(input);
  for (const ss of ep.subsets ?? []) for (const p of ss.ports ?? []) p.protocol ||= 'TCP';
  return ep;
}

/** discovery/v1 SetDefaults_EndpointPort: each port's name "" and protocol TCP. */
export function defaultEndpointSlice<T extends { ports?: Array<{ name?: string; protocol?: string }> }>(input: T): T {
  const slice = structuredClone(input);
  for (const p of slice.ports ?? []) {
    p.name ??= '';
    p.protocol ??= 'TCP';
  }
  return slice;
}

export function defaultCronJob(input: CronJob): CronJob {
  const cj = structuredClone(input);
  const spec = (cj.spec ??= {} as NonNullable<CronJob['spec']>);
  spec.concurrencyPolicy ||= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  spec.jobTemplate ??= {};
  // SetObjectDefaults_CronJob reaches the job template's pod spec, not SetDefaults_Job: a Job made
  // from it is defaulted when it is created.
  const jobSpec = (spec.jobTemplate.spec ??= {} as NonNullable<Job['spec']>);
  jobSpec.template = defaultTemplate(jobSpec.template) as NonNullable<Job['spec']>['template'];
  return cj;
}
