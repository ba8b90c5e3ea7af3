// The Job controller (pkg/controller/job), in its main rules: pods `<job>-<5 chars>` (Indexed:
// `<job>-<index>-<5 chars>` with JOB_COMPLETION_INDEX and the completion-index annotation) up to
// `parallelism` until `completions` succeed; failed pods counted against `backoffLimit` with the
// growing delay between retries (10 s doubled, at most 6 min); `activeDeadlineSeconds`; `suspend`;
// `ttlSecondsAfterFinished`; `podFailurePolicy` (pod-failure-policy.ts: FailJob, Ignore, Count);
// status active/succeeded/failed/startTime/completionTime and the Complete / Failed conditions
// (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy). Timing through the clock.

import type { Job, JobCondition, Pod } from '../api/types.js';
import { completionIndexAnnotation } from '../api/validation/batch.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import { matchPodFailurePolicy } from './pod-failure-policy.js';
import { controllerRef, isPodActive, isPodReady, nameSuffix, ownerRefTo, podFromTemplate } from './pod-control.js';
import type { WorkQueue } from './work-queue.js';
import { PodControl, workloadRef } from './workload-events.js';
import { RefusalBackoff } from './refusal-backoff.js';
import { slowStartBatchErr } from './slow-start.js';

const backoffBaseMs = 10_000;
const backoffMaxMs = 360_000;

