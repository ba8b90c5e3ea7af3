// The probe manager (prober_manager_test.go): workers per (pod, container, type), add/remove/cleanup
// idempotency, the started/ready table of UpdatePodStatus, and the run loop's timing on a FakeClock.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../../src/util/clock.js';
import type { Container, ContainerStatus, Pod, PodStatus } from '../../src/api/types.js';
import { defaultProbe, getTestPod, newHarness, runningStatus, testContainerID, testPodUID } from './helpers.js';

const probe = defaultProbe();

function container(name: string, probes: { liveness?: boolean; readiness?: boolean; startup?: boolean } = {}): Container {
  return {
    name,
    image: 'img',
    ...(probes.liveness ? { livenessProbe: probe } : {}),
    ...(probes.readiness ? { readinessProbe: probe } : {}),
    ...(probes.startup ? { startupProbe: probe } : {}),
  };
}

function pod(uid: string, containers: Container[], initContainers?: Container[]): Pod {
  return { metadata: { name: `pod-${uid}`, namespace: 'ns', uid }, spec: { containers, ...(initContainers ? { initContainers } : {}) } };
}

const allProbes = { liveness: true, readiness: true, startup: true };

test('AddPod creates a worker per probe of regular containers and sidecars, never of plain init containers', () => {
  const h = newHarness(new FakeClock());
  h.manager.addPod(pod('none', [container('a'), container('b')]));
  assert.equal(h.manager.workerCount(), 0);

  const p = pod(
    'probed',
    [container('no_probe1'), container('readiness', { readiness: true }), container('liveness', { liveness: true }), container('startup', { startup: true })],
    [{ ...container('init', allProbes) }, { ...container('sidecar', allProbes), restartPolicy: 'Always' }],
  );
  h.manager.addPod(p);
  const keys = ['readiness/Readiness', 'liveness/Liveness', 'startup/Startup', 'sidecar/Startup', 'sidecar/Readiness', 'sidecar/Liveness'];
  assert.equal(h.manager.workerCount(), keys.length);
  for (const k of keys) {
    const [c, t] = k.split('/') as [string, 'Liveness' | 'Readiness' | 'Startup'];
    assert.ok(h.manager.getWorker('probed', c, t), k);
  }
  assert.equal(h.manager.getWorker('probed', 'init', 'Liveness'), undefined);

  // Idempotent: a second AddPod changes nothing.
  const before = keys.map((k) => h.manager.getWorker('probed', k.split('/')[0]!, k.split('/')[1] as 'Liveness'));
  h.manager.addPod(p);
  assert.equal(h.manager.workerCount(), keys.length);
  keys.forEach((k, i) => assert.equal(h.manager.getWorker('probed', k.split('/')[0]!, k.split('/')[1] as 'Liveness'), before[i], k));

  h.manager.removePod(p);
  assert.equal(h.manager.workerCount(), 0);
  h.manager.removePod(p); // harmless
  assert.equal(h.manager.workerCount(), 0);
});

test('AddPod skips only the keys that already have a worker', () => {
  const h = newHarness(new FakeClock());
  const p = pod('uid', [container('first', { liveness: true }), container('second', { liveness: true, readiness: true })]);
  h.manager.addPod(p);
  h.manager.getWorker('uid', 'second', 'Liveness')!.stop();
  assert.equal(h.manager.workerCount(), 2);
  h.manager.addPod(p);
  assert.equal(h.manager.workerCount(), 3, 'the worker after an existing key is recreated');
});

test('StopLivenessAndStartup stops liveness and startup of regular containers only', () => {
  const h = newHarness(new FakeClock());
  const p = pod('uid', [container('main', allProbes)], [{ ...container('sidecar', allProbes), restartPolicy: 'Always' }]);
  h.manager.addPod(p);
  assert.equal(h.manager.workerCount(), 6);
  h.manager.stopLivenessAndStartup(p);
  assert.equal(h.manager.workerCount(), 4);
  assert.ok(h.manager.getWorker('uid', 'main', 'Readiness'));
  assert.equal(h.manager.getWorker('uid', 'main', 'Liveness'), undefined);
  assert.equal(h.manager.getWorker('uid', 'main', 'Startup'), undefined);
  for (const t of ['Liveness', 'Readiness', 'Startup'] as const) assert.ok(h.manager.getWorker('uid', 'sidecar', t));
});

