// The controllers' slowStartBatch (the ReplicaSet's and the Job's): creations in batches of 1, 2, 4… each once the last succeeded,
// stopping at the first batch with a failure (whose error it returns), so a controller whose pods the
// API refuses learns it from one call, not from all of them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slowStartBatchErr } from '../../src/controllers/slow-start.js';

test('batches of 1, 2, 4, … up to the count', async () => {
  const batches: number[] = [];
  let inFlight = 0;
  let calls = 0;
  const r = await slowStartBatchErr(10, async () => {
    calls++;
    inFlight++;
    await Promise.resolve();
    batches.push(inFlight);
    inFlight--;
  });
  assert.deepEqual(r, { done: 10 });
  assert.equal(calls, 10);
  assert.equal(Math.max(...batches), 4);
});

test('a refused first call stops everything: one call, its error returned', async () => {
  let calls = 0;
  const refusal = Object.assign(new Error('Pod "x" is invalid'), { code: 422 });
  const r = await slowStartBatchErr(500, async () => {
    calls++;
    throw refusal;
  });
  assert.equal(calls, 1);
  assert.equal(r.done, 0);
  assert.equal(r.err, refusal);
});

test('a failure in a later batch: the successes so far are counted, no further batch starts', async () => {
  let calls = 0;
  const r = await slowStartBatchErr(100, async () => {
    calls++;
    if (calls === 5) throw new Error('quota');
  });
  // Batches 1, 2, then 4 (the fifth call of which fails): 7 calls, 6 done.
  assert.equal(calls, 7);
  assert.equal(r.done, 6);
});
