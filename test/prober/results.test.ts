// The result caches publish only on change (results_manager_test.go), and Remove publishes nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResultsCache } from '../../src/prober/results.js';
import type { ResultUpdate } from '../../src/prober/types.js';

test('Set publishes the first value and every change, never an unchanged value', () => {
  const cache = new ResultsCache();
  const updates: ResultUpdate[] = [];
  cache.onUpdate((u) => updates.push(u));
  const steps: [string, 'Success' | 'Failure' | 'Unknown', number][] = [
    ['test://a', 'Success', 1], // first Set always publishes
    ['test://a', 'Success', 1], // unchanged: nothing
    ['test://a', 'Failure', 2], // changed
    ['test://b', 'Failure', 3], // another container: first Set
    ['test://a', 'Failure', 3],
    ['test://a', 'Unknown', 4],
  ];
  for (const [id, result, count] of steps) {
    cache.set(id, result, 'pod-uid');
    assert.equal(updates.length, count, `${id} ${result}`);
    assert.equal(cache.get(id), result);
  }
  assert.deepEqual(updates[1], { containerId: 'test://a', result: 'Failure', podUid: 'pod-uid' });
});

test('Remove forgets the container and publishes nothing; a later Set publishes again', () => {
  const cache = new ResultsCache();
  let count = 0;
  cache.onUpdate(() => count++);
  cache.set('test://a', 'Success', 'p');
  cache.remove('test://a');
  assert.equal(cache.get('test://a'), undefined);
  assert.equal(count, 1);
  cache.remove('test://never-set');
  assert.equal(count, 1);
  cache.set('test://a', 'Success', 'p');
  assert.equal(count, 2);
});

test('unsubscribing stops updates, and a throwing listener does not stop the others', () => {
  const cache = new ResultsCache();
  const seen: string[] = [];
  cache.onUpdate(() => {
    throw new Error('bad listener');
  });
  const off = cache.onUpdate((u) => seen.push(u.result));
  cache.set('test://a', 'Success', 'p');
  off();
  cache.set('test://a', 'Failure', 'p');
  assert.deepEqual(seen, ['Success']);
  assert.equal(cache.get('test://a'), 'Failure');
});
