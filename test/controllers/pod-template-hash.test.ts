// The pod-template-hash and the rolling-update fenceposts, computed as the Deployment controller does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveFenceposts } from '../../src/controllers/deployment.js';
import { computeHash, safeEncodeString } from '../../src/controllers/pod-template-hash.js';

test('SafeEncodeString maps each character into the alphabet without vowels', () => {
  assert.equal(safeEncodeString('0123456789'), '456789bcdf');
  assert.match(safeEncodeString('4294967295'), /^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
});

test('the hash changes with the template and with the collision count, and is stable', () => {
  const t = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } };
  assert.equal(computeHash(t, undefined), computeHash(structuredClone(t), undefined));
  assert.notEqual(computeHash(t, undefined), computeHash(t, 1));
  assert.notEqual(computeHash(t, undefined), computeHash({ ...t, spec: { containers: [{ name: 'main', image: 'nginx' }] } }, undefined));
});

test('maxSurge rounds up, maxUnavailable down, and both 0 make maxUnavailable 1', () => {
  const d = (replicas: number, maxSurge: number | string, maxUnavailable: number | string) => ({
    spec: { replicas, selector: {}, template: {}, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } },
  });
  assert.deepEqual(resolveFenceposts(d(10, '25%', '25%')), { maxSurge: 3, maxUnavailable: 2 });
  assert.deepEqual(resolveFenceposts(d(1, '25%', '25%')), { maxSurge: 1, maxUnavailable: 0 });
  assert.deepEqual(resolveFenceposts(d(3, 0, '10%')), { maxSurge: 0, maxUnavailable: 1 });
});
