// generateAPIPodStatus end to end on a few pods: the exact status object, phase post-processing,
// failure override, preserved conditions and the probe manager hook.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateAPIPodStatus, type GenerateStatusInput } from '../../src/status/generate.js';
import type { Pod, PodStatus } from '../../src/api/types.js';
import { T0, container, instance, pod, sandbox, sidecar } from './fixtures.js';

function gen(p: Pod, extra: Partial<GenerateStatusInput> = {}): PodStatus {
  return generateAPIPodStatus({
    pod: p,
    sandbox: sandbox(),
    containers: [],
    runtimeName: 'process',
    reasonCache: new Map(),
    podIsTerminal: false,
    hostIP: '127.0.0.1',
    startTime: '2026-12-02T12:00:00Z',
    now: T0 + 30_000,
    ...extra,
  });
}

const condStatus = (s: PodStatus) => Object.fromEntries(s.conditions!.map((c) => [c.type, [c.status, c.reason ?? '', c.message ?? '']]));

test('a running pod with an init container and a sidecar, exactly', () => {
  const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
  const p = pod({
    initContainers: [container('migrate', { resources }), sidecar('proxy', { resources })],
    containers: [container('web', { resources })],
  });
  const status = gen(p, {
    containers: [
      instance('migrate', 'CONTAINER_EXITED', { id: 'm', created: 0, started: 1, finished: 2, exitCode: 0 }),
      instance('proxy', 'CONTAINER_RUNNING', { id: 'p', created: 3, started: 4 }),
      instance('web', 'CONTAINER_RUNNING', { id: 'w', created: 5, started: 6 }),
    ],
  });
  const t = '2026-12-02T12:00:30Z';
  const c = (type: string, s = 'True') => ({ lastProbeTime: null, lastTransitionTime: t, status: s, type });
  assert.deepEqual(JSON.parse(JSON.stringify(status)), {
    conditions: [c('PodReadyToStartContainers'), c('Initialized'), c('Ready'), c('ContainersReady'), c('PodScheduled')],
    containerStatuses: [
      {
        containerID: 'process://w',
        image: 'img/web',
        imageID: 'sha256:web',
        lastState: {},
        name: 'web',
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: '2026-12-02T12:00:06Z' } },
      },
    ],
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    initContainerStatuses: [
      {
        containerID: 'process://m',
        image: 'img/migrate',
        imageID: 'sha256:migrate',
        lastState: {},
        name: 'migrate',
        ready: true,
        restartCount: 0,
        started: false,
        state: {
          terminated: {
            containerID: 'process://m',
            exitCode: 0,
            finishedAt: '2026-12-02T12:00:02Z',
            reason: 'Completed',
            startedAt: '2026-12-02T12:00:01Z',
          },
        },
      },
      {
        containerID: 'process://p',
        image: 'img/proxy',
        imageID: 'sha256:proxy',
        lastState: {},
        name: 'proxy',
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: '2026-12-02T12:00:04Z' } },
      },
    ],
    phase: 'Running',
    podIP: '127.0.0.1',
    podIPs: [{ ip: '127.0.0.1' }],
    qosClass: 'Guaranteed',
    startTime: '2026-12-02T12:00:00Z',
  });
  assert.deepEqual(Object.keys(status), [
    'conditions',
    'containerStatuses',
    'hostIP',
    'hostIPs',
    'initContainerStatuses',
    'phase',
    'podIP',
    'podIPs',
    'qosClass',
    'startTime',
  ]);
});

test('a pending pod before anything ran', () => {
  const p = pod({ initContainers: [container('init')] });
  const s = gen(p, { sandbox: undefined });
  assert.equal(s.phase, 'Pending');
  assert.equal(s.podIP, undefined);
  assert.deepEqual(condStatus(s), {
    PodReadyToStartContainers: ['False', '', ''],
    Initialized: ['False', 'ContainersNotInitialized', 'containers with incomplete status: [init]'],
    Ready: ['False', 'ContainersNotReady', 'containers with unready status: [app]'],
    ContainersReady: ['False', 'ContainersNotReady', 'containers with unready status: [app]'],
    PodScheduled: ['True', '', ''],
  });
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
  assert.equal(s.qosClass, 'BestEffort');
});

test('an init failure under Never fails the pod', () => {
  const p = pod({ restartPolicy: 'Never', initContainers: [container('init')] });
  const s = gen(p, { containers: [instance('init', 'CONTAINER_EXITED', { exitCode: 3 })] });
  assert.equal(s.phase, 'Failed');
  assert.deepEqual(condStatus(s).Ready, ['False', 'PodFailed', '']);
  assert.deepEqual(condStatus(s).Initialized, ['False', 'ContainersNotInitialized', 'containers with incomplete status: [init]']);
});

