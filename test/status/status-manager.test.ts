// PodStatusManager: transition times with a FakeClock, terminal phases, §7.1 readiness/startup guards.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { PodStatusManager } from '../../src/status/status-manager.js';
import { generateAPIPodStatus } from '../../src/status/generate.js';
import type { Pod, PodStatus } from '../../src/api/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../../src/runtime/cri.js';
import { T0, container, instance, pod, sandbox } from './fixtures.js';

function gen(p: Pod, containers: RuntimeContainerStatus[], previous: PodStatus | undefined, now: number, extra: { podIsTerminal?: boolean } = {}) {
  return generateAPIPodStatus({
    pod: p,
    sandbox: sandbox(),
    containers,
    runtimeName: 'process',
    reasonCache: new Map(),
    previous,
    podIsTerminal: extra.podIsTerminal ?? false,
    hostIP: '127.0.0.1',
    now,
    // a readiness probe everywhere: ready stays false until the manager is told otherwise
    probeManager: {
      updatePodStatus(_pod, status) {
        for (const s of status.containerStatuses ?? []) s.started = !!s.state?.running;
      },
    },
  });
}

const cond = (s: PodStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);

test('lastTransitionTime is kept while a condition keeps its status, and moves when it changes', async () => {
  const clock = new FakeClock(T0);
  const m = new PodStatusManager({ clock });
  const p = pod({});
  const run = instance('app', 'CONTAINER_RUNNING', { id: 'a' });

  m.setPodStatus(p, gen(p, [], undefined, clock.now()));
  const first = m.getPodStatus('uid-1')!;
  assert.equal(cond(first, 'Ready')!.lastTransitionTime, '2026-12-02T12:00:00Z');
  assert.equal(first.startTime, '2026-12-02T12:00:00Z');

  await clock.advance(5000);
  m.setPodStatus(p, gen(p, [run], m.getPodStatus('uid-1'), clock.now()));
  const second = m.getPodStatus('uid-1')!;
  assert.equal(second.phase, 'Running');
  assert.equal(cond(second, 'Ready')!.status, 'False');
  assert.equal(cond(second, 'Ready')!.lastTransitionTime, '2026-12-02T12:00:00Z', 'unchanged status keeps its time');
  assert.equal(second.startTime, '2026-12-02T12:00:00Z', 'start time never changes');

  await clock.advance(3000);
  m.setContainerReadiness('uid-1', 'process://a', true);
  const third = m.getPodStatus('uid-1')!;
  assert.equal(third.containerStatuses![0]!.ready, true);
  assert.equal(cond(third, 'Ready')!.status, 'True');
  assert.equal(cond(third, 'ContainersReady')!.status, 'True');
  assert.equal(cond(third, 'Ready')!.lastTransitionTime, '2026-12-02T12:00:08Z');
  assert.equal(cond(third, 'Initialized')!.lastTransitionTime, '2026-12-02T12:00:00Z');
  // the stored status is replaced, never mutated
  assert.equal(second.containerStatuses![0]!.ready, false);
  assert.equal(cond(second, 'Ready')!.status, 'False');
});

test('setContainerReadiness and setContainerStartup guards', () => {
  const clock = new FakeClock(T0);
  const m = new PodStatusManager({ clock });
  const changes: string[] = [];
  const off = m.onChange((uid) => changes.push(uid));
  const p = pod({});

  // unknown pod, then pod without a status
  m.setContainerReadiness('uid-1', 'process://a', true);
  m.setContainerStartup('uid-1', 'process://a', true);
  m.setPod(p);
  m.setContainerReadiness('uid-1', 'process://a', true);
  assert.equal(m.getPodStatus('uid-1'), undefined);
  assert.equal(changes.length, 0);

  m.setPodStatus(p, gen(p, [instance('app', 'CONTAINER_RUNNING', { id: 'a' })], undefined, clock.now()));
  assert.equal(changes.length, 1);
  const stored = m.getPodStatus('uid-1');

  // container ID not in the status, or value unchanged: no-op
  m.setContainerReadiness('uid-1', 'process://other', true);
  m.setContainerReadiness('uid-1', 'process://a', false);
  m.setContainerStartup('uid-1', 'process://a', true);
  assert.equal(m.getPodStatus('uid-1'), stored);
  assert.equal(changes.length, 1);

  m.setContainerStartup('uid-1', 'process://a', false);
  assert.equal(m.getPodStatus('uid-1')!.containerStatuses![0]!.started, false);
  // startup does not touch conditions
  assert.deepEqual(m.getPodStatus('uid-1')!.conditions, stored!.conditions);
  assert.equal(changes.length, 2);

  off();
  m.setContainerReadiness('uid-1', 'process://a', true);
  assert.equal(changes.length, 2);
  assert.equal(cond(m.getPodStatus('uid-1'), 'Ready')!.status, 'True');
});

