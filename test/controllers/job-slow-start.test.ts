// The Job controller's creations in upstream's slow-start batches (manageJob's slowStartBatch): a Job
// whose pods the API refuses makes one attempt per sync, not parallelism's worth, and records the
// refusal as a FailedCreate event; pods the API takes are created 1, 2, 4… at once. On an injected
// clock and a real object store; the pods API is a stand-in that counts creations (no pods run).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Job, Pod } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { ControllerContext } from '../../src/controllers/context.js';
import { JobController } from '../../src/controllers/job.js';
import { EventStore } from '../../src/events/store.js';
import type { KubeBackend, KubeObject } from '../../src/kubeapi/backend.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

function harness(t: { after(fn: () => void): void }, accept: (n: number) => boolean) {
  const clock = new FakeClock();
  const store = new ObjectStore({ now: () => clock.now() });
  const attempts: string[] = [];
  let inFlight = 0;
  const widest = { value: 0 };
  // The pods created, delivered to the controllers' pod informer as the registry's watch would.
  const watchers: Array<(ev: { type: string; object: Pod }) => void> = [];
  let rv = 0;
  const backend = {
    nodeName: 'node',
    objects: store,
    watchPods: (_rv: string, on: (ev: { type: string; object: Pod }) => void) => {
      watchers.push(on);
      return { stop() {} };
    },
    createPod: async (pod: Pod) => {
      attempts.push(pod.metadata!.name!);
      inFlight++;
      widest.value = Math.max(widest.value, inFlight);
      await Promise.resolve();
      inFlight--;
      if (!accept(attempts.length))
        throw Object.assign(new Error(`Pod "${pod.metadata!.name}" is invalid: spec.containers[0].image: Required value`), { code: 422 });
      const made: Pod = { ...pod, metadata: { ...pod.metadata, uid: `uid-${attempts.length}`, resourceVersion: String(++rv) }, status: { phase: 'Pending' } };
      for (const w of watchers) w({ type: 'ADDED', object: made });
      return made;
    },
  } as unknown as KubeBackend;
  const events = new EventStore({ clock, host: 'node' });
  const ctx = new ControllerContext(backend, clock, silentLogger, events);
  const controller = new JobController(ctx);
  ctx.start();
  t.after(() => {
    controller.queue.stop();
    ctx.stop();
  });
  const settle = async (ms: number) => {
    await clock.advance(ms);
    await controller.queue.idle();
    await clock.advance(0);
    await controller.queue.idle();
  };
  const job = (parallelism: number): Job => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'work', namespace: 'default' },
    spec: { parallelism, completions: parallelism, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  });
  return { store, attempts, widest, events, settle, job };
}

test('a Job whose pods are refused makes one attempt per sync, with its FailedCreate event', async (t) => {
  const h = harness(t, () => false);
  await h.store.create('Job', h.job(50) as unknown as KubeObject);
  await h.settle(0);
  // One attempt per sync: the sync of the new Job, and the one its status write (startTime) brings.
  assert.ok(h.attempts.length <= 2, `${h.attempts.length} attempts`);
  const failed = h.events.list().filter((e) => e.reason === 'FailedCreate');
  assert.ok(failed.length >= 1);
  assert.match(failed[0]!.message ?? '', /^Error creating: Pod "work-\w+" is invalid: spec.containers\[0\].image: Required value$/);
  // Then one attempt per back-off: 1 s, 2 s, 4 s…
  const before = h.attempts.length;
  await h.settle(7_000);
  assert.ok(h.attempts.length - before <= 3, `${h.attempts.length - before} attempts in 7 s`);
});

test('pods the API takes are created in batches of 1, 2, 4…', async (t) => {
  const h = harness(t, () => true);
  await h.store.create('Job', h.job(10) as unknown as KubeObject);
  await h.settle(0);
  assert.equal(h.attempts.length, 10);
  assert.equal(h.widest.value, 4, 'batches 1, 2, 4, 3');
});
