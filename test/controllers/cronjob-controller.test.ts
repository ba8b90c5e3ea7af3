// The CronJob controller on a fake clock over a real object store: a Job at each schedule time,
// named and annotated as upstream, the concurrency policies, suspend, the history limits and
// lastSuccessfulTime, and after a restart only the most recent missed time run (or none past the
// starting deadline). Time is driven, nothing waits on the wall clock.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CronJob, Job } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { ControllerContext } from '../../src/controllers/context.js';
import { CronJobController, scheduledTimestampAnnotation } from '../../src/controllers/cronjob.js';
import { EventStore } from '../../src/events/store.js';
import type { KubeBackend, KubeObject } from '../../src/kubeapi/backend.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const start = Date.parse('2026-01-01T10:00:00Z');
const minute = 60_000;

/** The controller over a store on the fake clock (no pods: the Job controller is not running). */
function harness(t: { after(fn: () => void): void }, store = new ObjectStore({ now: () => clock.now() }), clock = new FakeClock(start)) {
  const backend = { nodeName: 'node', objects: store, watchPods: () => ({ stop() {} }) } as unknown as KubeBackend;
  const events = new EventStore({ clock, host: 'node' });
  const ctx = new ControllerContext(backend, clock, silentLogger, events);
  const controller = new CronJobController(ctx);
  const run = () => {
    ctx.start();
    t.after(() => {
      controller.queue.stop();
      ctx.stop();
    });
  };
  const settle = async (ms: number) => {
    await clock.advance(ms);
    await controller.queue.idle();
    await clock.advance(0);
    await controller.queue.idle();
  };
  const jobs = () => (store.list('Job').items as Job[]).map((j) => j.metadata!.name!).sort();
  const cj = (name: string) => store.get('CronJob', 'default', name) as CronJob;
  /** The CronJob's events as `kubectl get events` reads them: `Type Reason Message`, oldest first. */
  const eventsOf = (name: string) =>
    events
      .list()
      .filter((e) => e.involvedObject.kind === 'CronJob' && e.involvedObject.name === name)
      .map((e) => `${e.type} ${e.reason} ${e.message}`);
  return { store, clock, controller, run, settle, jobs, cj, events, eventsOf };
}

function cronJob(name: string, spec: Partial<NonNullable<CronJob['spec']>> = {}): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: {
      schedule: '*/1 * * * *',
      timeZone: 'UTC',
      jobTemplate: {
        metadata: { labels: { team: 'a' } },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['true'] }] } } },
      },
      ...spec,
    },
  } as CronJob;
}

const minutes = (ms: number) => Math.floor(ms / minute);

async function finish(store: ObjectStore, name: string, type: 'Complete' | 'Failed', at: number): Promise<void> {
  const job = store.get('Job', 'default', name) as Job;
  const stamp = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = {
    startTime: job.metadata!.creationTimestamp,
    conditions: [{ type, status: 'True', lastProbeTime: stamp, lastTransitionTime: stamp }],
    ...(type === 'Complete' ? { completionTime: stamp, succeeded: 1 } : { failed: 1 }),
  };
  await store.updateStatus('Job', { ...job, status } as KubeObject);
}

test('a Job at each schedule time, named by its minute, annotated, owned, and in status.active', async (t) => {
  const h = harness(t);
  await h.store.create('CronJob', cronJob('tick'));
  h.run();
  await h.settle(30_000);
  assert.deepEqual(h.jobs(), []);
  // The controller wakes 100 ms past the schedule time.
  await h.settle(30_500);
  const first = `tick-${minutes(start + minute)}`;
  assert.deepEqual(h.jobs(), [first]);
  const job = h.store.get('Job', 'default', first) as Job;
  assert.equal(job.metadata!.annotations![scheduledTimestampAnnotation], '2026-01-01T10:01:00Z');
  assert.equal(job.metadata!.labels!.team, 'a');
  assert.deepEqual(
    job.metadata!.ownerReferences!.map((r) => `${r.kind}/${r.name}/${r.controller}`),
    ['CronJob/tick/true'],
  );
  const cj = h.cj('tick');
  assert.equal(cj.status!.lastScheduleTime, '2026-01-01T10:01:00Z');
  assert.deepEqual(
    cj.status!.active!.map((a) => a.name),
    [first],
  );
  // Allow: the next minute's Job runs beside the first.
  await h.settle(minute);
  assert.deepEqual(h.jobs(), [first, `tick-${minutes(start + 2 * minute)}`]);
  assert.equal(h.cj('tick').status!.active!.length, 2);
});

