// A CronJob's schedule and when it is due (pkg/controller/cronjob/utils.go: mostRecentScheduleTime,
// nextScheduleTime, nextScheduleTimeDuration; robfig/cron's ParseStandard for the schedule's forms):
// five fields or a macro, a `TZ=`/`CRON_TZ=` prefix or spec.timeZone, `@every <duration>`. The next
// times come from cron-parser; what is missed and what is run is the controller's rule, in pure functions.

import { CronExpressionParser, type CronExpression } from 'cron-parser';
import type { CronJob } from '../api/types.js';
import { parseGoDuration } from '../util/go-duration.js';

/** A parsed schedule: the first activation strictly after a time (ms since the epoch). */
export interface Schedule {
  next(afterMs: number): number;
}

const macros: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The schedule the controller parses: spec.timeZone becomes a TZ= prefix (formatSchedule). */
export function effectiveSchedule(cj: CronJob): string {
  const schedule = cj.spec?.schedule ?? '';
  const tz = cj.spec?.timeZone;
  return tz !== undefined && !/^(CRON_)?TZ=/.test(schedule.trim()) ? `TZ=${tz} ${schedule}` : schedule;
}

/** Parses a schedule as ParseStandard does; throws an Error in robfig/cron's words. */
export function parseSchedule(schedule: string): Schedule {
  let spec = schedule.trim();
  let tz: string | undefined;
  if (/^(CRON_)?TZ=/.test(spec)) {
    const space = spec.indexOf(' ');
    if (space < 0) throw new Error(`expected exactly 5 fields, found 0: []`);
    tz = spec.slice(spec.indexOf('=') + 1, space);
    if (!validZone(tz)) throw new Error(`provided bad location ${tz}: unknown time zone ${tz}`);
    spec = spec.slice(space + 1).trim();
  }
  if (spec.startsWith('@every ')) return everySchedule(spec.slice('@every '.length).trim());
  if (spec.startsWith('@')) {
    const expanded = macros[spec];
    if (!expanded) throw new Error(`unrecognized descriptor: ${spec}`);
    spec = expanded;
  }
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  let expr: CronExpression;
  try {
    expr = CronExpressionParser.parse(`0 ${fields.join(' ')}`, { currentDate: new Date(0), ...(tz ? { tz } : {}) });
  } catch (err) {
    throw new Error((err as Error).message);
  }
  return {
    next(afterMs) {
      expr.reset(new Date(afterMs));
      return expr.next().getTime();
    },
  };
}

/** `@every 1h30m`: a constant delay of at least a second, whole seconds (ConstantDelaySchedule). */
function everySchedule(duration: string): Schedule {
  let ms: number;
  try {
    ms = parseGoDuration(duration);
  } catch (err) {
    throw new Error(`failed to parse duration @every ${duration}: ${(err as Error).message}`);
  }
  const delay = Math.max(1000, Math.floor(ms / 1000) * 1000);
  return { next: (afterMs) => afterMs - (afterMs % 1000) + delay };
}

function validZone(tz: string): boolean {
  if (tz === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** How many schedule times were missed since the last one: none, a few, or more than 100. */
export type Missed = 'none' | 'few' | 'many';

export interface MostRecent {
  /** The last schedule time (or the CronJob's creation), raised to the starting deadline when asked. */
  earliest: number;
  /** The most recent schedule time not after now, when there is one since earliest. */
  mostRecent?: number;
  missed: Missed;
}

const ms = (rfc3339: string | undefined) => (rfc3339 ? Date.parse(rfc3339) : NaN);

/**
 * mostRecentScheduleTime: from the last schedule time (or creation), the most recent time a Job
 * should have been made, counting the missed ones roughly as upstream does (by the interval between
 * the first two); throws when two schedule times fall within a second.
 */
export function mostRecentScheduleTime(cj: CronJob, now: number, schedule: Schedule, withStartingDeadline: boolean): MostRecent {
  let earliest = ms(cj.metadata?.creationTimestamp);
  const last = ms(cj.status?.lastScheduleTime);
  if (!Number.isNaN(last)) earliest = last;
  if (Number.isNaN(earliest)) earliest = now;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (withStartingDeadline && deadline !== undefined && deadline !== null) {
    const schedulingDeadline = now - deadline * 1000;
    if (schedulingDeadline > earliest) earliest = schedulingDeadline;
  }
  const t1 = schedule.next(earliest);
  const t2 = schedule.next(t1);
  if (now < t1) return { earliest, missed: 'none' };
  if (now < t2) return { earliest, mostRecent: t1, missed: 'none' };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) throw new Error('time difference between two schedules is less than 1 second');
  const elapsed = Math.floor((now - t1) / 1000);
  const numberMissed = Math.floor(elapsed / between) + 1;
  // From one interval before the estimate, the schedule itself finds the last time not after now
  // (schedules whose intervals vary, such as `30 6-16/4 * * 1-5`).
  let mostRecent: number | undefined;
  const potentialEarliest = t1 + (numberMissed - 2) * between * 1000;
  for (let t = schedule.next(potentialEarliest); t <= now; t = schedule.next(t)) mostRecent = t;
  const missed: Missed = numberMissed > 100 ? 'many' : numberMissed > 0 ? 'few' : 'none';
  return mostRecent === undefined ? { earliest, missed } : { earliest, mostRecent, missed };
}

/**
 * nextScheduleTime: the time a Job is due for now (the most recent unmet one only; older misses are
 * not run), undefined when none; `tooManyMissed` asks for the upstream's warning.
 */
export function nextScheduleTime(cj: CronJob, now: number, schedule: Schedule): { at?: number; tooManyMissed: boolean } {
  const r = mostRecentScheduleTime(cj, now, schedule, true);
  if (r.mostRecent === undefined || r.mostRecent > now) return { tooManyMissed: false };
  return { at: r.mostRecent, tooManyMissed: r.missed === 'many' };
}

/** The 100 ms past the next schedule time the controller waits (nextScheduleDelta: clock skew). */
export const nextScheduleDeltaMs = 100;

/** nextScheduleTimeDuration: how long until the controller should look at the CronJob again. */
export function nextScheduleDelay(cj: CronJob, now: number, schedule: Schedule): number {
  let from: number;
  try {
    const r = mostRecentScheduleTime(cj, now, schedule, false);
    from = r.mostRecent ?? (r.missed === 'none' ? r.earliest : now);
  } catch {
    from = now;
  }
  return schedule.next(from) + nextScheduleDeltaMs - now;
}

/** A scheduled Job's name: the CronJob's and the schedule time in minutes since the epoch (getJobName). */
export function scheduledJobName(cronJobName: string, scheduledMs: number): string {
  return `${cronJobName}-${Math.floor(scheduledMs / 60_000)}`;
}
