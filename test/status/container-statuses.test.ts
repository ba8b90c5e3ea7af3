// convertToAPIContainerStatuses (§8.3) and shouldContainerBeRestarted (§8.1).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertToAPIContainerStatuses, shouldContainerBeRestarted } from '../../src/status/container-statuses.js';
import type { StartFailure } from '../../src/status/reason-cache.js';
import type { ContainerStatus, Pod } from '../../src/api/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../../src/runtime/cri.js';
import { container, instance, pod, sidecar } from './fixtures.js';

function convert(
  p: Pod,
  instances: RuntimeContainerStatus[],
  opts: { init?: boolean; previous?: ContainerStatus[]; reasons?: Record<string, StartFailure> } = {},
): ContainerStatus[] {
  return convertToAPIContainerStatuses({
    pod: p,
    containers: opts.init ? p.spec!.initContainers! : p.spec!.containers,
    isInitContainer: opts.init ?? false,
    instances,
    previous: opts.previous,
    runtimeName: 'process',
    reasonCache: new Map(Object.entries(opts.reasons ?? {})),
  });
}

const crash: StartFailure = {
  reason: 'CrashLoopBackOff',
  message: 'back-off 10s restarting failed container=app pod=web_default(uid-1)',
};

test('shouldContainerBeRestarted table', () => {
  const c = container('app');
  const cases: {
    name: string;
    policy: 'Always' | 'OnFailure' | 'Never';
    latest?: RuntimeContainerStatus;
    deleting?: boolean;
    sidecar?: boolean;
    want: boolean;
  }[] = [
    { name: 'deleting', policy: 'Always', deleting: true, want: false },
    { name: 'never ran', policy: 'Never', want: true },
    { name: 'running', policy: 'Always', latest: instance('app', 'CONTAINER_RUNNING'), want: false },
    { name: 'unknown', policy: 'Never', latest: instance('app', 'CONTAINER_UNKNOWN'), want: true },
    { name: 'created', policy: 'Never', latest: instance('app', 'CONTAINER_CREATED'), want: true },
    { name: 'Never, exited 1', policy: 'Never', latest: instance('app', 'CONTAINER_EXITED', { exitCode: 1 }), want: false },
    { name: 'OnFailure, exited 0', policy: 'OnFailure', latest: instance('app', 'CONTAINER_EXITED', { exitCode: 0 }), want: false },
    { name: 'OnFailure, exited 1', policy: 'OnFailure', latest: instance('app', 'CONTAINER_EXITED', { exitCode: 1 }), want: true },
    { name: 'Always, exited 0', policy: 'Always', latest: instance('app', 'CONTAINER_EXITED', { exitCode: 0 }), want: true },
    { name: 'sidecar under Never, exited', policy: 'Never', sidecar: true, latest: instance('app', 'CONTAINER_EXITED', { exitCode: 0 }), want: true },
    { name: 'sidecar, deleting', policy: 'Never', sidecar: true, deleting: true, want: false },
  ];
  for (const k of cases) {
    const p = pod({ restartPolicy: k.policy, deleting: k.deleting });
    assert.equal(shouldContainerBeRestarted(c, p, k.latest, k.sidecar ?? false), k.want, k.name);
  }
});

test('no instance: waiting ContainerCreating, or PodInitializing with init containers', () => {
  const [s] = convert(pod({}), []);
  assert.deepEqual(s, {
    image: 'img/app',
    imageID: '',
    lastState: {},
    name: 'app',
    ready: false,
    restartCount: 0,
    started: false,
    state: { waiting: { reason: 'ContainerCreating' } },
  });
  const p = pod({ initContainers: [container('init')] });
  assert.deepEqual(convert(p, [])[0]!.state, { waiting: { reason: 'PodInitializing' } });
  assert.deepEqual(convert(p, [], { init: true })[0]!.state, { waiting: { reason: 'PodInitializing' } });
});

test('running instance', () => {
  const inst = instance('app', 'CONTAINER_RUNNING', { id: 'abc', attempt: 0, created: 0, started: 1 });
  const [s] = convert(pod({}), [inst]);
  assert.deepEqual(s, {
    containerID: 'process://abc',
    image: 'img/app',
    imageID: 'sha256:app',
    lastState: {},
    name: 'app',
    ready: false,
    restartCount: 0,
    started: false,
    state: { running: { startedAt: '2026-12-02T12:00:01Z' } },
  });
  assert.deepEqual(Object.keys(s!), ['containerID', 'image', 'imageID', 'lastState', 'name', 'ready', 'restartCount', 'started', 'state']);
});

