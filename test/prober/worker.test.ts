// The worker's doProbe, iteration by iteration, as the kubelet's worker_test.go drives it: a FakeClock,
// a status provider the test writes, and a scripted prober at the prober boundary.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import type { PodStatus, ProbeType } from '../../src/api/types.js';
import type { ProbeResult } from '../../src/prober/types.js';
import { defaultProbe, getTestPod, newHarness, runningStatus, testContainerID, testPodUID, withState, type Harness } from './helpers.js';

const probeTypes: ProbeType[] = ['Liveness', 'Readiness', 'Startup'];

function cacheOf(h: Harness, t: ProbeType) {
  return t === 'Liveness' ? h.manager.liveness : t === 'Readiness' ? h.manager.readiness : h.manager.startup;
}

/** A worker for a pod whose container has probe type t; the container counts as started unless t is Startup. */
function setup(t: ProbeType, overrides: Parameters<typeof defaultProbe>[0] = {}, podOpts: Parameters<typeof getTestPod>[2] = {}) {
  const clock = new FakeClock();
  const h = newHarness(clock);
  const pod = getTestPod(t, defaultProbe(overrides), podOpts);
  const container = podOpts.sidecar ? pod.spec!.initContainers![0]! : pod.spec!.containers[0]!;
  const w = h.manager.newWorker(t, pod, container);
  return { h, pod, w, cache: cacheOf(h, t) };
}

function startedStatus(h: Harness, t: ProbeType, sidecar = false): PodStatus {
  return runningStatus(h.clock.now(), { started: t !== 'Startup', sidecar });
}

test('doProbe table (worker_test.go TestDoProbe)', async () => {
  const now = Date.UTC(2026, 0, 1);
  const running = runningStatus(now);
  const cases: {
    name: string;
    status: PodStatus | undefined;
    deleting?: boolean;
    keepGoing: boolean;
    result?: ProbeResult | 'initial' | 'none';
    probed?: boolean;
  }[] = [
    { name: 'no status', status: undefined, keepGoing: true, result: 'none' },
    { name: 'pod failed', status: { ...running, phase: 'Failed' }, keepGoing: false, result: 'none' },
    { name: 'pod succeeded', status: { ...running, phase: 'Succeeded' }, keepGoing: false, result: 'none' },
    { name: 'no container status', status: { phase: 'Running', containerStatuses: [] }, keepGoing: true, result: 'none' },
    {
      name: 'container without ID',
      status: { phase: 'Running', containerStatuses: [{ ...running.containerStatuses![0]!, containerID: '' }] },
      keepGoing: true,
      result: 'none',
    },
    { name: 'container waiting', status: withState(running, { waiting: { reason: 'ContainerCreating' } }), keepGoing: true, result: 'Failure' },
    { name: 'container terminated, restartPolicy Always', status: withState(running, { terminated: { exitCode: 0 } }), keepGoing: true, result: 'Failure' },
    { name: 'pod deletion requested', status: running, deleting: true, keepGoing: false, result: 'Success' },
  ];
  for (const t of probeTypes) {
    for (const tc of cases) {
      const { h, pod, w, cache } = setup(t);
      let status = tc.status;
      if (status?.containerStatuses?.[0] && status.containerStatuses[0].state?.running) {
        status = structuredClone(status);
        status.containerStatuses![0]!.started = t !== 'Startup';
      }
      if (status) h.provider.set(tc.deleting ? { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(now).toISOString() } } : pod, status);
      const keepGoing = await w.doProbe();
      // Readiness keeps probing while the pod terminates; liveness and startup stop quietly.
      const expectKeepGoing = tc.deleting && t === 'Readiness' ? true : tc.keepGoing;
      assert.equal(keepGoing, expectKeepGoing, `${t} ${tc.name}: keepGoing`);
      const got = cache.get(testContainerID);
      if (tc.result === 'none') assert.equal(got, undefined, `${t} ${tc.name}: no result`);
      else if (tc.deleting && t === 'Readiness') assert.equal(got, 'Success', `${t} ${tc.name}: readiness probed`);
      else assert.equal(got, tc.result, `${t} ${tc.name}: result`);
    }
  }
});