test('Forbid skips a time while a Job is active; Replace deletes the active Job for the new one', async (t) => {
  const h = harness(t);
  await h.store.create('CronJob', cronJob('solo', { concurrencyPolicy: 'Forbid' }));
  await h.store.create('CronJob', cronJob('swap', { concurrencyPolicy: 'Replace' }));
  h.run();
  await h.settle(minute + 500);
  await h.settle(minute);
  const m1 = minutes(start + minute);
  const m2 = minutes(start + 2 * minute);
  assert.deepEqual(h.jobs(), [`solo-${m1}`, `swap-${m2}`]);
  assert.deepEqual(
    h.cj('swap').status!.active!.map((a) => a.name),
    [`swap-${m2}`],
  );
  // Once the Forbid CronJob's Job finishes, the time it held back runs (no starting deadline).
  await finish(h.store, `solo-${m1}`, 'Complete', start + 2 * minute + 300);
  await h.settle(0);
  assert.deepEqual(
    h.jobs().filter((n) => n.startsWith('solo-')),
    [`solo-${m1}`, `solo-${m2}`],
  );
  assert.equal(h.cj('solo').status!.lastSuccessfulTime, '2026-01-01T10:02:00Z');
  assert.equal(h.cj('solo').status!.lastScheduleTime, '2026-01-01T10:02:00Z');
  // The events cronjob-controller records, with the upstream reasons and messages.
  assert.deepEqual(h.eventsOf('solo'), [
    `Normal SuccessfulCreate Created job solo-${m1}`,
    'Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid',
    `Normal SawCompletedJob Saw completed job: solo-${m1}, status: Complete`,
    `Normal SuccessfulCreate Created job solo-${m2}`,
  ]);
  assert.deepEqual(h.eventsOf('swap'), [
    `Normal SuccessfulCreate Created job swap-${m1}`,
    `Normal SuccessfulDelete Deleted job swap-${m1}`,
    `Normal SuccessfulCreate Created job swap-${m2}`,
  ]);
  const ev = h.events.list().find((e) => e.involvedObject.name === 'swap')!;
  assert.equal(ev.source?.component, 'cronjob-controller');
  assert.equal(ev.source?.host, undefined);
  assert.equal(ev.reportingComponent, 'cronjob-controller');
  assert.deepEqual([ev.involvedObject.apiVersion, ev.involvedObject.kind, ev.involvedObject.uid], ['batch/v1', 'CronJob', h.cj('swap').metadata!.uid]);
});

test('a suspended CronJob makes no Job; resumed, it makes the next one', async (t) => {
  const h = harness(t);
  await h.store.create('CronJob', cronJob('paused', { suspend: true, startingDeadlineSeconds: 10 }));
  h.run();
  await h.settle(3 * minute + 30_000);
  assert.deepEqual(h.jobs(), []);
  const cj = h.cj('paused');
  await h.store.update('CronJob', { ...cj, spec: { ...cj.spec, suspend: false } });
  await h.settle(0);
  // The missed times are past the starting deadline: nothing until the next minute.
  assert.deepEqual(h.jobs(), []);
  await h.settle(30_500);
  assert.deepEqual(h.jobs(), [`paused-${minutes(start + 4 * minute)}`]);
});

test('history limits keep the newest finished Jobs of each kind; lastSuccessfulTime follows completions', async (t) => {
  const h = harness(t);
  await h.store.create('CronJob', cronJob('hist', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }));
  h.run();
  await h.settle(500);
  for (let i = 1; i <= 4; i++) {
    await h.settle(minute);
    const name = `hist-${minutes(start + i * minute)}`;
    await finish(h.store, name, i % 2 === 0 ? 'Failed' : 'Complete', start + i * minute + 1000);
    await h.settle(0);
  }
  assert.deepEqual(h.jobs(), [`hist-${minutes(start + 3 * minute)}`, `hist-${minutes(start + 4 * minute)}`]);
  const status = h.cj('hist').status!;
  assert.equal(status.active, undefined);
  assert.equal(status.lastSuccessfulTime, '2026-01-01T10:03:01Z');
  assert.equal(status.lastScheduleTime, '2026-01-01T10:04:00Z');
});

test('after a restart only the most recent missed time is run, within the starting deadline', async (t) => {
  const clock = new FakeClock(start);
  const store = new ObjectStore({ now: () => clock.now() });
  await store.create('CronJob', cronJob('late'));
  await store.create('CronJob', cronJob('bounded', { startingDeadlineSeconds: 20 }));
  await store.create('CronJob', cronJob('ancient'));
  for (const name of ['late', 'bounded']) {
    await store.updateStatus('CronJob', { ...store.get('CronJob', 'default', name)!, status: { lastScheduleTime: '2026-01-01T10:00:00Z' } } as KubeObject);
  }
  // Down since long before: more than 100 missed times, still only the last is run.
  await store.updateStatus('CronJob', { ...store.get('CronJob', 'default', 'ancient')!, status: { lastScheduleTime: '2025-12-31T10:00:00Z' } } as KubeObject);
  // The agent comes back 7 min 30 s later.
  await clock.advance(7 * minute + 30_000);
  const h = harness(t, store, clock);
  h.run();
  await h.settle(0);
  const m7 = minutes(start + 7 * minute);
  // `bounded`: 10:07 is 30 s ago, past its 20 s deadline.
  assert.deepEqual(h.jobs(), [`ancient-${m7}`, `late-${m7}`]);
  assert.equal(h.cj('late').status!.lastScheduleTime, '2026-01-01T10:07:00Z');
  assert.equal(h.cj('bounded').status!.lastScheduleTime, '2026-01-01T10:00:00Z');
  await h.settle(30_500);
  assert.deepEqual(
    h.jobs(),
    [
      `ancient-${m7}`,
      `bounded-${minutes(start + 8 * minute)}`,
      `late-${m7}`,
      `late-${minutes(start + 8 * minute)}`,
      `ancient-${minutes(start + 8 * minute)}`,
    ].sort(),
  );
});

test('a Job made before its status was written is taken back into the active list', async (t) => {
  const h = harness(t);
  const created = await h.store.create('CronJob', cronJob('lost'));
  const name = `lost-${minutes(start + minute)}`;
  await h.clock.advance(minute + 1000);
  await h.store.create('Job', {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: 'default',
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'lost', uid: created.metadata!.uid!, controller: true }],
    },
    spec: (cronJob('lost').spec!.jobTemplate as { spec: unknown }).spec,
  } as KubeObject);
  h.run();
  await h.settle(0);
  assert.deepEqual(h.jobs(), [name]);
  assert.deepEqual(
    h.cj('lost').status!.active!.map((a) => a.name),
    [name],
  );
});