test('newest instance is state, second newest lastState, older ignored; restartCount = attempt', () => {
  const p = pod({});
  const instances = [
    instance('app', 'CONTAINER_EXITED', { id: 'a0', attempt: 0, created: 0, exitCode: 1 }),
    instance('app', 'CONTAINER_RUNNING', { id: 'a2', attempt: 2, created: 20 }),
    instance('app', 'CONTAINER_EXITED', { id: 'a1', attempt: 1, created: 10, started: 11, finished: 15, exitCode: 2, message: 'boom' }),
  ];
  const [s] = convert(p, instances);
  assert.equal(s!.containerID, 'process://a2');
  assert.equal(s!.restartCount, 2);
  assert.deepEqual(s!.state, { running: { startedAt: '2026-12-02T12:00:21Z' } });
  assert.deepEqual(s!.lastState, {
    terminated: {
      containerID: 'process://a1',
      exitCode: 2,
      finishedAt: '2026-12-02T12:00:15Z',
      message: 'boom',
      reason: 'Error',
      startedAt: '2026-12-02T12:00:11Z',
    },
  });
  assert.deepEqual(Object.keys(s!.lastState!.terminated!), ['containerID', 'exitCode', 'finishedAt', 'message', 'reason', 'startedAt']);
});

test('equal creation times are ordered by attempt', () => {
  const instances = [
    instance('app', 'CONTAINER_EXITED', { id: 'old', attempt: 3, created: 5, exitCode: 1 }),
    instance('app', 'CONTAINER_RUNNING', { id: 'new', attempt: 4, created: 5 }),
  ];
  assert.equal(convert(pod({}), instances)[0]!.containerID, 'process://new');
});

test('exited instance with the reason cache: shown only when the container should be restarted', () => {
  const exited = instance('app', 'CONTAINER_EXITED', { id: 'x', attempt: 1, exitCode: 1 });
  const cases: { name: string; policy: 'Always' | 'OnFailure' | 'Never'; exitCode: number; deleting?: boolean; shown: boolean }[] = [
    { name: 'Always', policy: 'Always', exitCode: 1, shown: true },
    { name: 'OnFailure, failed', policy: 'OnFailure', exitCode: 1, shown: true },
    { name: 'OnFailure, succeeded', policy: 'OnFailure', exitCode: 0, shown: false },
    { name: 'Never', policy: 'Never', exitCode: 1, shown: false },
    { name: 'deleting', policy: 'Always', exitCode: 1, deleting: true, shown: false },
  ];
  for (const c of cases) {
    const [s] = convert(pod({ restartPolicy: c.policy, deleting: c.deleting }), [{ ...exited, exitCode: c.exitCode }], { reasons: { app: crash } });
    if (c.shown) {
      assert.deepEqual(s!.state, { waiting: { message: crash.message, reason: 'CrashLoopBackOff' } }, c.name);
      assert.equal(s!.lastState!.terminated!.exitCode, c.exitCode, c.name);
      assert.equal(s!.lastState!.terminated!.containerID, 'process://x', c.name);
    } else {
      assert.equal(s!.state!.terminated!.exitCode, c.exitCode, c.name);
      assert.deepEqual(s!.lastState, {}, c.name);
    }
    assert.equal(s!.restartCount, 1, c.name);
  }
});

test('no reason cached: an exited container stays Terminated', () => {
  const [s] = convert(pod({}), [instance('app', 'CONTAINER_EXITED', { exitCode: 1 })]);
  assert.equal(s!.state!.terminated!.reason, 'Error');
});

