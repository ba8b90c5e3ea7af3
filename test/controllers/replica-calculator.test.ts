// The HPA's replica calculation against upstream's own cases (pkg/controller/podautoscaler/
// replica_calculator_test.go: TestReplicaCalcScaleUp, …ScaleUpUnreadyLessScale, …ScaleDown,
// …ScaleDownIgnoresUnreadyPods, …ScaleDownIgnoresDeletionPods, …Tolerance, …MissingMetrics*), with
// pods started 10 minutes ago (past the cpu initialization period) and a fixed now.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { rawResourceReplicas, resourceReplicas, type PodMetrics } from '../../src/controllers/replica-calculator.js';

const now = Date.parse('2026-01-01T12:00:00Z');
const cool = new Date(now - 10 * 60_000).toISOString();

interface Case {
  currentReplicas: number;
  /** Request of each pod, in cores. */
  requests: number[];
  /** Usage of the first pods, milli-cores; pods beyond have no metrics. */
  levels: number[];
  ready?: boolean[];
  deleting?: boolean[];
  target: number;
}

function pods(c: Case): Pod[] {
  return c.requests.map((r, i) => ({
    metadata: { name: `p${i}`, namespace: 'default', ...(c.deleting?.[i] ? { deletionTimestamp: cool } : {}) },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${r * 1000}m`, memory: `${r}Gi` } } }] },
    status: {
      phase: 'Running',
      startTime: cool,
      conditions: [{ type: 'Ready', status: c.ready?.[i] === false ? 'False' : 'True', lastTransitionTime: cool }],
    },
  })) as Pod[];
}

function metrics(c: Case): PodMetrics {
  return new Map(c.levels.map((v, i) => [`p${i}`, { value: v, timestampMs: now - 5_000, windowMs: 30_000 }]));
}

const calc = (c: Case) => resourceReplicas(c.currentReplicas, c.target, 'cpu', pods(c), metrics(c), now);

test('scale up: 3 pods at 300/500/700m of 1 core, target 30 % → 5, utilization 50 %, 500m', () => {
  assert.deepEqual(calc({ currentReplicas: 3, requests: [1, 1, 1], levels: [300, 500, 700], target: 30 }), { replicas: 5, utilization: 50, rawAverage: 500 });
});

test('scale up with an unready pod counted as using nothing → 4 (less scale)', () => {
  const r = calc({ currentReplicas: 3, requests: [1, 1, 1], levels: [300, 500, 700], ready: [false, true, true], target: 30 });
  assert.deepEqual(r, { replicas: 4, utilization: 60, rawAverage: 600 });
});

test('scale down: 5 pods, 1400m of 5 cores, target 50 % → 3, utilization 28 %', () => {
  const r = calc({ currentReplicas: 5, requests: [1, 1, 1, 1, 1], levels: [100, 300, 500, 250, 250], target: 50 });
  assert.deepEqual(r, { replicas: 3, utilization: 28, rawAverage: 280 });
});

test('scale down ignores unready pods → 2', () => {
  const r = calc({ currentReplicas: 5, requests: [1, 1, 1, 1, 1], levels: [100, 300, 500, 250, 250], ready: [true, true, true, false, false], target: 50 });
  assert.deepEqual(r, { replicas: 2, utilization: 30, rawAverage: 300 });
});

test('scale down ignores pods being deleted → 2', () => {
  const r = calc({ currentReplicas: 5, requests: [1, 1, 1, 1, 1], levels: [100, 300, 500, 250, 250], deleting: [false, false, false, true, true], target: 50 });
  assert.deepEqual(r, { replicas: 2, utilization: 30, rawAverage: 300 });
});

test('within the tolerance of 0.1: 102 % of a 100 % target changes nothing', () => {
  const r = calc({ currentReplicas: 3, requests: [0.9, 1.0, 1.1], levels: [1010, 1030, 1020], target: 100 });
  assert.deepEqual(r, { replicas: 3, utilization: 102, rawAverage: 1020 });
});

test('missing metrics: equal, above (a missing pod counted as 0 reverses the direction) and below (counted at its request) change nothing', () => {
  assert.equal(calc({ currentReplicas: 2, requests: [1, 1], levels: [1000], target: 100 }).replicas, 2);
  assert.equal(calc({ currentReplicas: 2, requests: [1, 1], levels: [1900], target: 100 }).replicas, 2);
  assert.equal(calc({ currentReplicas: 2, requests: [1, 1], levels: [600], target: 100 }).replicas, 2);
});

test('missing metrics on a scale up: the missing pod counted as 0 still scales up', () => {
  // 4 pods, 3 with metrics at 2 cores of 1: ratio 2; with the missing one at 0, 6000/4000 = 1.5 → ceil(1.5 × 4) = 6.
  assert.equal(calc({ currentReplicas: 4, requests: [1, 1, 1, 1], levels: [2000, 2000, 2000], target: 100 }).replicas, 6);
});

test('missing metrics with an unready pod: the change of direction leaves the count (MissingMetricsUnreadyChange)', () => {
  const r = calc({ currentReplicas: 3, requests: [1, 1, 1], levels: [100, 450], ready: [false, true, true], target: 50 });
  assert.deepEqual(r, { replicas: 3, utilization: 45, rawAverage: 450 });
});

test('within the cpu initialization period a pod sampled before one window since ready is unready', () => {
  const start = new Date(now - 60_000).toISOString();
  const ps = pods({ currentReplicas: 2, requests: [1, 1], levels: [], target: 50 });
  for (const p of ps) {
    (p.status as { startTime: string }).startTime = start;
    p.status!.conditions![0]!.lastTransitionTime = new Date(now - 20_000).toISOString();
  }
  const m: PodMetrics = new Map([
    ['p0', { value: 900, timestampMs: now - 1_000, windowMs: 30_000 }],
    ['p1', { value: 900, timestampMs: now - 1_000, windowMs: 15_000 }],
  ]);
  // p0's window (30 s) began before it was ready (20 s ago): unready, counted as 0 on this scale-up.
  const r = resourceReplicas(2, 50, 'cpu', ps, m, now);
  assert.deepEqual(r, { replicas: 2, utilization: 90, rawAverage: 900 });
});

test('errors in upstream words: no pods, no metrics of ready pods, a container without a request', () => {
  assert.throws(() => resourceReplicas(1, 50, 'cpu', [], new Map(), now), /^Error: no pods returned by selector while calculating replica count$/);
  const c: Case = { currentReplicas: 2, requests: [1, 1], levels: [500, 500], ready: [false, false], target: 50 };
  assert.throws(() => calc(c), /did not receive metrics for targeted pods \(pods might be unready\)/);
  const ps = pods({ currentReplicas: 1, requests: [1], levels: [100], target: 50 });
  delete ps[0]!.spec!.containers[0]!.resources;
  assert.throws(
    () => resourceReplicas(1, 50, 'cpu', ps, new Map([['p0', { value: 100, timestampMs: now, windowMs: 0 }]]), now),
    /missing request for cpu in container c of Pod p0/,
  );
});

test('AverageValue (raw) targets: memory of 3 pods against 500Mi', () => {
  const mi = 1024 * 1024 * 1000; // 1 Mi in milli-bytes
  const c: Case = { currentReplicas: 3, requests: [1, 1, 1], levels: [900 * mi, 900 * mi, 900 * mi], target: 0 };
  const r = rawResourceReplicas(3, 500 * mi, 'memory', pods(c), metrics(c), now);
  assert.deepEqual(r, { replicas: 6, usage: 900 * mi });
  // Memory has no readiness rule: an unready pod with metrics counts.
  const u = rawResourceReplicas(3, 500 * mi, 'memory', pods({ ...c, ready: [false, true, true] }), metrics(c), now);
  assert.equal(u.replicas, 6);
});
