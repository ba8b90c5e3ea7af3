// CrashLoopBackOff (§8.2) with an injected clock: the first crash restarts at once, then 10, 20, 40 …
// capped at the max; a long stable run resets it; a changed spec hash starts afresh; GC; the
// configurable max; Go duration formatting of the messages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../../src/runtime/cri.js';
import { FakeClock } from '../../src/util/clock.js';
import { backOffKey, doBackOff, newCrashLoopBackoff } from '../../src/kuberuntime/backoff.js';
import { formatGoDuration } from '../../src/util/go-format.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'x' }] },
};
const app: Container = pod.spec!.containers[0]!;

function exited(finishedAt: number, attempt: number): RuntimeContainerStatus {
  return {
    id: `c${attempt}`,
    podSandboxId: 's',
    metadata: { name: 'app', attempt },
    state: 'CONTAINER_EXITED',
    createdAt: finishedAt - 1,
    startedAt: finishedAt - 1,
    finishedAt,
    exitCode: 1,
    image: 'x',
    imageRef: 'x',
    reason: 'Error',
    message: '',
    labels: {},
    annotations: {},
    logPath: '',
  };
}

test('Go duration formatting', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [20_000, '20s'],
    [40_000, '40s'],
    [80_000, '1m20s'],
    [160_000, '2m40s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [3_725_000, '1h2m5s'],
  ];
  for (const [ms, want] of cases) assert.equal(formatGoDuration(ms), want, `${ms}ms`);
});

test('back-off key names pod, namespace, uid, container and spec hash', () => {
  assert.equal(backOffKey(pod, app, 'abc123'), 'web_default_u1_app_abc123');
});

/**
 * Simulates a container that crashes immediately after each start: returns, for each restart, the
 * back-off that had to pass (0 = immediate) and the message seen while waiting.
 */
async function crashLoop(maxSeconds: number | undefined, restarts: number) {
  const clock = new FakeClock();
  const backoff = newCrashLoopBackoff(clock, maxSeconds);
  const waits: number[] = [];
  const messages: string[] = [];
  const instances: RuntimeContainerStatus[] = [];
  let attempt = 0;
  for (let i = 0; i < restarts; i++) {
    // The container ran and crashed at once.
    instances.unshift(exited(clock.now(), attempt++));
    let waited = 0;
    for (;;) {
      const d = doBackOff(pod, app, instances, backoff, 'h1');
      if (!d.inBackOff) break;
      messages.push(d.message!);
      const step = d.expiresAt! - clock.now();
      assert.ok(step > 0);
      await clock.advance(step);
      waited += step;
    }
    waits.push(waited);
  }
  return { waits, messages, clock, backoff, instances };
}

test('first crash restarts at once, then 10 s doubling up to the 300 s cap', async () => {
  const { waits, messages } = await crashLoop(undefined, 10);
  assert.deepEqual(
    waits.map((w) => w / 1000),
    [0, 10, 20, 40, 80, 160, 300, 300, 300, 300],
  );
  assert.equal(messages[0], 'back-off 10s restarting failed container=app pod=web_default(u1)');
  assert.ok(messages.includes('back-off 1m20s restarting failed container=app pod=web_default(u1)'));
  assert.ok(messages.includes('back-off 2m40s restarting failed container=app pod=web_default(u1)'));
  assert.equal(messages.at(-1), 'back-off 5m0s restarting failed container=app pod=web_default(u1)');
});

test('no exited instance: start now, no entry created', () => {
  const clock = new FakeClock();
  const backoff = newCrashLoopBackoff(clock);
  assert.deepEqual(doBackOff(pod, app, [], backoff, 'h1'), { inBackOff: false });
  assert.equal(backoff.size(), 0);
});

test('a run longer than 2×max after the last update resets the back-off', async () => {
  const { clock, backoff, instances } = await crashLoop(undefined, 5); // the entry now holds 160 s
  assert.equal(backoff.get(backOffKey(pod, app, 'h1')), 160_000);
  // The latest start ran stably for more than 10 minutes before crashing.
  await clock.advance(600_001);
  instances.unshift(exited(clock.now(), 99));
  assert.equal(doBackOff(pod, app, instances, backoff, 'h1').inBackOff, false);
  assert.equal(backoff.get(backOffKey(pod, app, 'h1')), 10_000);
  // and the next crash right away waits 10 s again
  instances.unshift(exited(clock.now(), 100));
  const d = doBackOff(pod, app, instances, backoff, 'h1');
  assert.equal(d.inBackOff, true);
  assert.equal(d.expiresAt! - clock.now(), 10_000);
});

test('a changed spec hash gives a fresh back-off', async () => {
  const { backoff, instances } = await crashLoop(undefined, 4); // 80 s for hash h1
  assert.equal(doBackOff(pod, app, instances, backoff, 'h1').inBackOff, true);
  assert.equal(doBackOff(pod, app, instances, backoff, 'h2').inBackOff, false, 'new spec starts at once');
  assert.equal(backoff.get(backOffKey(pod, app, 'h2')), 10_000);
});

test('maxContainerRestartPeriod caps the back-off and lowers the initial value', async () => {
  assert.deepEqual(
    (await crashLoop(60, 8)).waits.map((w) => w / 1000),
    [0, 10, 20, 40, 60, 60, 60, 60],
  );
  const one = await crashLoop(1, 5);
  assert.deepEqual(
    one.waits.map((w) => w / 1000),
    [0, 1, 1, 1, 1],
  );
  assert.equal(one.messages[0], 'back-off 1s restarting failed container=app pod=web_default(u1)');
  const clock = new FakeClock();
  assert.throws(() => newCrashLoopBackoff(clock, 0), /between 1s and 300s/);
  assert.throws(() => newCrashLoopBackoff(clock, 301), /between 1s and 300s/);
});

test('entries not updated for 2×max are garbage-collected', async () => {
  const { clock, backoff } = await crashLoop(undefined, 3);
  assert.equal(backoff.size(), 1);
  await clock.advance(600_000);
  backoff.gc();
  assert.equal(backoff.size(), 1, 'exactly 2×max is not stale yet');
  await clock.advance(1);
  backoff.gc();
  assert.equal(backoff.size(), 0);
});
