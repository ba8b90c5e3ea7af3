// The disruption controller's status computation (disruption-status.ts) against upstream's rules:
// minAvailable as an integer counts the selected pods, a percentage and maxUnavailable count the
// controllers' replicas; Ready pods not awaiting an eviction are healthy; disruptionsAllowed and the
// DisruptionAllowed condition; recorded evictions expire after the deletion timeout.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import type { PodDisruptionBudget } from '../../src/api/validation/policy.js';
import { computePdbStatus, deletionTimeoutMs, ExpectedCountError, failSafeStatus, type ScaleFinder } from '../../src/controllers/disruption-status.js';

const now = Date.parse('2026-01-01T00:00:00Z');

function pod(name: string, ready: boolean, owner?: string): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'web' },
      ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `uid-${owner}`, controller: true }] } : {}),
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(spec: PodDisruptionBudget['spec'], status?: PodDisruptionBudget['status']): PodDisruptionBudget {
  return {
    metadata: { name: 'web', namespace: 'default', generation: 3 },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...(status ? { status } : {}),
  };
}

const scaleOf =
  (replicas: Record<string, number>): ScaleFinder =>
  (p) => {
    const ref = p.metadata?.ownerReferences?.[0];
    return ref && replicas[ref.name] !== undefined ? { uid: ref.uid, replicas: replicas[ref.name]! } : undefined;
  };
const noScale: ScaleFinder = () => undefined;

test('minAvailable as an integer: expected pods are the selected pods, healthy the Ready ones', () => {
  const pods = [pod('a', true, 'rs'), pod('b', true, 'rs'), pod('c', false, 'rs')];
  const { status } = computePdbStatus(pdb({ minAvailable: 2 }), pods, noScale, now);
  assert.deepEqual(
    { ...status, conditions: undefined },
    { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3, observedGeneration: 3, conditions: undefined },
  );
  assert.deepEqual(status.conditions, [
    { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
  ]);
  const more = computePdbStatus(pdb({ minAvailable: 1 }), pods, noScale, now).status;
  assert.equal(more.disruptionsAllowed, 1);
  assert.equal(more.conditions?.[0]?.reason, 'SufficientPods');
  assert.equal(more.conditions?.[0]?.status, 'True');
});

test('a percentage of minAvailable and maxUnavailable count the controller’s replicas, rounded up', () => {
  const pods = [pod('a', true, 'rs'), pod('b', true, 'rs')];
  // 50% of 4 replicas is 2: two healthy, none allowed.
  let s = computePdbStatus(pdb({ minAvailable: '50%' }), pods, scaleOf({ rs: 4 }), now).status;
  assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [4, 2, 2, 0]);
  // maxUnavailable 25% of 3 rounds up to 1: desired 2.
  s = computePdbStatus(pdb({ maxUnavailable: '25%' }), [...pods, pod('c', true, 'rs')], scaleOf({ rs: 3 }), now).status;
  assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [3, 2, 3, 1]);
  // maxUnavailable above the replicas: nothing desired.
  s = computePdbStatus(pdb({ maxUnavailable: 5 }), pods, scaleOf({ rs: 2 }), now).status;
  assert.deepEqual([s.expectedPods, s.desiredHealthy, s.disruptionsAllowed], [2, 0, 2]);
});

test('pods without a controller are unmanaged; a controller not found fails the count', () => {
  const r = computePdbStatus(pdb({ maxUnavailable: 1 }), [pod('a', true, 'rs'), pod('bare', true)], scaleOf({ rs: 1 }), now);
  assert.deepEqual(r.unmanagedPods, ['bare']);
  assert.equal(r.status.expectedPods, 1);
  assert.throws(
    () => computePdbStatus(pdb({ maxUnavailable: 1 }), [pod('a', true, 'gone')], noScale, now),
    (e: unknown) => {
      assert.ok(e instanceof ExpectedCountError);
      assert.equal(e.message, 'found no controllers for pod "a"');
      return true;
    },
  );
  const safe = failSafeStatus(
    pdb({ maxUnavailable: 1 }, { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0, expectedPods: 1 }),
    'found no controllers for pod "a"',
    now,
  );
  assert.equal(safe.disruptionsAllowed, 0);
  assert.equal(safe.conditions?.[0]?.reason, 'SyncFailed');
  assert.equal(safe.conditions?.[0]?.message, 'found no controllers for pod "a"');
});

test('an evicted pod is not healthy until its entry expires after the deletion timeout; the recheck is then', () => {
  const at = '2026-01-01T00:00:00Z';
  const budget = pdb({ minAvailable: 1 }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 2, disruptedPods: { a: at } });
  const pods = [pod('a', true, 'rs'), pod('b', true, 'rs')];
  const r = computePdbStatus(budget, pods, noScale, now + 1000);
  assert.deepEqual(r.status.disruptedPods, { a: at });
  assert.equal(r.status.currentHealthy, 1);
  assert.equal(r.status.disruptionsAllowed, 0);
  assert.equal(r.recheckAtMs, now + deletionTimeoutMs);
  const later = computePdbStatus(budget, pods, noScale, now + deletionTimeoutMs + 1);
  assert.equal(later.status.disruptedPods, undefined);
  assert.equal(later.status.currentHealthy, 2);
  assert.equal(later.status.disruptionsAllowed, 1);
  // A pod being deleted is neither healthy nor kept in the map.
  const deleting = { ...pods[0]!, metadata: { ...pods[0]!.metadata, deletionTimestamp: at } };
  const d = computePdbStatus(budget, [deleting, pods[1]!], noScale, now + 1000);
  assert.equal(d.status.disruptedPods, undefined);
  assert.equal(d.status.currentHealthy, 1);
});

test('the condition keeps its lastTransitionTime while its status stays', () => {
  const first = computePdbStatus(pdb({ minAvailable: 1 }), [pod('a', true, 'rs')], noScale, now).status;
  const again = computePdbStatus(pdb({ minAvailable: 1 }, first), [pod('a', true, 'rs')], noScale, now + 60_000).status;
  assert.equal(again.conditions?.[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
  const flipped = computePdbStatus(pdb({ minAvailable: 1 }, first), [pod('a', true, 'rs'), pod('b', true, 'rs')], noScale, now + 60_000).status;
  assert.equal(flipped.conditions?.[0]?.status, 'True');
  assert.equal(flipped.conditions?.[0]?.lastTransitionTime, '2026-01-01T00:01:00Z');
});
