// Sidecar termination ordering (§11.6) with an injected clock: sidecars wait for every regular
// container and for the sidecar defined after them; the wait ends when the grace period runs out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { FakeClock, flushMicrotasks } from '../../src/util/clock.js';
import { TerminationOrdering } from '../../src/kuberuntime/termination-order.js';

const pod: Pod = {
  metadata: { name: 'p', uid: 'u' },
  spec: {
    initContainers: [
      { name: 's1', image: 'x', restartPolicy: 'Always' },
      { name: 'init', image: 'x' },
      { name: 's2', image: 'x', restartPolicy: 'Always' },
    ],
    containers: [
      { name: 'a', image: 'x' },
      { name: 'b', image: 'x' },
    ],
  },
};

test('sidecars stop after the app containers, in reverse spec order', async () => {
  const clock = new FakeClock();
  const order = new TerminationOrdering(pod, ['s1', 's2', 'a', 'b'], clock);
  const turns: string[] = [];
  const turn = (name: string) => order.waitForTurn(name, 30).then(() => void turns.push(name));
  const all = Promise.all([turn('s1'), turn('s2'), turn('a'), turn('b')]);
  await flushMicrotasks();
  assert.deepEqual(turns, ['a', 'b'], 'regular containers go at once');
  order.containerTerminated('a');
  await flushMicrotasks();
  assert.deepEqual(turns, ['a', 'b'], 's2 still waits for b');
  order.containerTerminated('b');
  await flushMicrotasks();
  assert.deepEqual(turns, ['a', 'b', 's2'], 's1 waits for s2');
  order.containerTerminated('s2');
  await all;
  assert.deepEqual(turns, ['a', 'b', 's2', 's1']);
});

test('containers that are not running count as exited', async () => {
  const clock = new FakeClock();
  const order = new TerminationOrdering(pod, ['s1'], clock);
  assert.equal(await order.waitForTurn('s1', 30), 0);
});

test('the wait ends when the grace period runs out', async () => {
  const clock = new FakeClock();
  const order = new TerminationOrdering(pod, ['s1', 'a'], clock);
  let waited: number | undefined;
  void order.waitForTurn('s1', 5).then((w) => (waited = w));
  await clock.advance(4_000);
  assert.equal(waited, undefined);
  await clock.advance(1_000);
  assert.equal(waited, 5);
});

test('a cancelled wait returns at once', async () => {
  const clock = new FakeClock();
  const order = new TerminationOrdering(pod, ['s1', 'a'], clock);
  let cancel!: () => void;
  const cancelled = new Promise<void>((r) => (cancel = r));
  const w = order.waitForTurn('s1', 30, cancelled);
  cancel();
  assert.equal(await w, 0);
});