test('terminated container under restartPolicy Never ends the worker unless it is a sidecar', async () => {
  for (const t of probeTypes) {
    for (const [policy, sidecar, keepGoing] of [
      ['Never', false, false],
      ['OnFailure', false, true],
      ['Always', false, true],
      ['Never', true, true],
    ] as const) {
      const { h, pod, w, cache } = setup(t, {}, { restartPolicy: policy, sidecar });
      h.provider.set(pod, withState(runningStatus(h.clock.now(), { sidecar }), { terminated: { exitCode: 1 } }));
      assert.equal(await w.doProbe(), keepGoing, `${t} ${policy} sidecar=${sidecar}`);
      assert.equal(cache.get(testContainerID), 'Failure');
      assert.equal(h.prober.calls, 0);
    }
  }
});

test('initial values are seeded when a new container ID is seen', async () => {
  const initial: Record<ProbeType, ProbeResult> = { Liveness: 'Success', Readiness: 'Failure', Startup: 'Unknown' };
  for (const t of probeTypes) {
    // An initial delay keeps the probe from running, so the cache shows the seeded value.
    const { h, pod, w, cache } = setup(t, { initialDelaySeconds: 100 });
    h.provider.set(pod, startedStatus(h, t));
    assert.equal(await w.doProbe(), true);
    assert.equal(cache.get(testContainerID), initial[t], t);
    assert.equal(h.prober.calls, 0);
  }
});

test('initial delay counts whole seconds since the container started', async () => {
  for (const t of probeTypes) {
    const { h, pod, w, cache } = setup(t, { initialDelaySeconds: 10 });
    h.provider.set(pod, startedStatus(h, t));
    await h.clock.advance(9_999); // 9.999 s truncates to 9 < 10
    assert.equal(await w.doProbe(), true);
    assert.equal(h.prober.calls, 0, `${t}: still delayed`);
    await h.clock.advance(1);
    assert.equal(await w.doProbe(), true);
    assert.equal(h.prober.calls, 1, `${t}: probed once the delay passed`);
    assert.equal(cache.get(testContainerID), 'Success');
  }
});

test('a negative initial delay means already passed', async () => {
  const { h, pod, w } = setup('Readiness', { initialDelaySeconds: -100 });
  h.provider.set(pod, startedStatus(h, 'Readiness'));
  await w.doProbe();
  assert.equal(h.prober.calls, 1);
});

test('success threshold (TestSuccessThreshold: S=3, F=1)', async () => {
  const { h, pod, w, cache } = setup('Readiness', { successThreshold: 3, failureThreshold: 1 });
  h.provider.set(pod, startedStatus(h, 'Readiness'));
  h.prober.result = 'Success';
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 2; j++) {
      assert.equal(await w.doProbe(), true);
      assert.equal(cache.get(testContainerID), 'Failure', `${j + 1} success (${i})`);
    }
    assert.equal(await w.doProbe(), true);
    assert.equal(cache.get(testContainerID), 'Success', `3 success (${i})`);
    h.prober.result = 'Failure';
    assert.equal(await w.doProbe(), true);
    assert.equal(cache.get(testContainerID), 'Failure', `1 failure (${i})`);
    h.prober.result = 'Success';
  }
});

test('failure threshold (TestFailureThreshold: S=1, F=3)', async () => {
  const { h, pod, w, cache } = setup('Readiness', { successThreshold: 1, failureThreshold: 3 });
  h.provider.set(pod, startedStatus(h, 'Readiness'));
  for (let i = 0; i < 2; i++) {
    h.prober.result = 'Success';
    for (let j = 0; j < 3; j++) {
      await w.doProbe();
      assert.equal(cache.get(testContainerID), 'Success', `${j + 1} success (${i})`);
    }
    h.prober.result = 'Failure';
    for (let j = 0; j < 2; j++) {
      await w.doProbe();
      assert.equal(cache.get(testContainerID), 'Success', `${j + 1} failing (${i})`);
    }
    for (let j = 0; j < 3; j++) {
      await w.doProbe();
      assert.equal(cache.get(testContainerID), 'Failure', `${j + 3} failure (${i})`);
    }
  }
});

