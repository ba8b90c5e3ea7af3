// The API server's validation of the batch/v1 kinds (pkg/apis/batch/validation/validation.go): Jobs
// (counts, completion mode, pod failure policy, the generated selector) and CronJobs (schedule,
// time zone, policies, the job template), on create and update; and the Job's generated selector
// (pkg/registry/batch/job/strategy.go generateSelector).

import type { CronJob, Job } from '../types.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { canonicalJSON } from '../defaults.js';
import { validateObjectMeta } from './pod.js';
import { validateNonNegative, validatePodTemplate, validateSelectorAndTemplate } from './workload.js';

type JobSpec = NonNullable<Job['spec']>;

export const jobNameLabel = 'batch.kubernetes.io/job-name';
export const controllerUidLabel = 'batch.kubernetes.io/controller-uid';
export const legacyJobNameLabel = 'job-name';
export const legacyControllerUidLabel = 'controller-uid';
export const completionIndexAnnotation = 'batch.kubernetes.io/job-completion-index';

/** The longest CronJob name: its Jobs' names add 11 characters and must stay a valid label value. */
const cronJobNameMaxLength = 52;
const jobTemplate = { restartPolicies: ['OnFailure', 'Never'] };

/** PrepareForCreate's generateSelector: the Job's uid labels its pods and selects them, unless manualSelector. */
export function withGeneratedSelector(job: Job): Job {
  if (job.spec?.manualSelector === true) return job;
  const out = structuredClone(job);
  const uid = out.metadata?.uid ?? '';
  const name = out.metadata?.name ?? '';
  const spec = out.spec!;
  const tmeta = (spec.template.metadata ??= {});
  tmeta.labels = { ...(tmeta.labels ?? {}), [controllerUidLabel]: uid, [jobNameLabel]: name, [legacyControllerUidLabel]: uid, [legacyJobNameLabel]: name };
  if (!spec.selector) spec.selector = { matchLabels: { [controllerUidLabel]: uid } };
  return out;
}

