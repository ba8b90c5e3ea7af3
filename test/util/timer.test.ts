// setLongTimeout and the RealClock built on it: delays past Node's 2^31-1 ms limit wait their full
// length (checked with node:test's mock timers, which clamp as Node does), and a probe with a huge
// timeoutSeconds against a slow real server succeeds instead of timing out at once.

import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { maxTimerDelayMs, setLongTimeout, sleepLong } from '../../src/util/timer.js';
import { RealClock } from '../../src/util/clock.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from '../../src/prober/http.js';
import type { HTTPGetAction } from '../../src/api/types.js';

const day = 24 * 3600 * 1000;

test('mock timers clamp as Node does: a raw setTimeout of 3000000 s fires after 1 ms', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  let fired = 0;
  setTimeout(() => fired++, 3_000_000 * 1000);
  t.mock.timers.tick(1);
  assert.equal(fired, 1, 'the clamp this helper exists for');
});

test('setLongTimeout waits the full time, across several chained timers', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const ms = 3_000_000 * 1000; // a grace period or probe timeout of 3000000 s: ~34.7 days
  let fired = 0;
  setLongTimeout(() => fired++, ms);
  t.mock.timers.tick(1);
  assert.equal(fired, 0);
  t.mock.timers.tick(maxTimerDelayMs);
  assert.equal(fired, 0, 'one link of 2^31-1 ms is not the whole wait');
  t.mock.timers.tick(ms - maxTimerDelayMs - 2);
  assert.equal(fired, 0, 'one ms before it is due');
  t.mock.timers.tick(1);
  assert.equal(fired, 1);
  t.mock.timers.tick(100 * day);
  assert.equal(fired, 1, 'once');
});

test('periodSeconds 2147483647 (int32 max) does not spin: nothing fires for 24 days', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  let fired = 0;
  setLongTimeout(() => fired++, 2147483647 * 1000);
  for (let i = 0; i < 24; i++) t.mock.timers.tick(day);
  assert.equal(fired, 0);
});

test('cancel stops the chain between links; short, zero, negative and NaN delays fire at once; Infinity never', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  let fired = 0;
  const long = setLongTimeout(() => fired++, 3 * maxTimerDelayMs);
  t.mock.timers.tick(maxTimerDelayMs + 5);
  long.cancel();
  t.mock.timers.tick(5 * maxTimerDelayMs);
  assert.equal(fired, 0);
  const seen: string[] = [];
  setLongTimeout(() => seen.push('short'), 10);
  setLongTimeout(() => seen.push('zero'), 0);
  setLongTimeout(() => seen.push('negative'), -5);
  setLongTimeout(() => seen.push('nan'), Number.NaN);
  setLongTimeout(() => seen.push('infinite'), Infinity);
  t.mock.timers.tick(10);
  assert.deepEqual(seen.sort(), ['nan', 'negative', 'short', 'zero']);
  t.mock.timers.tick(1000 * day);
  assert.equal(seen.length, 4);
});

test('RealClock.setTimer and sleep go through the chain', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const clock = new RealClock();
  let fired = 0;
  let slept = false;
  clock.setTimer(3_000_000 * 1000, () => fired++);
  void clock.sleep(3_000_000 * 1000).then(() => (slept = true));
  t.mock.timers.tick(maxTimerDelayMs + 1);
  assert.equal(fired, 0);
  t.mock.timers.tick(3_000_000 * 1000);
  assert.equal(fired, 1);
  return new Promise<void>((r) => setImmediate(r)).then(() => assert.equal(slept, true));
});

test('sleepLong resolves after a real short delay', async () => {
  const start = Date.now();
  await sleepLong(30);
  assert.ok(Date.now() - start >= 25);
});

test('sleepLong ends when its signal aborts, and at once for a signal already aborted', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const ac = new AbortController();
  const slept = settledFlag(sleepLong(3_000_000, { signal: ac.signal, ref: false }));
  t.mock.timers.tick(2_999_999);
  await nextTurn();
  assert.equal(slept(), false, 'still sleeping 1 ms before it is due');
  ac.abort();
  await nextTurn();
  assert.equal(slept(), true, 'ended by the abort, with no more time passed');
  const preAborted = settledFlag(sleepLong(Infinity, { signal: AbortSignal.abort() }));
  await nextTurn();
  assert.equal(preAborted(), true, 'an already aborted signal ends even an endless sleep at once');
});

/** A flag that turns true once p settles. */
function settledFlag(p: Promise<unknown>): () => boolean {
  let settled = false;
  void p.finally(() => (settled = true));
  return () => settled;
}

/** Lets promise callbacks queued so far run (setImmediate is not among the mocked timers). */
function nextTurn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

test('an HTTP probe with timeoutSeconds 3000000 waits for a slow real server instead of timing out at once', async () => {
  mock.timers.reset();
  const server = http.createServer((_req, res) => setTimeout(() => res.end('ok'), 200));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    const req = newRequestForHTTPGetAction({ path: '/', port, scheme: 'HTTP' } as HTTPGetAction, { name: 'c' }, '127.0.0.1', 'kube-probe/1.34');
    const out = await doHTTPProbe(req, 3_000_000, new RealClock());
    assert.equal(out.result, 'success', out.output);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