const finished = (job: Job) => (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');

export class JobController {
  readonly queue: WorkQueue;
  private readonly jobs: Informer<Job>;
  private readonly recorder: EventRecorder;
  private readonly podControl: PodControl;
  /** Creations the API refuses are retried at the rate limiter's pace. */
  private readonly refusals: RefusalBackoff;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('job', (key) => this.sync(key));
    this.recorder = ctx.recorder('job-controller');
    this.podControl = new PodControl(ctx.backend, this.recorder);
    this.refusals = new RefusalBackoff(this.queue, ctx.logger, 'job');
    this.jobs = ctx.informer<Job>('Job');
    this.jobs.on({ onAdd: (j) => this.queue.add(objectKey(j)), onUpdate: (_o, j) => this.queue.add(objectKey(j)) });
    const podChanged = (p: Pod) => {
      const ref = controllerRef(p);
      if (ref?.kind === 'Job') this.queue.add(`${p.metadata?.namespace ?? ''}/${ref.name}`);
    };
    ctx.pods.on({ onAdd: podChanged, onUpdate: (_o, p) => podChanged(p), onDelete: podChanged });
  }

  private stamp(ms = this.ctx.clock.now()): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const job = this.jobs.get(ns, name);
    if (!job || job.metadata?.deletionTimestamp) return;
    const now = this.ctx.clock.now();
    if (finished(job)) return this.expire(job, now);
    const spec = job.spec!;
    const pods = this.ctx.pods.list(ns).filter((p) => controllerRef(p)?.uid === job.metadata?.uid);
    const active = pods.filter(isPodActive);
    const succeededPods = pods.filter((p) => p.status?.phase === 'Succeeded');
    // podFailurePolicy: a failed pod an Ignore rule matches is not counted; a FailJob rule fails the Job.
    const judged = pods.filter((p) => p.status?.phase === 'Failed').map((p) => matchPodFailurePolicy(spec.podFailurePolicy, p));
    const failed = judged.filter((j) => j.action !== 'Ignore').length;
    const failJob = judged.find((j) => j.action === 'FailJob');
    const indexed = spec.completionMode === 'Indexed';
    const indexOf = (p: Pod) => Number(p.metadata?.annotations?.[completionIndexAnnotation] ?? -1);
    const succeededIndexes = new Set(succeededPods.map(indexOf));
    const succeeded = indexed ? succeededIndexes.size : succeededPods.length;
    const completions = spec.completions;
    const status: NonNullable<Job['status']> = { ...(job.status ?? {}) };
    const suspended = spec.suspend === true;
    if (!suspended && !status.startTime) status.startTime = this.stamp(now);
    let conditions: JobCondition[] = status.conditions ?? [];
    const setCondition = (type: string, reason: string, message: string) => {
      conditions = [
        ...conditions.filter((c) => c.type !== type),
        { type, status: 'True', reason, message, lastProbeTime: this.stamp(now), lastTransitionTime: this.stamp(now) },
      ];
    };
    let failure: [string, string] | undefined;
    if (failJob) failure = ['PodFailurePolicy', failJob.message!];
    else if (failed > (spec.backoffLimit ?? 6)) failure = ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
    const started = status.startTime ? Date.parse(status.startTime) : now;
    if (!failure && spec.activeDeadlineSeconds !== undefined && !suspended) {
      const left = started + spec.activeDeadlineSeconds * 1000 - now;
      if (left <= 0) failure = ['DeadlineExceeded', 'Job was active longer than specified deadline'];
      else this.queue.addAfter(key, left);
    }
    const done = completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0;
    const ref = workloadRef(job, 'batch/v1', 'Job');
    if (failure || suspended) {
      for (const p of active) await this.podControl.delete(ref, ns, p.metadata!.name!).catch(() => undefined);
    }
    if (failure) {
      setCondition('FailureTarget', failure[0], failure[1]);
      setCondition('Failed', failure[0], failure[1]);
    } else if (done) {
      setCondition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods');
      setCondition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
      status.completionTime = this.stamp(now);
    } else if (!suspended) {
      await this.scaleUp(job, active, succeeded, failed, succeededIndexes, pods, now);
    }
    const after = this.ctx.pods.list(ns).filter((p) => controllerRef(p)?.uid === job.metadata?.uid && isPodActive(p));
    status.active = failure || done ? 0 : after.length;
    status.ready = failure || done ? 0 : after.filter(isPodReady).length;
    status.succeeded = succeeded;
    status.failed = failed;
    status.conditions = conditions;
    if (indexed) status.completedIndexes = compress([...succeededIndexes].filter((i) => i >= 0));
    for (const k of ['active', 'succeeded', 'failed'] as const) if (status[k] === 0) delete status[k];
    if (status.conditions.length === 0) delete status.conditions;
    try {
      await this.ctx.storage('Job').updateStatus!({ ...job, status } as KubeObject, {});
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      return;
    }
    // recordJobFinished, once the finished status is written.
    if (failure) this.recorder.event(ref, 'Warning', failure[0], failure[1]);
    else if (done) this.recorder.event(ref, 'Normal', 'Completed', 'Job completed');
  }

  private async scaleUp(job: Job, active: Pod[], succeeded: number, failed: number, done: Set<number>, pods: Pod[], now: number): Promise<void> {
    const spec = job.spec!;
    const ns = job.metadata!.namespace!;
    const name = job.metadata!.name!;
    // The back-off after failures: 10 s doubled per failure, from the last failure.
    if (failed > 0) {
      const counted = pods.filter((p) => p.status?.phase === 'Failed' && matchPodFailurePolicy(spec.podFailurePolicy, p).action !== 'Ignore');
      const lastFailure = Math.max(...counted.map((p) => finishedAt(p)));
      const wait = Math.min(backoffBaseMs * 2 ** (failed - 1), backoffMaxMs) - (now - lastFailure);
      if (wait > 0) return this.queue.addAfter(objectKey(job), wait);
    }
    const parallelism = spec.parallelism ?? 1;
    const remaining = spec.completions !== undefined ? spec.completions - succeeded : parallelism;
    const want = Math.max(0, Math.min(parallelism, remaining)) - active.length;
    const owner = ownerRefTo(job, 'batch/v1', 'Job');
    const busy = new Set(active.map((p) => Number(p.metadata?.annotations?.[completionIndexAnnotation] ?? -1)));
    // The pods to create, their names and indexes chosen first (manageJob's indexesToAdd), then created
    // in slow-start batches: a refused creation stops them, and the next sync comes after the back-off.
    const toCreate: Pod[] = [];
    let next = 0;
    for (let i = 0; i < want; i++) {
      const pod = podFromTemplate(spec.template, ns, `${name}-${nameSuffix()}`, owner);
      if (spec.completionMode === 'Indexed') {
        while (next < (spec.completions ?? 0) && (done.has(next) || busy.has(next))) next++;
        if (next >= (spec.completions ?? 0)) break;
        const index = next++;
        pod.metadata!.name = `${name}-${index}-${nameSuffix()}`;
        pod.metadata!.annotations = { ...(pod.metadata!.annotations ?? {}), [completionIndexAnnotation]: String(index) };
        pod.metadata!.labels = { ...(pod.metadata!.labels ?? {}), [completionIndexAnnotation]: String(index) };
        pod.spec!.hostname ??= `${name}-${index}`;
        for (const c of pod.spec!.containers) c.env = [...(c.env ?? []), { name: 'JOB_COMPLETION_INDEX', value: String(index) }];
      }
      toCreate.push(pod);
    }
    let at = 0;
    let lastName = '';
    const { err } = await slowStartBatchErr(toCreate.length, async () => {
      const pod = toCreate[at++]!;
      lastName = pod.metadata!.name!;
      try {
        await this.podControl.create(workloadRef(job, 'batch/v1', 'Job'), pod);
      } catch (e) {
        // A pod that exists already is the controller's stale view: the next sync sees it.
        if ((e as { code?: number }).code !== 409) throw e;
      }
    });
    if (err !== undefined) {
      this.refusals.refused(objectKey(job), lastName, err);
      return;
    }
    this.refusals.succeeded(objectKey(job));
  }

  /** ttlSecondsAfterFinished (the TTL-after-finished controller): the finished Job is deleted when it expires. */
  private async expire(job: Job, now: number): Promise<void> {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    if (ttl === undefined) return;
    const finishedCond = (job.status?.conditions ?? []).find((c) => c.type === 'Complete' || c.type === 'Failed');
    const at = Date.parse(job.status?.completionTime ?? finishedCond?.lastTransitionTime ?? '') || now;
    const left = at + ttl * 1000 - now;
    if (left > 0) return this.queue.addAfter(objectKey(job), left);
    await this.ctx.storage('Job').delete!(job.metadata!.namespace!, job.metadata!.name!, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }
}

function finishedAt(p: Pod): number {
  const times = (p.status?.containerStatuses ?? []).map((s) => Date.parse(s.state?.terminated?.finishedAt ?? '')).filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : 0;
}

/** completedIndexes as the API writes them: `1,3-5,7`. */
function compress(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