test('CleanupPods stops the workers of pods not desired, repeatedly and harmlessly', () => {
  const h = newHarness(new FakeClock());
  const keep = pod('keep', [container('c', allProbes)]);
  const drop = pod('drop', [container('c', allProbes)]);
  h.manager.addPod(keep);
  h.manager.addPod(drop);
  for (let i = 0; i < 3; i++) {
    h.manager.cleanupPods(new Set(['keep']));
    assert.equal(h.manager.workerCount(), 3);
    assert.ok(h.manager.getWorker('keep', 'c', 'Readiness'));
    assert.equal(h.manager.getWorker('drop', 'c', 'Readiness'), undefined);
  }
  h.manager.cleanupPods(new Set());
  assert.equal(h.manager.workerCount(), 0);
});

function cs(name: string, state: ContainerStatus['state'], extra: Partial<ContainerStatus> = {}): ContainerStatus {
  return { name, containerID: `test://${name}`, image: 'img', imageID: '', ready: false, restartCount: 0, state, ...extra };
}

test('UpdatePodStatus sets started and ready by the kubelet table (§3.3)', () => {
  const h = newHarness(new FakeClock());
  const now = new Date(h.clock.now()).toISOString();
  const running = { running: { startedAt: now } };
  const p = pod(
    'uid',
    [
      container('no_probe'),
      container('ready_success', { readiness: true }),
      container('ready_failure', { readiness: true }),
      container('ready_unprobed', { readiness: true }),
      container('terminated'),
      container('waiting', { readiness: true }),
      container('startup_unprobed', { startup: true }),
      container('startup_success', { startup: true }),
      container('startup_failure', { startup: true }),
      container('startup_already_started', { startup: true }),
    ],
    [
      container('init_ok'),
      container('init_failed'),
      container('init_running'),
      { ...container('sidecar_no_probe'), restartPolicy: 'Always' },
      { ...container('sidecar_ready_failure', { readiness: true }), restartPolicy: 'Always' },
      { ...container('sidecar_startup', { startup: true }), restartPolicy: 'Always' },
    ],
  );
  h.manager.addPod(p);
  h.manager.readiness.set('test://ready_success', 'Success', 'uid');
  h.manager.readiness.set('test://ready_failure', 'Failure', 'uid');
  h.manager.readiness.set('test://sidecar_ready_failure', 'Failure', 'uid');
  h.manager.startup.set('test://startup_success', 'Success', 'uid');
  h.manager.startup.set('test://startup_failure', 'Failure', 'uid');
  const status: PodStatus = {
    phase: 'Running',
    containerStatuses: [
      cs('no_probe', running),
      cs('ready_success', running),
      cs('ready_failure', running),
      cs('ready_unprobed', running),
      cs('terminated', { terminated: { exitCode: 0 } }),
      cs('waiting', { waiting: { reason: 'CrashLoopBackOff' } }),
      cs('startup_unprobed', running),
      cs('startup_success', running),
      cs('startup_failure', running),
      cs('startup_already_started', running, { started: true }),
    ],
    initContainerStatuses: [
      cs('init_ok', { terminated: { exitCode: 0 } }),
      cs('init_failed', { terminated: { exitCode: 1 } }),
      cs('init_running', running),
      cs('sidecar_no_probe', running),
      cs('sidecar_ready_failure', running),
      cs('sidecar_startup', running),
    ],
  };
  h.manager.updatePodStatus(p, status);
  const expected: Record<string, [boolean, boolean]> = {
    no_probe: [true, true],
    ready_success: [true, true],
    ready_failure: [true, false],
    ready_unprobed: [true, false],
    terminated: [false, false],
    waiting: [false, false],
    startup_unprobed: [false, false],
    startup_success: [true, true],
    startup_failure: [false, false],
    startup_already_started: [true, true],
    init_ok: [false, true],
    init_failed: [false, false],
    init_running: [true, false],
    sidecar_no_probe: [true, true],
    sidecar_ready_failure: [true, false],
    sidecar_startup: [false, false],
  };
  for (const c of [...status.containerStatuses!, ...status.initContainerStatuses!]) {
    assert.deepEqual([c.started, c.ready], expected[c.name], c.name);
  }
  // Containers with a readiness worker that are not ready were sent a manual trigger (1-slot: full now).
  for (const name of ['ready_failure', 'ready_unprobed']) {
    assert.equal(h.manager.getWorker('uid', name, 'Readiness')!.trigger(), false, `${name} already triggered`);
  }
  assert.equal(h.manager.getWorker('uid', 'ready_success', 'Readiness')!.trigger(), true, 'ready_success was not triggered');
});