test('readiness appends Ready and ContainersReady when missing', () => {
  const m = new PodStatusManager({ clock: new FakeClock(T0) });
  const p = pod({});
  const status = gen(p, [instance('app', 'CONTAINER_RUNNING', { id: 'a' })], undefined, T0);
  status.conditions = status.conditions!.filter((c) => c.type !== 'Ready' && c.type !== 'ContainersReady');
  m.setPodStatus(p, status);
  m.setContainerReadiness('uid-1', 'process://a', true);
  const types = m.getPodStatus('uid-1')!.conditions!.map((c) => `${c.type}=${c.status}`);
  assert.deepEqual(types.slice(-2), ['Ready=True', 'ContainersReady=True']);
});

test('readiness of a sidecar and of init container statuses is found by container ID', () => {
  const m = new PodStatusManager({ clock: new FakeClock(T0) });
  const p = pod({ initContainers: [container('side', { restartPolicy: 'Always' })] });
  const status = gen(p, [instance('side', 'CONTAINER_RUNNING', { id: 's' }), instance('app', 'CONTAINER_RUNNING', { id: 'a' })], undefined, T0);
  m.setPodStatus(p, status);
  m.setContainerReadiness('uid-1', 'process://a', true);
  assert.equal(cond(m.getPodStatus('uid-1'), 'ContainersReady')!.message, 'containers with unready status: [side]');
  m.setContainerReadiness('uid-1', 'process://s', true);
  assert.equal(cond(m.getPodStatus('uid-1'), 'ContainersReady')!.status, 'True');
});

test('a terminal phase is never left', () => {
  const m = new PodStatusManager({ clock: new FakeClock(T0) });
  const p = pod({ restartPolicy: 'Never' });
  const done = instance('app', 'CONTAINER_EXITED', { id: 'a', exitCode: 0 });
  m.setPodStatus(p, gen(p, [done], undefined, T0, { podIsTerminal: true }));
  assert.equal(m.getPodStatus('uid-1')!.phase, 'Succeeded');
  const regressed = gen(p, [done], undefined, T0);
  regressed.phase = 'Pending';
  m.setPodStatus(p, regressed);
  assert.equal(m.getPodStatus('uid-1')!.phase, 'Succeeded');
});

test('an illegal transition out of Terminated is refused under Never', () => {
  const m = new PodStatusManager({ clock: new FakeClock(T0) });
  const p = pod({ restartPolicy: 'Never', containers: [container('app'), container('b')] });
  m.setPodStatus(p, gen(p, [instance('app', 'CONTAINER_EXITED', { id: 'a', exitCode: 1 }), instance('b', 'CONTAINER_RUNNING')], undefined, T0));
  const before = m.getPodStatus('uid-1');
  m.setPodStatus(p, gen(p, [instance('app', 'CONTAINER_RUNNING', { id: 'a2', attempt: 1 }), instance('b', 'CONTAINER_RUNNING')], undefined, T0));
  assert.equal(m.getPodStatus('uid-1'), before);
});

test('removePod forgets the pod and its status', () => {
  const m = new PodStatusManager({ clock: new FakeClock(T0) });
  const p = pod({});
  m.setPodStatus(p, gen(p, [], undefined, T0));
  assert.equal(m.getPod('uid-1'), p);
  m.removePod('uid-1');
  assert.equal(m.getPod('uid-1'), undefined);
  assert.equal(m.getPodStatus('uid-1'), undefined);
});
