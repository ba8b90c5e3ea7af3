// The CronJob controller (pkg/controller/cronjob/cronjob_controllerv2.go): at each schedule time a
// Job `<cronjob>-<minutes since the epoch>` from the jobTemplate, with the scheduled-timestamp
// annotation and a controller ownerReference; concurrencyPolicy Allow/Forbid/Replace;
// startingDeadlineSeconds; suspend; the history limits; status active/lastScheduleTime/
// lastSuccessfulTime; the upstream events (SuccessfulCreate, SawCompletedJob, SuccessfulDelete...).
// After a restart only the most recent missed time is run (cronjob-schedule.ts). Event-driven:
// CronJob and Job watches enqueue the CronJob, and the queue wakes it at its next time.

import type { CronJob, Job } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { effectiveSchedule, nextScheduleDelay, nextScheduleTime, parseSchedule, scheduledJobName, type Schedule } from './cronjob-schedule.js';
import { objectKey, type Informer } from './informer.js';
import { controllerRef, ownerRefTo } from './pod-control.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, workloadRef } from './workload-events.js';

/** The annotation a scheduled Job carries: its schedule time in the CronJob's time zone (RFC 3339). */
export const scheduledTimestampAnnotation = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

type ActiveRef = NonNullable<NonNullable<CronJob['status']>['active']>[number];