test('UpdatePodStatus after a kubelet restart (§3.5) keeps a Ready pod ready, and not-ready an unready one', () => {
  for (const [podReady, expectReady] of [
    ['True', true],
    ['False', false],
  ] as const) {
    const h = newHarness(new FakeClock());
    const startedBefore = new Date(h.manager.startMs - 60_000).toISOString();
    const p: Pod = {
      ...pod('uid', [container('probed', { readiness: true }), container('plain')]),
      status: { conditions: [{ type: 'Ready', status: podReady }] },
    };
    h.manager.addPod(p);
    const status: PodStatus = {
      containerStatuses: [cs('probed', { running: { startedAt: startedBefore } }), cs('plain', { running: { startedAt: startedBefore } })],
    };
    h.manager.updatePodStatus(p, status);
    assert.equal(status.containerStatuses![0]!.ready, expectReady, `probed, pod Ready=${podReady}`);
    assert.equal(status.containerStatuses![1]!.ready, true, 'no readiness probe: ready');
  }
});

// ---- the run loop on a FakeClock ----

/** A harness whose manager started long ago (no jitter) with a running, started container. */
async function loopHarness(t: 'Liveness' | 'Readiness' | 'Startup', overrides = {}, opts: Parameters<typeof newHarness>[1] = {}) {
  const clock = new FakeClock();
  const h = newHarness(clock, { spreadPhases: false, ...opts });
  await clock.advance(60_000);
  const p = getTestPod(t, defaultProbe({ periodSeconds: 10, failureThreshold: 3, ...overrides }));
  h.provider.set(p, runningStatus(clock.now() - 60_000, { started: t !== 'Startup' }));
  return { ...h, pod: p };
}

test('the first probe runs at worker start, then one every period', async () => {
  const h = await loopHarness('Liveness');
  const t0 = h.clock.now();
  h.manager.addPod(h.pod);
  await h.clock.advance(0);
  assert.equal(h.prober.calls, 1, 'first probe at worker start');
  await h.clock.advance(9_999);
  assert.equal(h.prober.calls, 1);
  await h.clock.advance(1);
  assert.equal(h.prober.calls, 2);
  await h.clock.advance(30_000);
  assert.deepEqual(
    h.prober.seen.map((s) => s.at - t0),
    [0, 10_000, 20_000, 30_000, 40_000],
  );
});

test('jitter in [0, period) delays the first probe only when the manager started less than a period ago', async () => {
  for (const [age, random, expectFirst] of [
    [0, 0.5, 5_000],
    [9_999, 0.25, 2_500],
    [10_000, 0.5, 0],
  ] as const) {
    const clock = new FakeClock();
    let randomCalls = 0;
    const h = newHarness(clock, { spreadPhases: false, random: () => (randomCalls++, random) });
    await clock.advance(age);
    const p = getTestPod('Readiness', defaultProbe({ periodSeconds: 10 }));
    h.provider.set(p, runningStatus(clock.now() - 60_000, { started: true }));
    const t0 = clock.now();
    h.manager.addPod(p);
    await clock.advance(20_000);
    assert.equal(h.prober.seen[0]!.at - t0, expectFirst, `manager age ${age}`);
    assert.equal(h.prober.seen[1]!.at - h.prober.seen[0]!.at, 10_000, 'then one period');
    assert.equal(randomCalls, expectFirst === 0 ? 0 : 1);
  }
});

test('a manual trigger probes at once and restarts the period', async () => {
  const h = await loopHarness('Readiness', { failureThreshold: 1 });
  h.prober.result = 'Failure';
  const t0 = h.clock.now();
  h.manager.addPod(h.pod);
  await h.clock.advance(10_000); // probes at 0 and 10 s
  await h.clock.advance(5_000);
  const status = structuredClone(h.provider.statuses.get(testPodUID)!);
  h.manager.updatePodStatus(h.pod, status); // not ready: trigger
  h.manager.updatePodStatus(h.pod, status); // the slot is full: dropped
  await h.clock.advance(0);
  assert.equal(h.prober.calls, 3, 'triggered probe ran at once, once');
  await h.clock.advance(9_999);
  assert.equal(h.prober.calls, 3, 'the old schedule (20 s) was dropped');
  await h.clock.advance(1);
  assert.deepEqual(
    h.prober.seen.map((s) => s.at - t0),
    [0, 10_000, 15_000, 25_000],
  );
});