function validateJobSpecFields(s: JobSpec | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!s) return [required(path, '')];
  errs.push(...validateNonNegative(s.parallelism, path.child('parallelism')));
  errs.push(...validateNonNegative(s.completions, path.child('completions')));
  errs.push(...validateNonNegative(s.activeDeadlineSeconds, path.child('activeDeadlineSeconds')));
  errs.push(...validateNonNegative(s.backoffLimit, path.child('backoffLimit')));
  errs.push(...validateNonNegative(s.ttlSecondsAfterFinished, path.child('ttlSecondsAfterFinished')));
  const mode = s.completionMode ?? 'NonIndexed';
  if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(path.child('completionMode'), mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed') {
    if (s.completions === undefined) errs.push(required(path.child('completions'), 'when completion mode is Indexed'));
    else if (s.completions > 100000)
      errs.push(invalid(path.child('completions'), s.completions, 'must be less than or equal to 100000 when completion mode is Indexed'));
  } else if (s.backoffLimitPerIndex !== undefined) {
    errs.push(required(path.child('completionMode'), 'when backoffLimitPerIndex is specified, completionMode must be Indexed'));
  }
  (s.podFailurePolicy?.rules ?? []).forEach((rule, i) => {
    const p = path.child('podFailurePolicy', 'rules').index(i);
    const actions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
    if (!actions.includes(rule.action)) errs.push(notSupported(p.child('action'), rule.action, actions));
    if (rule.onExitCodes && rule.onPodConditions?.length) errs.push(invalid(p, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (!rule.onExitCodes && !rule.onPodConditions?.length) errs.push(invalid(p, 'specifying one of OnExitCodes and OnPodConditions is required'));
    const op = rule.onExitCodes?.operator;
    if (rule.onExitCodes && op !== 'In' && op !== 'NotIn') errs.push(notSupported(p.child('onExitCodes', 'operator'), op ?? '', ['In', 'NotIn']));
  });
  return errs;
}

export function validateJob(job: Job): FieldError[] {
  const errs = validateObjectMeta(job.metadata);
  const spec = newPath('spec');
  errs.push(...validateJobSpecFields(job.spec, spec));
  if (job.spec) {
    errs.push(...validateSelectorAndTemplate(job.spec.selector, job.spec.template, spec, { ...jobTemplate, kindWord: 'job' }));
    if (job.spec.manualSelector !== true && job.spec.selector && job.spec.selector.matchLabels?.[controllerUidLabel] !== job.metadata?.uid) {
      errs.push(invalid(spec.child('selector'), job.spec.selector, '`selector` not auto-generated'));
    }
  }
  return sortFieldErrors(errs);
}

/** ValidateJobUpdate: the selector, the completion mode and (unless suspended) the template do not change. */
export function validateJobUpdate(next: Job, old: Job): FieldError[] {
  const errs: FieldError[] = [];
  const same = (a: unknown, b: unknown) => canonicalJSON(a) === canonicalJSON(b);
  if (!same(next.spec?.selector, old.spec?.selector)) errs.push(invalid('spec.selector', next.spec?.selector, 'field is immutable'));
  if (!same(next.spec?.completionMode, old.spec?.completionMode)) errs.push(invalid('spec.completionMode', next.spec?.completionMode, 'field is immutable'));
  if (!same(next.spec?.template, old.spec?.template) && old.spec?.suspend !== true) {
    errs.push(invalid('spec.template', next.spec?.template, 'field is immutable'));
  }
  if (!same(next.spec?.completions, old.spec?.completions) && next.spec?.completionMode !== 'Indexed') {
    errs.push(invalid('spec.completions', next.spec?.completions, 'field is immutable'));
  }
  return errs;
}

const macros = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/** The schedule's shape as robfig/cron's ParseStandard checks it: five fields or a macro (optionally after CRON_TZ=). */
export function scheduleError(schedule: string): string | undefined {
  let spec = schedule.trim();
  if (/^(CRON_)?TZ=/.test(spec)) spec = spec.slice(spec.indexOf(' ') + 1).trim();
  if (spec.startsWith('@')) return macros.includes(spec) || spec.startsWith('@every ') ? undefined : `unrecognized descriptor: ${spec}`;
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  return undefined;
}

export function validateCronJob(cj: CronJob): FieldError[] {
  const errs = validateObjectMeta(cj.metadata);
  const name = cj.metadata?.name ?? '';
  if (name.length > cronJobNameMaxLength) errs.push(invalid(newPath('metadata', 'name'), name, `must be no more than ${cronJobNameMaxLength} characters`));
  const spec = newPath('spec');
  const s = cj.spec;
  if (!s?.schedule) errs.push(required(spec.child('schedule'), ''));
  else {
    const bad = scheduleError(s.schedule);
    if (bad) errs.push(invalid(spec.child('schedule'), s.schedule, bad));
    if (s.timeZone !== undefined && /^(CRON_)?TZ=/.test(s.schedule.trim())) {
      errs.push(invalid(spec.child('schedule'), s.schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    }
  }
  if (s?.timeZone !== undefined && !validTimeZone(s.timeZone)) errs.push(invalid(spec.child('timeZone'), s.timeZone, 'unknown time zone ' + s.timeZone));
  const policies = ['Allow', 'Forbid', 'Replace'];
  if (s && !policies.includes(s.concurrencyPolicy ?? '')) errs.push(notSupported(spec.child('concurrencyPolicy'), s.concurrencyPolicy ?? '', policies));
  errs.push(...validateNonNegative(s?.startingDeadlineSeconds, spec.child('startingDeadlineSeconds')));
  errs.push(...validateNonNegative(s?.successfulJobsHistoryLimit, spec.child('successfulJobsHistoryLimit')));
  errs.push(...validateNonNegative(s?.failedJobsHistoryLimit, spec.child('failedJobsHistoryLimit')));
  const jt = spec.child('jobTemplate', 'spec');
  const js = s?.jobTemplate?.spec;
  errs.push(...validateJobSpecFields(js, jt));
  if (js) {
    errs.push(...validatePodTemplate(js.template, jt.child('template'), jobTemplate));
    if (js.manualSelector === true || js.selector) errs.push(forbidden(jt.child('selector'), '`selector` will be auto-generated'));
  }
  return sortFieldErrors(errs);
}

function validTimeZone(tz: string): boolean {
  if (tz === '' || tz.toLowerCase() === 'local') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