test('liveness run-length: success, then F=3 failures publish Failure and reset the run', async () => {
  const { h, pod, w, cache } = setup('Liveness', { failureThreshold: 3 });
  h.provider.set(pod, startedStatus(h, 'Liveness'));
  const steps: [ProbeResult, number, ProbeResult, boolean][] = [
    ['Success', 1, 'Success', false],
    ['Failure', 1, 'Success', false],
    ['Failure', 2, 'Success', false],
    ['Failure', 0, 'Failure', true],
  ];
  for (const [result, run, cached, hold] of steps) {
    h.prober.result = result;
    await w.doProbe();
    assert.equal(w.resultRun, run, `run after ${result}`);
    assert.equal(cache.get(testContainerID), cached);
    assert.equal(w.onHold, hold);
  }
});

test('a prober error is discarded: no counting, no cache change', async () => {
  const { h, pod, w, cache } = setup('Liveness', { failureThreshold: 1 });
  h.provider.set(pod, startedStatus(h, 'Liveness'));
  h.prober.error = new Error('boom');
  for (let i = 0; i < 5; i++) assert.equal(await w.doProbe(), true);
  assert.equal(cache.get(testContainerID), 'Success');
  assert.equal(w.resultRun, 0);
  assert.equal(h.prober.calls, 5);
});

test('liveness Failure holds the worker until a new container ID, which is seeded Success', async () => {
  const { h, pod, w, cache } = setup('Liveness', { failureThreshold: 1 });
  h.provider.set(pod, startedStatus(h, 'Liveness'));
  h.prober.result = 'Failure';
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Failure');
  assert.equal(w.onHold, true);
  h.prober.result = 'Success';
  for (let i = 0; i < 3; i++) await w.doProbe();
  assert.equal(h.prober.calls, 1, 'on hold: no probes');
  assert.equal(cache.get(testContainerID), 'Failure');

  const newID = 'test://new_container_id';
  h.provider.set(pod, runningStatus(h.clock.now(), { started: true, id: newID }));
  h.prober.result = 'Failure';
  await w.doProbe();
  assert.equal(cache.get(testContainerID), undefined, 'old entry removed');
  // The run was reset to 0 when the hold began, so one failure (F=1) publishes again.
  assert.equal(h.prober.calls, 2);
  assert.equal(cache.get(newID), 'Failure');
});

test('the run-length is not reset by a new container ID', async () => {
  const { h, pod, w, cache } = setup('Readiness', { successThreshold: 2, failureThreshold: 3 });
  h.provider.set(pod, startedStatus(h, 'Readiness'));
  await w.doProbe(); // Success run 1
  const newID = 'test://other';
  h.provider.set(pod, runningStatus(h.clock.now(), { started: true, id: newID }));
  await w.doProbe(); // Success run 2 → published on the new ID
  assert.equal(cache.get(newID), 'Success');
});

test('startup: below the failure threshold stays Unknown; F failures publish Failure and hold', async () => {
  const { h, pod, w, cache } = setup('Startup', { failureThreshold: 3 });
  h.provider.set(pod, startedStatus(h, 'Startup'));
  h.prober.result = 'Failure';
  for (let i = 0; i < 2; i++) {
    await w.doProbe();
    assert.equal(cache.get(testContainerID), 'Unknown', `failure ${i + 1}`);
  }
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Failure');
  assert.equal(w.onHold, true);
  await w.doProbe();
  await w.doProbe();
  assert.equal(h.prober.calls, 3, 'held after the published failure');
});

test('startup: one success publishes Success and holds until a new container', async () => {
  const { h, pod, w, cache } = setup('Startup', { failureThreshold: 3 });
  h.provider.set(pod, startedStatus(h, 'Startup'));
  h.prober.queue = [{ result: 'Failure' }, { result: 'Success' }];
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Unknown');
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Success');
  assert.equal(w.onHold, true);
  await w.doProbe();
  assert.equal(h.prober.calls, 2);
  // A restarted container is probed again, starting from Unknown.
  h.provider.set(pod, runningStatus(h.clock.now(), { started: false, id: 'test://restarted' }));
  h.prober.result = 'Failure';
  await w.doProbe();
  assert.equal(h.prober.calls, 3);
  assert.equal(cache.get('test://restarted'), 'Unknown');
});