function finishedCondition(job: Job): 'Complete' | 'Failed' | undefined {
  const c = (job.status?.conditions ?? []).find((x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True');
  return c?.type as 'Complete' | 'Failed' | undefined;
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Go's time.RFC1123Z of a UTC time: `Mon, 02 Jan 2006 15:04:05 +0000`. */
function rfc1123z(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}

/** RFC 3339 of a time as seen in a zone (UTC without one), as Go's Time.In(loc).Format(time.RFC3339). */
export function rfc3339InZone(ms: number, timeZone: string | undefined): string {
  if (!timeZone || timeZone === 'UTC' || timeZone === 'Etc/UTC') return stamp(ms);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  const wall = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
  const offsetMin = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const local = `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
  if (offsetMin === 0) return `${local}Z`;
  const abs = Math.abs(offsetMin);
  return `${local}${offsetMin < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export class CronJobController {
  readonly queue: WorkQueue;
  private readonly cronJobs: Informer<CronJob>;
  private readonly jobs: Informer<Job>;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder('cronjob-controller');
    this.queue = ctx.workQueue('cronjob', (key) => this.sync(key));
    this.cronJobs = ctx.informer<CronJob>('CronJob');
    this.jobs = ctx.informer<Job>('Job');
    this.cronJobs.on({ onAdd: (cj) => this.queue.add(objectKey(cj)), onUpdate: (_o, cj) => this.queue.add(objectKey(cj)) });
    const jobChanged = (j: Job) => {
      const ref = controllerRef(j);
      if (ref?.kind === 'CronJob') this.queue.add(`${j.metadata?.namespace ?? ''}/${ref.name}`);
    };
    this.jobs.on({ onAdd: jobChanged, onUpdate: (_o, j) => jobChanged(j), onDelete: jobChanged });
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const stored = this.cronJobs.get(ns, name);
    if (!stored) return;
    // The Jobs it controls (by the controller reference's name, as getJobsToBeReconciled).
    const jobs = this.jobs.list(ns).filter((j) => {
      const ref = controllerRef(j);
      return ref?.kind === 'CronJob' && ref.name === name;
    });
    const cj = structuredClone(stored);
    cj.status ??= {};
    const cleaned = await this.cleanupFinishedJobs(cj, jobs);
    const { requeueMs, changed } = await this.syncCronJob(cj, jobs);
    if (cleaned || changed) {
      const status = { ...cj.status };
      if (status.active?.length === 0) delete status.active;
      try {
        await this.ctx.storage('CronJob').updateStatus!({ ...cj, status } as KubeObject, {});
      } catch (err) {
        if (!isConflictOrGone(err)) throw err;
        // The CronJob changed under us: its update enqueues it again.
        return;
      }
    }
    if (requeueMs !== undefined) this.queue.addAfter(key, requeueMs);
  }

  /** syncCronJob: the active list reconciled with the Jobs, then a Job made when one is due. */
  private async syncCronJob(cj: CronJob, jobs: Job[]): Promise<{ requeueMs?: number; changed: boolean }> {
    const now = this.ctx.clock.now();
    const status = cj.status!;
    const ref = workloadRef(cj, 'batch/v1', 'CronJob');
    let changed = false;
    const children = new Set<string>();
    for (const j of jobs) {
      const uid = j.metadata?.uid ?? '';
      children.add(uid);
      const inActive = (status.active ?? []).some((a) => a.uid === uid);
      const finished = finishedCondition(j);
      if (!inActive && !finished) {
        this.recorder.event(ref, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata?.name}`);
      } else if (inActive && finished) {
        status.active = (status.active ?? []).filter((a) => a.uid !== uid);
        this.recorder.event(ref, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata?.name}, status: ${finished}`);
        changed = true;
      }
      if (finished === 'Complete' && j.status?.completionTime) {
        const last = status.lastSuccessfulTime ? Date.parse(status.lastSuccessfulTime) : NaN;
        if (Number.isNaN(last) || Date.parse(j.status.completionTime) > last) {
          status.lastSuccessfulTime = j.status.completionTime;
          changed = true;
        }
      }
    }
    // An active Job that is gone is dropped from the list (MissingJob).
    for (const a of status.active ?? []) {
      if (children.has(a.uid ?? '')) continue;
      if (this.ctx.storage('Job').get(a.namespace ?? '', a.name ?? '')) continue;
      this.recorder.event(ref, 'Normal', 'MissingJob', `Active job went missing: ${a.name}`);
      status.active = (status.active ?? []).filter((x) => x.uid !== a.uid);
      changed = true;
    }
    if (cj.metadata?.deletionTimestamp) return { changed };
    if (cj.spec?.suspend === true) return { changed };

    let schedule: Schedule;
    try {
      schedule = parseSchedule(effectiveSchedule(cj));
    } catch (err) {
      this.recorder.event(ref, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(cj.spec?.schedule ?? '')} : ${errorText(err)}`);
      return { changed };
    }
    let due: { at?: number; tooManyMissed: boolean };
    try {
      due = nextScheduleTime(cj, now, schedule);
    } catch (err) {
      this.recorder.event(ref, 'Warning', 'InvalidSchedule', `invalid schedule: ${cj.spec?.schedule ?? ''} : ${errorText(err)}`);
      return { changed };
    }
    if (due.tooManyMissed) {
      const message = 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew';
      this.recorder.event(ref, 'Warning', 'TooManyMissedTimes', message);
    }
    const later = () => ({ requeueMs: nextScheduleDelay(cj, now, schedule), changed });
    const scheduled = due.at;
    if (scheduled === undefined) return later();

    const deadline = cj.spec?.startingDeadlineSeconds;
    if (deadline !== undefined && deadline !== null && scheduled + deadline * 1000 < now) {
      this.recorder.event(ref, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`);
      return later();
    }
    const jobName = scheduledJobName(cj.metadata!.name!, scheduled);
    const lastSchedule = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : NaN;
    if ((status.active ?? []).some((a) => a.name === jobName) || lastSchedule === Math.floor(scheduled / 1000) * 1000) return later();
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (status.active?.length ?? 0) > 0) {
      this.recorder.event(ref, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return later();
    }
    if (policy === 'Replace') {
      for (const a of [...(status.active ?? [])]) {
        await this.deleteJob(cj, a.name ?? '');
        changed = true;
      }
    }

    let job: Job;
    try {
      job = (await this.ctx.storage('Job').create!(this.jobFromTemplate(cj, scheduled, jobName), {})) as Job;
      this.recorder.event(ref, 'Normal', 'SuccessfulCreate', `Created job ${jobName}`);
    } catch (err) {
      if ((err as { code?: number }).code !== 409) {
        this.recorder.event(ref, 'Warning', 'FailedCreate', `Error creating job: ${errorText(err)}`);
        throw err;
      }
      // Made before the status recording it was written (a restart, a lost race): taken back
      // into the active list when it is ours.
      const existing = this.ctx.storage('Job').get(cj.metadata!.namespace!, jobName) as Job | undefined;
      if (!existing || controllerRef(existing)?.uid !== cj.metadata?.uid) return { changed };
      if ((status.active ?? []).some((a) => a.uid === existing.metadata?.uid)) return { changed };
      job = existing;
    }
    const active: ActiveRef = {
      kind: 'Job',
      namespace: job.metadata!.namespace!,
      name: job.metadata!.name!,
      uid: job.metadata!.uid!,
      apiVersion: 'batch/v1',
      resourceVersion: job.metadata!.resourceVersion!,
    };
    status.active = [...(status.active ?? []), active];
    status.lastScheduleTime = stamp(scheduled);
    return { requeueMs: nextScheduleDelay(cj, now, schedule), changed: true };
  }

  /** getJobFromTemplate2: the jobTemplate's labels, annotations and spec, the scheduled time, the owner. */
  private jobFromTemplate(cj: CronJob, scheduled: number, name: string): Job {
    const template = cj.spec!.jobTemplate;
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: cj.metadata!.namespace!,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: { ...(template.metadata?.annotations ?? {}), [scheduledTimestampAnnotation]: rfc3339InZone(scheduled, cj.spec?.timeZone) },
        ownerReferences: [ownerRefTo(cj, 'batch/v1', 'CronJob')],
      },
      spec: structuredClone(template.spec!),
    };
  }

  /** The history limits: the oldest finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit go. */
  private async cleanupFinishedJobs(cj: CronJob, jobs: Job[]): Promise<boolean> {
    const spec = cj.spec;
    if (spec?.successfulJobsHistoryLimit == null && spec?.failedJobsHistoryLimit == null) return false;
    let changed = false;
    const byStart = (a: Job, b: Job) => {
      const sa = a.status?.startTime;
      const sb = b.status?.startTime;
      if (!sb) return sa ? -1 : 0;
      if (!sa) return 1;
      if (sa === sb) return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
      return Date.parse(sa) - Date.parse(sb);
    };
    for (const [kind, limit] of [
      ['Complete', spec.successfulJobsHistoryLimit],
      ['Failed', spec.failedJobsHistoryLimit],
    ] as const) {
      if (limit == null) continue;
      const done = jobs.filter((j) => finishedCondition(j) === kind).sort(byStart);
      for (const j of done.slice(0, Math.max(0, done.length - limit))) {
        if (await this.deleteJob(cj, j.metadata!.name!)) changed = true;
      }
    }
    return changed;
  }

  /** Deletes a Job (its pods in the background) and drops it from the active list. */
  private async deleteJob(cj: CronJob, jobName: string): Promise<boolean> {
    try {
      await this.ctx.storage('Job').delete!(cj.metadata!.namespace!, jobName, { propagationPolicy: 'Background' });
    } catch (err) {
      if (!isConflictOrGone(err)) {
        this.recorder.event(workloadRef(cj, 'batch/v1', 'CronJob'), 'Warning', 'FailedDelete', `Deleted job: ${errorText(err)}`);
        return false;
      }
    }
    cj.status!.active = (cj.status!.active ?? []).filter((a) => a.name !== jobName);
    this.recorder.event(workloadRef(cj, 'batch/v1', 'CronJob'), 'Normal', 'SuccessfulDelete', `Deleted job ${jobName}`);
    return true;
  }
}
