// The CronJob's schedule rules on fixed times: the schedule's forms (five fields, macros, TZ=,
// CRON_TZ=, spec.timeZone, @every) and their errors, the most recent missed time (only it is run,
// more than 100 missed is flagged), startingDeadlineSeconds, the requeue delay and the Job name.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CronJob } from '../../src/api/types.js';
import {
  effectiveSchedule,
  mostRecentScheduleTime,
  nextScheduleDelay,
  nextScheduleTime,
  parseSchedule,
  scheduledJobName,
} from '../../src/controllers/cronjob-schedule.js';
import { rfc3339InZone } from '../../src/controllers/cronjob.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function cronJob(schedule: string, extra: { created?: string; last?: string; deadline?: number; timeZone?: string } = {}): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'tick', namespace: 'default', creationTimestamp: extra.created ?? '2026-01-01T10:00:00Z' },
    spec: {
      schedule,
      ...(extra.timeZone ? { timeZone: extra.timeZone } : {}),
      ...(extra.deadline !== undefined ? { startingDeadlineSeconds: extra.deadline } : {}),
      jobTemplate: { spec: { template: { spec: { containers: [] } } } },
    },
    ...(extra.last ? { status: { lastScheduleTime: extra.last } } : {}),
  } as CronJob;
}

test('the schedule forms: five fields, macros, TZ= and CRON_TZ= prefixes, spec.timeZone, @every', () => {
  const from = at('2026-01-15T10:00:30Z');
  assert.equal(iso(parseSchedule('*/1 * * * *').next(from)), '2026-01-15T10:01:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC */15 * * * *').next(from)), '2026-01-15T10:15:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC @hourly').next(from)), '2026-01-15T11:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC @daily').next(from)), '2026-01-16T00:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC @weekly').next(from)), '2026-01-18T00:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC @monthly').next(from)), '2026-02-01T00:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC @yearly').next(from)), '2027-01-01T00:00:00.000Z');
  // 09:00 in Berlin is 08:00 UTC in winter, 07:00 in summer.
  assert.equal(iso(parseSchedule('CRON_TZ=Europe/Berlin 0 9 * * *').next(from)), '2026-01-16T08:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=Europe/Berlin 0 9 * * *').next(at('2026-07-01T00:00:00Z'))), '2026-07-01T07:00:00.000Z');
  const zoned = cronJob('0 9 * * *', { timeZone: 'America/New_York' });
  assert.equal(effectiveSchedule(zoned), 'TZ=America/New_York 0 9 * * *');
  assert.equal(iso(parseSchedule(effectiveSchedule(zoned)).next(from)), '2026-01-15T14:00:00.000Z');
  // Day of month and day of week both restricted: either matches, as in cron.
  assert.equal(iso(parseSchedule('TZ=UTC 0 0 1 * 1').next(at('2026-01-26T00:00:00Z'))), '2026-02-01T00:00:00.000Z');
  assert.equal(iso(parseSchedule('TZ=UTC 0 0 1 * 1').next(at('2026-02-01T00:00:00Z'))), '2026-02-02T00:00:00.000Z');
  assert.equal(iso(parseSchedule('@every 90s').next(at('2026-01-15T10:00:00.400Z'))), '2026-01-15T10:01:30.000Z');
});

test('schedules robfig/cron refuses get its words', () => {
  assert.throws(() => parseSchedule('* * * *'), /^Error: expected exactly 5 fields, found 4: \[\* \* \* \*\]$/);
  assert.throws(() => parseSchedule('0 * * * * *'), /expected exactly 5 fields, found 6/);
  assert.throws(() => parseSchedule('@fortnightly'), /unrecognized descriptor: @fortnightly/);
  assert.throws(() => parseSchedule('TZ=Mars/Base 0 * * * *'), /provided bad location Mars\/Base/);
  assert.throws(() => parseSchedule('61 * * * *'), /61/);
  assert.throws(() => parseSchedule('@every soon'), /failed to parse duration @every soon/);
});