test('a probe that outlasts its period is followed by one buffered tick, then the original phase', async () => {
  const h = await loopHarness('Liveness');
  let release!: () => void;
  const t0 = h.clock.now();
  h.manager.addPod(h.pod);
  await h.clock.advance(0); // probe #1 at 0 (fast)
  h.prober.gate = new Promise((r) => (release = r));
  await h.clock.advance(10_000); // probe #2 at 10 s hangs
  await h.clock.advance(25_000); // ticks at 20 s and 30 s pass while it runs
  h.prober.gate = undefined;
  release();
  await h.clock.advance(0); // completes at 35 s: the buffered tick runs at once
  await h.clock.advance(5_000); // then 40 s, on the original phase
  assert.deepEqual(
    h.prober.seen.map((s) => s.at - t0),
    [0, 10_000, 35_000, 40_000],
  );
});

test('an iteration that throws keeps the worker going', async () => {
  const h = await loopHarness('Liveness');
  h.manager.addPod(h.pod);
  h.provider.throwNext = 1;
  await h.clock.advance(0);
  assert.equal(h.prober.calls, 0);
  await h.clock.advance(10_000);
  assert.equal(h.prober.calls, 1);
  assert.equal(h.manager.workerCount(), 1);
});

test('a worker exits when the pod is terminal and removes its cache entry and metric series', async () => {
  const registry = new Registry();
  const h = await loopHarness('Readiness', {}, { registry });
  h.manager.addPod(h.pod);
  await h.clock.advance(20_000);
  assert.equal(h.manager.readiness.get(testContainerID), 'Success');
  const text = await registry.metrics();
  assert.match(
    text,
    /prober_probe_total\{probe_type="Readiness",result="successful",container="cOnTaInEr_NaMe",pod="test-pod",namespace="test-ns",pod_uid="test-pod-uid"\} 3/,
  );
  assert.match(text, /prober_probe_duration_seconds_count\{probe_type="Readiness",container="cOnTaInEr_NaMe",pod="test-pod",namespace="test-ns"\} 3/);
  assert.match(text, /process_start_time_seconds \d+/);

  h.provider.statuses.get(testPodUID)!.phase = 'Succeeded';
  await h.clock.advance(10_000);
  assert.equal(h.manager.workerCount(), 0);
  assert.equal(h.manager.readiness.get(testContainerID), undefined);
  const after = await registry.metrics();
  assert.doesNotMatch(after, /prober_probe_total\{/);
  assert.doesNotMatch(after, /prober_probe_duration_seconds_count\{/);
});

test('failed probes are counted but not timed', async () => {
  const registry = new Registry();
  const h = await loopHarness('Liveness', {}, { registry });
  h.prober.result = 'Failure';
  h.manager.addPod(h.pod);
  await h.clock.advance(10_000);
  const text = await registry.metrics();
  assert.match(text, /prober_probe_total\{probe_type="Liveness",result="failed",[^}]*\} 2/);
  assert.doesNotMatch(text, /prober_probe_duration_seconds_count\{/);
});

test('a worker stopped while its probe runs exits when the probe returns', async () => {
  const h = await loopHarness('Liveness');
  let release!: () => void;
  h.prober.gate = new Promise((r) => (release = r));
  h.manager.addPod(h.pod);
  await h.clock.advance(0);
  h.manager.removePod(h.pod);
  assert.equal(h.manager.workerCount(), 1, 'still probing');
  release();
  await h.clock.advance(0);
  assert.equal(h.manager.workerCount(), 0);
  await h.clock.advance(60_000);
  assert.equal(h.prober.calls, 1);
});

test('close stops every worker and the schedule', async () => {
  const h = await loopHarness('Liveness');
  h.manager.addPod(h.pod);
  h.manager.close();
  assert.equal(h.manager.workerCount(), 0);
  await h.clock.advance(60_000);
  assert.equal(h.prober.calls, 0);
  assert.equal(h.clock.pending(), 0);
});

test('phase spreading: workers added together probe spread over the period, each exactly a period apart', async () => {
  const clock = new FakeClock();
  const h = newHarness(clock); // spreading on (the default)
  await clock.advance(60_000);
  const pods: Pod[] = [];
  for (let i = 0; i < 300; i++) {
    const p = getTestPod('Liveness', defaultProbe({ periodSeconds: 1, failureThreshold: 3 }), { uid: `uid-${i}` });
    pods.push(p);
    h.manager.addPod(p); // no status yet: the first iterations are gated
  }
  await clock.advance(0);
  assert.equal(h.prober.calls, 0);
  for (const p of pods) h.provider.set(p, runningStatus(clock.now() - 60_000, { started: true }));
  await clock.advance(3_000);
  const at = h.prober.seen.map((s) => s.at);
  assert.ok(at.length >= 600, `probes ran (${at.length})`);
  // Spread: many distinct offsets within the period, no big cluster in any 10 ms window.
  const offsets = new Set(at.map((t) => t % 1000));
  assert.ok(offsets.size > 200, `distinct phases: ${offsets.size}`);
  const perWindow = new Map<number, number>();
  for (const t of at) perWindow.set(Math.floor(t / 10), (perWindow.get(Math.floor(t / 10)) ?? 0) + 1);
  assert.ok(Math.max(...perWindow.values()) <= 15, `largest 10 ms burst: ${Math.max(...perWindow.values())}`);
  // Each worker's executed probes are exactly one period apart.
  const byWorker = new Map<string, number[]>();
  for (const s of h.prober.seen) byWorker.set(s.podUid, [...(byWorker.get(s.podUid) ?? []), s.at]);
  assert.equal(byWorker.size, 300);
  for (const [uid, times] of byWorker) {
    for (let i = 1; i < times.length; i++) assert.equal(times[i]! - times[i - 1]!, 1000, uid);
  }
});

test('without phase spreading, workers added together probe together (the kubelet timing)', async () => {
  const clock = new FakeClock();
  const h = newHarness(clock, { spreadPhases: false });
  await clock.advance(60_000);
  for (let i = 0; i < 50; i++) {
    const p = getTestPod('Liveness', defaultProbe({ periodSeconds: 1, failureThreshold: 3 }), { uid: `uid-${i}` });
    h.manager.addPod(p);
    h.provider.set(p, runningStatus(clock.now() - 60_000, { started: true }));
  }
  await clock.advance(2_000);
  assert.equal(new Set(h.prober.seen.map((s) => s.at % 1000)).size, 1);
});

test('the onProbeStart hook sees every iteration with its due time', async () => {
  const starts: [number, number][] = [];
  const h = await loopHarness('Liveness', {}, { onProbeStart: (due, actual) => starts.push([due, actual]) });
  const t0 = h.clock.now();
  h.manager.addPod(h.pod);
  await h.clock.advance(20_000);
  assert.deepEqual(
    starts.map(([due, actual]) => [due - t0, actual - t0]),
    [
      [0, 0],
      [10_000, 10_000],
      [20_000, 20_000],
    ],
  );
});

test('phase spreading: workers in lockstep (started together, then triggered together) slew apart, intervals only shortened, by at most 10 %', async () => {
  const clock = new FakeClock();
  const h = newHarness(clock); // spreading on (the default)
  await clock.advance(60_000);
  h.prober.result = 'Failure'; // readiness stays Failure, so every status generation triggers
  const pods: Pod[] = [];
  const statuses: PodStatus[] = [];
  for (let i = 0; i < 300; i++) {
    const p = getTestPod('Readiness', defaultProbe({ periodSeconds: 1, failureThreshold: 1 }), { uid: `uid-${i}` });
    const s = runningStatus(clock.now() - 60_000, { started: true });
    h.provider.set(p, s);
    pods.push(p);
    statuses.push(s);
    h.manager.addPod(p); // status known: the first probe runs at worker start, all at once
  }
  await clock.advance(500);
  const triggerAt = clock.now();
  pods.forEach((p, i) => h.manager.updatePodStatus(p, structuredClone(statuses[i]!)));
  await clock.advance(14_000);

  const byWorker = new Map<string, number[]>();
  for (const s of h.prober.seen) byWorker.set(s.podUid, [...(byWorker.get(s.podUid) ?? []), s.at]);
  assert.equal(byWorker.size, 300);
  for (const [uid, times] of byWorker) {
    const afterTrigger = times.filter((t) => t >= triggerAt);
    assert.equal(afterTrigger[0], triggerAt, `${uid}: the trigger probes at once`);
    assert.equal(afterTrigger[1]! - afterTrigger[0]!, 1000, `${uid}: the period right after a trigger is exact`);
    for (let i = 1; i < times.length; i++) {
      const d = times[i]! - times[i - 1]!;
      if (times[i] === triggerAt) continue;
      assert.ok(d >= 900 && d <= 1000, `${uid}: interval ${d} ms within [0.9 P, P]`);
    }
  }
  // After a few periods the workers no longer probe together.
  const late = h.prober.seen.filter((s) => s.at >= triggerAt + 11_000).map((s) => s.at);
  assert.ok(new Set(late.map((t) => t % 1000)).size > 200, 'spread over the period');
  const perWindow = new Map<number, number>();
  for (const t of late) perWindow.set(Math.floor(t / 10), (perWindow.get(Math.floor(t / 10)) ?? 0) + 1);
  assert.ok(Math.max(...perWindow.values()) <= 15, `largest 10 ms burst: ${Math.max(...perWindow.values())}`);
});