test('a terminal pod is Succeeded or Failed by exit codes, conditions say so', () => {
  const p = pod({ containers: [container('a'), container('b')] });
  const ok = gen(p, {
    podIsTerminal: true,
    containers: [instance('a', 'CONTAINER_EXITED', { exitCode: 0 }), instance('b', 'CONTAINER_EXITED', { exitCode: 0 })],
  });
  assert.equal(ok.phase, 'Succeeded');
  assert.deepEqual(condStatus(ok).ContainersReady, ['False', 'PodCompleted', '']);
  assert.deepEqual(condStatus(ok).Initialized, ['True', 'PodCompleted', '']);
  const bad = gen(p, {
    podIsTerminal: true,
    containers: [instance('a', 'CONTAINER_EXITED', { exitCode: 0 }), instance('b', 'CONTAINER_EXITED', { exitCode: 143 })],
  });
  assert.equal(bad.phase, 'Failed');
  assert.deepEqual(condStatus(bad).Ready, ['False', 'PodFailed', '']);
});

test('failure overrides the phase with its reason and message', () => {
  const p = pod({});
  const s = gen(p, {
    containers: [instance('app', 'CONTAINER_RUNNING')],
    failure: { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' },
  });
  assert.equal(s.phase, 'Failed');
  assert.equal(s.reason, 'DeadlineExceeded');
  assert.equal(s.message, 'Pod was active on the node longer than the specified deadline');
  assert.deepEqual(
    Object.keys(s).filter((k) => ['message', 'phase', 'qosClass', 'reason', 'startTime'].includes(k)),
    ['message', 'phase', 'qosClass', 'reason', 'startTime'],
  );
  // and later generations keep phase, reason and message
  const next = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')], previous: s });
  assert.equal(next.phase, 'Failed');
  assert.equal(next.reason, 'DeadlineExceeded');
});

test('a terminal phase in the cached or the API status is kept', () => {
  const p = pod({});
  const running = [instance('app', 'CONTAINER_RUNNING')];
  assert.equal(gen(p, { containers: running, previous: { phase: 'Succeeded' } }).phase, 'Succeeded');
  const apiFailed: Pod = { ...p, status: { phase: 'Failed', reason: 'OutOfcpu', message: "Pod Node didn't have enough resource: cpu" } };
  const s = gen(apiFailed, { containers: running });
  assert.equal(s.phase, 'Failed');
  assert.equal(s.reason, 'OutOfcpu');
});

test('reason and message of an unchanged phase are kept; a new phase drops them', () => {
  const p = pod({});
  const previous: PodStatus = { phase: 'Running', reason: 'SomeReason', message: 'some message' };
  const same = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')], previous });
  assert.equal(same.reason, 'SomeReason');
  assert.equal(same.message, 'some message');
  const changed = gen(p, { containers: [], previous });
  assert.equal(changed.phase, 'Pending');
  assert.equal(changed.reason, undefined);
});

test('conditions owned by others are preserved before the kubelet ones; DisruptionTarget is copied', () => {
  const p: Pod = {
    ...pod({ readinessGates: ['example.com/lb'] }),
    status: {
      conditions: [
        { type: 'example.com/lb', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'Ready', status: 'True' },
      ],
    },
  };
  const previous: PodStatus = { phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' }] };
  const s = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')], previous });
  assert.deepEqual(
    s.conditions!.map((c) => c.type),
    ['example.com/lb', 'DisruptionTarget', 'PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
  );
  assert.equal(s.conditions![0]!.lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.deepEqual(condStatus(s).Ready, ['True', '', '']);
});

test('the probe manager sets started/ready before conditions are computed', () => {
  const p = pod({});
  const calls: PodStatus[] = [];
  const s = gen(p, {
    containers: [instance('app', 'CONTAINER_RUNNING', { id: 'a' })],
    probeManager: {
      updatePodStatus(_pod, status) {
        calls.push(status);
        status.containerStatuses![0]!.started = true; // started, readiness not yet
      },
    },
  });
  assert.equal(calls.length, 1);
  assert.equal(calls[0], s);
  assert.equal(s.containerStatuses![0]!.ready, false);
  assert.deepEqual(condStatus(s).Ready, ['False', 'ContainersNotReady', 'containers with unready status: [app]']);
});

test('transition times carry over from the previous status', () => {
  const p = pod({});
  const first = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')], now: T0 });
  const second = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')], now: T0 + 60_000, previous: first });
  assert.ok(second.conditions!.every((c) => c.lastTransitionTime === '2026-12-02T12:00:00Z'));
  const third = gen(p, { containers: [instance('app', 'CONTAINER_EXITED', { exitCode: 1 })], now: T0 + 120_000, previous: second });
  const ready = third.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.lastTransitionTime, '2026-12-02T12:02:00Z');
});

test('the pod IP stays once the sandbox is gone', () => {
  const p = pod({ restartPolicy: 'Never' });
  const first = gen(p, { containers: [instance('app', 'CONTAINER_RUNNING')] });
  const after = gen(p, { sandbox: undefined, containers: [instance('app', 'CONTAINER_EXITED')], previous: first, podIsTerminal: true });
  assert.equal(after.podIP, '127.0.0.1');
  assert.deepEqual(after.podIPs, [{ ip: '127.0.0.1' }]);
  assert.equal(after.phase, 'Succeeded');
});