test('nothing is due before the first schedule time after creation; then that time is', () => {
  const s = parseSchedule('TZ=UTC * * * * *');
  const cj = cronJob('* * * * *', { created: '2026-01-01T10:00:10Z' });
  assert.deepEqual(nextScheduleTime(cj, at('2026-01-01T10:00:50Z'), s), { tooManyMissed: false });
  assert.deepEqual(nextScheduleTime(cj, at('2026-01-01T10:01:05Z'), s), { at: at('2026-01-01T10:01:00Z'), tooManyMissed: false });
  // The requeue aims 100 ms past the next time.
  assert.equal(nextScheduleDelay(cj, at('2026-01-01T10:00:50Z'), s), 10_100);
});

test('after missed times only the most recent is due; more than 100 missed are flagged', () => {
  const s = parseSchedule('TZ=UTC * * * * *');
  const few = cronJob('* * * * *', { last: '2026-01-01T10:00:00Z' });
  const r = mostRecentScheduleTime(few, at('2026-01-01T10:05:30Z'), s, true);
  assert.equal(iso(r.mostRecent), '2026-01-01T10:05:00.000Z');
  assert.equal(r.missed, 'few');
  const many = cronJob('* * * * *', { last: '2026-01-01T06:00:00Z' });
  assert.deepEqual(nextScheduleTime(many, at('2026-01-01T10:05:30Z'), s), { at: at('2026-01-01T10:05:00Z'), tooManyMissed: true });
  // Irregular intervals: the schedule itself finds the last time, not the estimate.
  const irregular = parseSchedule('TZ=UTC 30 6-16/4 * * 1-5');
  const weekdays = cronJob('30 6-16/4 * * 1-5', { last: '2026-01-05T06:30:00Z' });
  assert.equal(iso(nextScheduleTime(weekdays, at('2026-01-07T12:00:00Z'), irregular).at), '2026-01-07T10:30:00.000Z');
  // An hourly schedule missed through a day: the last hour only.
  const hourly = parseSchedule('TZ=UTC @hourly');
  const day = cronJob('@hourly', { last: '2026-01-01T00:00:00Z' });
  assert.equal(iso(nextScheduleTime(day, at('2026-01-02T05:10:00Z'), hourly).at), '2026-01-02T05:00:00.000Z');
});

test('startingDeadlineSeconds bounds how far back a missed time is looked for', () => {
  const s = parseSchedule('TZ=UTC * * * * *');
  const cj = cronJob('* * * * *', { last: '2026-01-01T08:00:00Z', deadline: 30 });
  // 10:05:20 - 30 s = 10:04:50: 10:05 is within reach.
  assert.equal(iso(nextScheduleTime(cj, at('2026-01-01T10:05:20Z'), s).at), '2026-01-01T10:05:00.000Z');
  // 10:05:40 - 30 s = 10:05:10: nothing since, and far back is not counted as missed.
  assert.deepEqual(nextScheduleTime(cj, at('2026-01-01T10:05:40Z'), s), { tooManyMissed: false });
});

test('a Job is named by its schedule time in minutes since the epoch; its annotation is in the zone', () => {
  assert.equal(scheduledJobName('tick', at('2026-01-01T10:05:00Z')), `tick-${at('2026-01-01T10:05:00Z') / 60000}`);
  assert.equal(scheduledJobName('tick', at('2026-01-01T10:05:00Z')), 'tick-29454365');
  assert.equal(rfc3339InZone(at('2026-01-01T10:05:00Z'), undefined), '2026-01-01T10:05:00Z');
  assert.equal(rfc3339InZone(at('2026-01-01T10:05:00Z'), 'Europe/Berlin'), '2026-01-01T11:05:00+01:00');
  assert.equal(rfc3339InZone(at('2026-07-01T10:05:00Z'), 'America/New_York'), '2026-07-01T06:05:00-04:00');
  assert.equal(rfc3339InZone(at('2026-07-01T10:05:00Z'), 'Asia/Kolkata'), '2026-07-01T15:35:00+05:30');
});