test('a start failure before any instance shows as Waiting with its reason', () => {
  const failure = { reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' };
  const [s] = convert(pod({}), [], { reasons: { app: failure } });
  assert.deepEqual(s!.state, { waiting: { message: failure.message, reason: failure.reason } });
  assert.deepEqual(s!.lastState, {});
});

test('created instance shows as Waiting with empty reason', () => {
  const [s] = convert(pod({}), [instance('app', 'CONTAINER_CREATED', { id: 'c' })]);
  assert.deepEqual(s!.state, { waiting: {} });
  assert.equal(s!.containerID, 'process://c');
});

test('unknown instance last seen Running → Terminated ContainerStatusUnknown, restartCount + 1', () => {
  const p = pod({});
  const previous = convert(p, [instance('app', 'CONTAINER_RUNNING', { id: 'u', attempt: 2 })]);
  const [s] = convert(p, [instance('app', 'CONTAINER_UNKNOWN', { id: 'u', attempt: 2 })], { previous });
  assert.deepEqual(s!.state, {
    terminated: {
      exitCode: 137,
      finishedAt: null,
      message: 'The container could not be located when the pod was terminated',
      reason: 'ContainerStatusUnknown',
      startedAt: null,
    },
  });
  assert.equal(s!.restartCount, 3);
  // without a running previous status, unknown is just Waiting
  assert.deepEqual(convert(p, [instance('app', 'CONTAINER_UNKNOWN')])[0]!.state, { waiting: {} });
});

test('container last seen Running and gone from the runtime → lastState ContainerStatusUnknown', () => {
  const p = pod({});
  const previous = convert(p, [instance('app', 'CONTAINER_RUNNING', { attempt: 1 })]);
  const [s] = convert(p, [], { previous });
  assert.deepEqual(s!.state, { waiting: { reason: 'ContainerCreating' } });
  assert.deepEqual(s!.lastState, {
    terminated: {
      exitCode: 137,
      finishedAt: null,
      message: 'The container could not be located when the pod was deleted.  The container used to be Running',
      reason: 'ContainerStatusUnknown',
      startedAt: null,
    },
  });
  assert.equal(s!.restartCount, 2);
  // being deleted: no restart counted
  const deleting = pod({ deleting: true });
  assert.equal(convert(deleting, [], { previous })[0]!.restartCount, 1);
});

test('an old Terminated status is kept when the runtime forgot the container', () => {
  const p = pod({ restartPolicy: 'Never' });
  const previous = convert(p, [instance('app', 'CONTAINER_EXITED', { id: 'gone', attempt: 0, exitCode: 3 })]);
  const [s] = convert(p, [], { previous });
  assert.deepEqual(s, previous[0]);
});

test('started is carried over from the previous status while running', () => {
  const p = pod({});
  const run = instance('app', 'CONTAINER_RUNNING', { id: 'r' });
  const previous = convert(p, [run]);
  previous[0]!.started = true;
  assert.equal(convert(p, [run], { previous })[0]!.started, true);
  assert.equal(convert(p, [run])[0]!.started, false);
});

test('regular statuses are sorted by name; init statuses keep the spec order', () => {
  const p = pod({ containers: [container('zeta'), container('alpha'), container('mid')], initContainers: [container('z-init'), sidecar('a-side')] });
  assert.deepEqual(
    convert(p, []).map((s) => s.name),
    ['alpha', 'mid', 'zeta'],
  );
  assert.deepEqual(
    convert(p, [], { init: true }).map((s) => s.name),
    ['z-init', 'a-side'],
  );
});

test('init containers: exited 0 never shows the reason cache; sidecars show it under Never', () => {
  const p = pod({ restartPolicy: 'Never', initContainers: [container('init'), sidecar('side')] });
  const instances = [
    instance('init', 'CONTAINER_EXITED', { id: 'i', exitCode: 0 }),
    instance('side', 'CONTAINER_EXITED', { id: 's', exitCode: 1, attempt: 1 }),
  ];
  const reasons = { init: crash, side: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=side pod=web_default(uid-1)' } };
  const [init, side] = convert(p, instances, { init: true, reasons });
  assert.equal(init!.state!.terminated!.reason, 'Completed');
  assert.equal(side!.state!.waiting!.reason, 'CrashLoopBackOff');
  assert.equal(side!.lastState!.terminated!.exitCode, 1);
});

test('a forgotten plain init container of an initialized pod is shown as Completed', () => {
  const p = pod({ initContainers: [container('init'), sidecar('side')], containers: [container('app')] });
  const instances = [instance('app', 'CONTAINER_RUNNING')];
  const [init, side] = convert(p, instances, { init: true });
  assert.deepEqual(init!.state, {
    terminated: {
      exitCode: 0,
      finishedAt: null,
      message: 'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally',
      reason: 'Completed',
      startedAt: null,
    },
  });
  assert.deepEqual(side!.state, { waiting: { reason: 'PodInitializing' } });
});