test('startup worker stays idle (but alive) once the container is started', async () => {
  const { h, pod, w, cache } = setup('Startup');
  h.provider.set(pod, runningStatus(h.clock.now(), { started: true }));
  for (let i = 0; i < 3; i++) assert.equal(await w.doProbe(), true);
  assert.equal(h.prober.calls, 0);
  assert.equal(cache.get(testContainerID), 'Unknown');
});

test('liveness and readiness are disabled until the container has started', async () => {
  for (const t of ['Liveness', 'Readiness'] as const) {
    for (const started of [undefined, false]) {
      const { h, pod, w } = setup(t);
      const status = runningStatus(h.clock.now());
      if (started !== undefined) status.containerStatuses![0]!.started = started;
      h.provider.set(pod, status);
      assert.equal(await w.doProbe(), true);
      assert.equal(h.prober.calls, 0, `${t} started=${started}`);
      h.provider.set(pod, runningStatus(h.clock.now(), { started: true }));
      await w.doProbe();
      assert.equal(h.prober.calls, 1, `${t} probes once started`);
    }
  }
});

test('pod deletion is read from the current pod object', async () => {
  for (const t of probeTypes) {
    // F=3 so the first failure does not put the worker on hold.
    const { h, pod, w, cache } = setup(t, { failureThreshold: 3 });
    h.provider.set(pod, startedStatus(h, t));
    h.prober.result = 'Failure';
    await w.doProbe();
    h.provider.pods.set(testPodUID, { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(h.clock.now()).toISOString() } });
    const keepGoing = await w.doProbe();
    if (t === 'Readiness') {
      assert.equal(keepGoing, true);
      assert.equal(h.prober.calls, 2, 'readiness goes on probing');
    } else {
      assert.equal(keepGoing, false);
      assert.equal(cache.get(testContainerID), 'Success', `${t}: quiet shutdown`);
      assert.equal(h.prober.calls, 1);
    }
  }
});

test('a sidecar is probed from initContainerStatuses', async () => {
  const { h, pod, w, cache } = setup('Readiness', {}, { sidecar: true });
  h.provider.set(pod, startedStatus(h, 'Readiness', true));
  await w.doProbe();
  assert.equal(h.prober.calls, 1);
  assert.equal(cache.get(testContainerID), 'Success');
});

test('kubelet restart (§3.5): a container started before the grace point is not seeded', async () => {
  for (const t of probeTypes) {
    const { h, pod, w, cache } = setup(t, { initialDelaySeconds: 1000 });
    // Started 11 s before the manager: before the grace point (start − 10 s).
    h.provider.set(pod, runningStatus(h.manager.startMs - 11_000, { started: t !== 'Startup' }));
    await w.doProbe();
    assert.equal(cache.get(testContainerID), undefined, t);
  }
  // Started 9 s before: after the grace point, seeded as usual.
  const { h, pod, w, cache } = setup('Readiness', { initialDelaySeconds: 1000 });
  h.provider.set(pod, runningStatus(h.manager.startMs - 9_000, { started: true }));
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Failure');
});

test('kubelet restart (§3.5): a started sidecar with a startup probe is seeded Success', async () => {
  const { h, pod, w, cache } = setup('Startup', { initialDelaySeconds: 1000 }, { sidecar: true });
  h.provider.set(pod, runningStatus(h.manager.startMs - 60_000, { started: true, sidecar: true }));
  await w.doProbe();
  assert.equal(cache.get(testContainerID), 'Success');
});

test('an error thrown inside an iteration is caught and counts as keep going', async () => {
  const { h, pod, w } = setup('Liveness');
  h.provider.set(pod, startedStatus(h, 'Liveness'));
  h.provider.throwNext = 1;
  assert.equal(await w.doProbe(), true);
  assert.equal(await w.doProbe(), true);
  assert.equal(h.prober.calls, 1);
});

test('a prober that rejects counts as keep going', async () => {
  const { h, pod, w, cache } = setup('Liveness');
  h.provider.set(pod, startedStatus(h, 'Liveness'));
  h.prober.probe = () => Promise.reject(new Error('rejected'));
  assert.equal(await w.doProbe(), true);
  assert.equal(cache.get(testContainerID), 'Success');
});
