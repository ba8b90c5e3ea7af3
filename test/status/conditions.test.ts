// The kubelet-owned conditions (§10): every reason and message, readiness gates, transition times.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assignTransitionTimes,
  generateContainersReadyCondition,
  generatePodInitializedCondition,
  generatePodReadyCondition,
  generatePodReadyToStartContainersCondition,
  makeCondition,
} from '../../src/status/conditions.js';
import type { ContainerStatus, PodCondition } from '../../src/api/types.js';
import { container, pod, sandbox, sidecar, st } from './fixtures.js';

function brief(c: PodCondition) {
  const out: Record<string, string> = { status: c.status };
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

test('PodReadyToStartContainers: True only with a ready sandbox that has an IP', () => {
  assert.deepEqual(brief(generatePodReadyToStartContainersCondition(sandbox(true))), { status: 'True' });
  assert.deepEqual(brief(generatePodReadyToStartContainersCondition(sandbox(false))), { status: 'False' });
  assert.deepEqual(brief(generatePodReadyToStartContainersCondition(undefined)), { status: 'False' });
  const noIP = sandbox(true);
  noIP.network.ip = '';
  assert.deepEqual(brief(generatePodReadyToStartContainersCondition(noIP)), { status: 'False' });
});

test('Initialized table', () => {
  const p = pod({ initContainers: [container('a'), container('b'), sidecar('s')], containers: [container('app')] });
  const cases: { name: string; init?: ContainerStatus[]; regular?: ContainerStatus[]; phase?: string; want: Record<string, string> }[] = [
    { name: 'nil statuses', want: { status: 'False', reason: 'UnknownContainerStatuses' } },
    {
      name: 'all unknown',
      init: [],
      regular: [],
      want: { status: 'False', reason: 'ContainersNotInitialized', message: 'containers with unknown status: [a b s]' },
    },
    {
      name: 'unknown and incomplete',
      init: [st.running('a')],
      regular: [],
      want: { status: 'False', reason: 'ContainersNotInitialized', message: 'containers with unknown status: [b s], containers with incomplete status: [a]' },
    },
    {
      name: 'plain done (ready), sidecar running but not started',
      init: [st.terminated('a', 0, { ready: true }), st.terminated('b', 0, { ready: true }), st.running('s', { started: false })],
      regular: [st.waiting('app')],
      want: { status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [s]' },
    },
    {
      name: 'all initialized',
      init: [st.terminated('a', 0, { ready: true }), st.terminated('b', 0, { ready: true }), st.running('s', { started: true })],
      regular: [st.waiting('app')],
      want: { status: 'True' },
    },
    {
      name: 'a regular container has started',
      init: [st.terminated('a', 0, { ready: true }), st.terminated('b', 0, { ready: true }), st.waiting('s', 1)],
      regular: [st.running('app')],
      want: { status: 'True' },
    },
    {
      name: 'Succeeded with all init statuses known',
      init: [st.terminated('a', 0), st.terminated('b', 0), st.terminated('s', 0)],
      regular: [st.terminated('app', 0)],
      phase: 'Succeeded',
      want: { status: 'True', reason: 'PodCompleted' },
    },
  ];
  for (const c of cases) {
    const got = generatePodInitializedCondition(p, c.init, c.regular, c.phase ?? 'Pending');
    assert.equal(got.type, 'Initialized');
    assert.deepEqual(brief(got), c.want, c.name);
  }
  // no init containers and nil statuses: initialized
  assert.deepEqual(brief(generatePodInitializedCondition(pod({}), undefined, undefined, 'Pending')), { status: 'True' });
});

test('ContainersReady and Ready table', () => {
  const p = pod({ initContainers: [container('init'), sidecar('side')], containers: [container('a'), container('b')] });
  const ready = { ready: true };
  const cases: { name: string; init?: ContainerStatus[]; regular?: ContainerStatus[]; phase?: string; want: Record<string, string> }[] = [
    { name: 'nil statuses', want: { status: 'False', reason: 'UnknownContainerStatuses' } },
    {
      name: 'unknown and unready (plain init containers do not count)',
      init: [st.terminated('init', 1)],
      regular: [st.running('b')],
      want: { status: 'False', reason: 'ContainersNotReady', message: 'containers with unknown status: [side a], containers with unready status: [b]' },
    },
    {
      name: 'unready only',
      init: [st.running('side', ready)],
      regular: [st.running('a', ready), st.running('b')],
      want: { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [b]' },
    },
    {
      name: 'all ready',
      init: [st.terminated('init', 0), st.running('side', ready)],
      regular: [st.running('a', ready), st.running('b', ready)],
      want: { status: 'True' },
    },
    {
      name: 'Succeeded, all known',
      init: [st.terminated('init', 0), st.terminated('side', 0)],
      regular: [st.terminated('a', 0), st.terminated('b', 0)],
      phase: 'Succeeded',
      want: { status: 'False', reason: 'PodCompleted' },
    },
    {
      name: 'Succeeded with an unknown container falls through to the messages',
      init: [st.terminated('init', 0)],
      regular: [st.terminated('a', 0), st.terminated('b', 0)],
      phase: 'Succeeded',
      want: { status: 'False', reason: 'ContainersNotReady', message: 'containers with unknown status: [side], containers with unready status: [a b]' },
    },
    {
      name: 'Failed, even when ready',
      init: [st.running('side', ready)],
      regular: [st.running('a', ready), st.running('b', ready)],
      phase: 'Failed',
      want: { status: 'False', reason: 'PodFailed' },
    },
  ];
  for (const c of cases) {
    const cr = generateContainersReadyCondition(p, c.init, c.regular, c.phase ?? 'Running');
    assert.equal(cr.type, 'ContainersReady');
    assert.deepEqual(brief(cr), c.want, `ContainersReady: ${c.name}`);
    // Ready copies ContainersReady when that is not True (no readiness gates here)
    const r = generatePodReadyCondition(p, [], c.init, c.regular, c.phase ?? 'Running');
    assert.equal(r.type, 'Ready');
    assert.deepEqual(brief(r), c.want, `Ready: ${c.name}`);
  }
});

test('Ready with readiness gates', () => {
  const p = pod({ readinessGates: ['example.com/lb', 'example.com/dns'] });
  const statuses = [st.running('app', { ready: true })];
  const cases: { name: string; conditions: PodCondition[]; want: Record<string, string> }[] = [
    {
      name: 'missing gates',
      conditions: [],
      want: {
        status: 'False',
        reason: 'ReadinessGatesNotReady',
        message:
          'corresponding condition of pod readiness gate "example.com/lb" does not exist., corresponding condition of pod readiness gate "example.com/dns" does not exist.',
      },
    },
    {
      name: 'one False, one missing',
      conditions: [{ type: 'example.com/lb', status: 'False' }],
      want: {
        status: 'False',
        reason: 'ReadinessGatesNotReady',
        message:
          'the status of pod readiness gate "example.com/lb" is not "True", but False, corresponding condition of pod readiness gate "example.com/dns" does not exist.',
      },
    },
    {
      name: 'all True',
      conditions: [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'True' },
      ],
      want: { status: 'True' },
    },
  ];
  for (const c of cases) {
    assert.deepEqual(brief(generatePodReadyCondition(p, c.conditions, [], statuses, 'Running')), c.want, c.name);
  }
  // gates do not matter while containers are not ready
  const notReady = generatePodReadyCondition(p, [], [], [st.running('app')], 'Running');
  assert.equal(notReady.reason, 'ContainersNotReady');
});

test('conditions have the API key order and null lastProbeTime', () => {
  const c = makeCondition('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [a]');
  assert.deepEqual(Object.keys(c), ['lastProbeTime', 'lastTransitionTime', 'message', 'reason', 'status', 'type']);
  assert.equal(c.lastProbeTime, null);
  assert.deepEqual(Object.keys(makeCondition('PodScheduled', 'True')), ['lastProbeTime', 'lastTransitionTime', 'status', 'type']);
});

test('assignTransitionTimes keeps the time while the status is unchanged', () => {
  const prev = [
    { ...makeCondition('Ready', 'False'), lastTransitionTime: '2026-01-01T00:00:00Z' },
    { ...makeCondition('Initialized', 'True'), lastTransitionTime: '2026-01-01T00:00:00Z' },
  ];
  const next = [makeCondition('Ready', 'True'), makeCondition('Initialized', 'True'), makeCondition('PodScheduled', 'True')];
  next.push({ type: 'example.com/gate', status: 'True', lastTransitionTime: '2025-05-05T00:00:00Z' });
  assignTransitionTimes(next, prev, '2026-01-01T00:05:00Z');
  assert.deepEqual(
    next.map((c) => [c.type, c.lastTransitionTime]),
    [
      ['Ready', '2026-01-01T00:05:00Z'],
      ['Initialized', '2026-01-01T00:00:00Z'],
      ['PodScheduled', '2026-01-01T00:05:00Z'],
      ['example.com/gate', '2025-05-05T00:00:00Z'],
    ],
  );
});
