// The StatefulSet and DaemonSet controllers' retry of a refused pod creation (refusal-backoff.ts) on
// an injected clock: a key whose creation the API keeps refusing is synced again after 1 s, doubled
// per refusal up to 5 minutes (client-go's ItemExponentialFailureRateLimiter), so a workload that
// cannot make its pods makes a handful of attempts, not a storm; a success starts the count again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRefusal, RefusalBackoff } from '../../src/controllers/refusal-backoff.js';
import { WorkQueue } from '../../src/controllers/work-queue.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const invalid = Object.assign(new Error('Pod "web-0" is invalid: spec.containers[0].command: Required value'), { code: 422 });

test('a refused creation is retried after 1 s, 2 s, 4 s … at most 5 min; a success starts again from 1 s', async () => {
  const clock = new FakeClock();
  const t0 = clock.now();
  const syncs: number[] = [];
  let refuse = true;
  const queue: WorkQueue = new WorkQueue(
    'statefulset',
    async (key) => {
      syncs.push(clock.now() - t0);
      if (refuse) backoff.refused(key, 'web-0', invalid);
      else backoff.succeeded(key);
    },
    clock,
    silentLogger,
  );
  const backoff = new RefusalBackoff(queue, silentLogger, 'statefulset');
  queue.add('default/web');
  queue.start();
  await queue.idle();
  assert.deepEqual(syncs, [0]);
  await clock.advance(999);
  assert.deepEqual(syncs, [0]);
  await clock.advance(1);
  await queue.idle();
  assert.deepEqual(syncs, [0, 1000]);
  // Over the next hour: attempts at 3 s, 7 s, 15 s … with the delay capped at 5 minutes.
  for (let i = 0; i < 60; i++) await clock.advance(60_000);
  await queue.idle();
  const gaps = syncs.slice(1).map((t, i) => t - syncs[i]!);
  assert.deepEqual(gaps.slice(0, 9), [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000]);
  assert.ok(
    gaps.slice(9).every((g) => g === 300_000),
    String(gaps),
  );
  assert.ok(syncs.length <= 20, `${syncs.length} attempts in an hour`);
  // The API takes the pod: the next refusal starts again from 1 s.
  refuse = false;
  queue.add('default/web');
  await queue.idle();
  refuse = true;
  const from = clock.now() - t0;
  queue.add('default/web');
  await queue.idle();
  await clock.advance(1000);
  await queue.idle();
  assert.equal(syncs.at(-1)! - from, 1000);
  queue.stop();
});

test('refusals are 400, 403 and 422; a conflict or an error without a code is not one', () => {
  assert.equal(isRefusal(invalid), true);
  assert.equal(isRefusal({ code: 403 }), true);
  assert.equal(isRefusal({ code: 400 }), true);
  assert.equal(isRefusal({ code: 409 }), false);
  assert.equal(isRefusal(new Error('ENOSPC')), false);
});
