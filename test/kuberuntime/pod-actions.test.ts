// computePodActions / computeInitContainerActions (§7.2, §7.3, §8.1) as pure decisions over scripted
// runtime statuses, as the kubelet's own kuberuntime tests do; plus grace-period selection (§11.4).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import type { ProbeResult } from '../../src/prober/types.js';
import type { ContainerState, ContainerStatus as RuntimeContainerStatus } from '../../src/runtime/cri.js';
import { computePodActions, RuntimePod, type PodActions } from '../../src/kuberuntime/pod-actions.js';
import { terminationGracePeriodSeconds, type KillReason } from '../../src/kuberuntime/grace.js';

let seq = 0;
function inst(name: string, state: ContainerState, exitCode = 0, reason = ''): RuntimeContainerStatus {
  seq++;
  return {
    id: `${name}-${seq}`,
    podSandboxId: 's',
    metadata: { name, attempt: 0 },
    state,
    createdAt: seq,
    startedAt: seq,
    finishedAt: state === 'CONTAINER_EXITED' ? seq : 0,
    exitCode,
    image: 'x',
    imageRef: 'x',
    reason,
    message: '',
    labels: {},
    annotations: {},
    logPath: '',
  };
}
const running = (n: string) => inst(n, 'CONTAINER_RUNNING');
const exited = (n: string, code: number) => inst(n, 'CONTAINER_EXITED', code, code === 0 ? 'Completed' : 'Error');

function makePod(opts: { policy?: string; containers?: Container[]; inits?: Container[]; deleting?: boolean }): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u', ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: {
      restartPolicy: opts.policy ?? 'Always',
      containers: opts.containers ?? [{ name: 'app', image: 'x' }],
      ...(opts.inits ? { initContainers: opts.inits } : {}),
    },
  };
}

function results(map: Record<string, ProbeResult> = {}) {
  return { get: (id: string) => map[id.replace(/^process:\/\//, '')] };
}

function actions(
  pod: Pod,
  containers: RuntimeContainerStatus[],
  probes: { liveness?: Record<string, ProbeResult>; startup?: Record<string, ProbeResult> } = {},
): PodActions {
  return computePodActions({
    pod,
    runtimePod: new RuntimePod(containers),
    runtimeName: 'process',
    liveness: results(probes.liveness),
    startup: results(probes.startup),
  });
}

const summary = (a: PodActions) => ({
  killPod: a.killPod,
  init: a.initContainersToStart,
  start: a.containersToStart,
  kill: a.containersToKill.map((k) => `${k.name}: ${k.message}`),
});

test('restart policy × exit code for an exited regular container (§8.1)', () => {
  const table: [string, number, boolean][] = [
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 1, true],
    ['Never', 0, false],
    ['Never', 1, false],
  ];
  for (const [policy, code, restart] of table) {
    const a = actions(makePod({ policy }), [exited('app', code)]);
    assert.deepEqual(a.containersToStart, restart ? [0] : [], `${policy} exit ${code}`);
    assert.equal(a.killPod, !restart, `${policy} exit ${code}: pod done when not restarted`);
  }
});

test('regular container rules', () => {
  const cases: { name: string; pod: Pod; cs: RuntimeContainerStatus[]; probes?: Parameters<typeof actions>[2]; want: ReturnType<typeof summary> }[] = [
    {
      name: 'never ran → start',
      pod: makePod({}),
      cs: [],
      want: { killPod: false, init: [], start: [0], kill: [] },
    },
    {
      name: 'running → keep',
      pod: makePod({}),
      cs: [running('app')],
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'liveness failure → kill and restart',
      pod: makePod({}),
      cs: [{ ...running('app'), id: 'L' }],
      probes: { liveness: { L: 'Failure' } },
      want: { killPod: false, init: [], start: [0], kill: ['app: Container app failed liveness probe, will be restarted'] },
    },
    {
      name: 'startup failure → kill and restart',
      pod: makePod({ policy: 'OnFailure' }),
      cs: [{ ...running('app'), id: 'S' }],
      probes: { startup: { S: 'Failure' } },
      want: { killPod: false, init: [], start: [0], kill: ['app: Container app failed startup probe, will be restarted'] },
    },
    {
      name: 'liveness failure under Never → kill only, pod done',
      pod: makePod({ policy: 'Never' }),
      cs: [{ ...running('app'), id: 'L' }],
      probes: { liveness: { L: 'Failure' } },
      want: { killPod: true, init: [], start: [], kill: ['app: Container app failed liveness probe'] },
    },
    {
      name: 'liveness Success / Unknown startup keep running',
      pod: makePod({}),
      cs: [{ ...running('app'), id: 'K' }],
      probes: { liveness: { K: 'Success' }, startup: { K: 'Unknown' } },
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'unknown state → kill before restart',
      pod: makePod({}),
      cs: [inst('app', 'CONTAINER_UNKNOWN')],
      want: { killPod: false, init: [], start: [0], kill: ['app: Container is in "unknown" state, try killing it before restart'] },
    },
    {
      name: 'created but not running → start',
      pod: makePod({ policy: 'Never' }),
      cs: [inst('app', 'CONTAINER_CREATED')],
      want: { killPod: false, init: [], start: [0], kill: [] },
    },
    {
      name: 'deleting → nothing restarts, pod done',
      pod: makePod({ deleting: true }),
      cs: [exited('app', 1)],
      want: { killPod: true, init: [], start: [], kill: [] },
    },
    {
      name: 'one finished, one running under Never → keep',
      pod: makePod({
        policy: 'Never',
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'x' },
        ],
      }),
      cs: [exited('a', 0), running('b')],
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'the newest instance decides',
      pod: makePod({ policy: 'OnFailure' }),
      cs: [exited('app', 1), exited('app', 0)],
      want: { killPod: true, init: [], start: [], kill: [] },
    },
  ];
  for (const c of cases) assert.deepEqual(summary(actions(c.pod, c.cs, c.probes)), c.want, c.name);
});

const init = (name: string): Container => ({ name, image: 'x' });
const sidecar = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'x', restartPolicy: 'Always', ...extra });
const probe = { exec: { command: ['true'] } };

test('init containers one at a time, sidecars gate the next step', () => {
  const cases: { name: string; pod: Pod; cs: RuntimeContainerStatus[]; probes?: Parameters<typeof actions>[2]; want: ReturnType<typeof summary> }[] = [
    {
      name: 'nothing ran → first init container',
      pod: makePod({ inits: [init('i1'), init('i2')] }),
      cs: [],
      want: { killPod: false, init: [0], start: [], kill: [] },
    },
    {
      name: 'first running → wait',
      pod: makePod({ inits: [init('i1'), init('i2')] }),
      cs: [running('i1')],
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'first succeeded → second',
      pod: makePod({ inits: [init('i1'), init('i2')] }),
      cs: [exited('i1', 0)],
      want: { killPod: false, init: [1], start: [], kill: [] },
    },
    {
      name: 'all succeeded → app containers',
      pod: makePod({ inits: [init('i1'), init('i2')] }),
      cs: [exited('i1', 0), exited('i2', 0)],
      want: { killPod: false, init: [], start: [0], kill: [] },
    },
    {
      name: 'init failed under Always → restart it',
      pod: makePod({ inits: [init('i1'), init('i2')] }),
      cs: [exited('i1', 0), exited('i2', 1)],
      want: { killPod: false, init: [1], start: [], kill: [] },
    },
    {
      name: 'init failed under Never → pod killed (Failed)',
      pod: makePod({ policy: 'Never', inits: [init('i1'), init('i2')] }),
      cs: [exited('i1', 1)],
      want: { killPod: true, init: [], start: [], kill: [] },
    },
    {
      name: 'OOMKilled exit 0 counts as a failure',
      pod: makePod({ policy: 'Never', inits: [init('i1')] }),
      cs: [{ ...exited('i1', 0), reason: 'OOMKilled' }],
      want: { killPod: true, init: [], start: [], kill: [] },
    },
    {
      name: 'sidecar running without startup probe → next init starts',
      pod: makePod({ inits: [sidecar('s1'), init('i2')] }),
      cs: [running('s1')],
      want: { killPod: false, init: [1], start: [], kill: [] },
    },
    {
      name: 'sidecar is last and running → app starts',
      pod: makePod({ inits: [sidecar('s1')] }),
      cs: [running('s1')],
      want: { killPod: false, init: [], start: [0], kill: [] },
    },
    {
      name: 'sidecar with startup probe, no result yet → wait',
      pod: makePod({ inits: [sidecar('s1', { startupProbe: probe })] }),
      cs: [running('s1')],
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'sidecar startup Success → app starts',
      pod: makePod({ inits: [sidecar('s1', { startupProbe: probe })] }),
      cs: [{ ...running('s1'), id: 'S1' }],
      probes: { startup: { S1: 'Success' } },
      want: { killPod: false, init: [], start: [0], kill: [] },
    },
    {
      name: 'sidecar startup Failure → kill and restart it',
      pod: makePod({ inits: [sidecar('s1', { startupProbe: probe })] }),
      cs: [{ ...running('s1'), id: 'S1' }],
      probes: { startup: { S1: 'Failure' } },
      want: { killPod: false, init: [0], start: [], kill: ['s1: Init container s1 failed startup probe'] },
    },
    {
      name: 'sidecar liveness Failure after init → restarted, app kept',
      pod: makePod({ inits: [sidecar('s1', { livenessProbe: probe })] }),
      cs: [{ ...running('s1'), id: 'S1' }, running('app')],
      probes: { liveness: { S1: 'Failure' } },
      want: { killPod: false, init: [0], start: [], kill: ['s1: Init container s1 failed liveness probe'] },
    },
    {
      name: 'exited sidecar restarts whatever the pod policy',
      pod: makePod({ policy: 'Never', inits: [sidecar('s1')] }),
      cs: [exited('s1', 0), running('app')],
      want: { killPod: false, init: [0], start: [], kill: [] },
    },
    {
      name: 'app done under Never → pod killed, sidecar not restarted',
      pod: makePod({ policy: 'Never', inits: [sidecar('s1')] }),
      cs: [running('s1'), exited('app', 0)],
      want: { killPod: true, init: [], start: [], kill: [] },
    },
    {
      name: 'initialized pod ignores a vanished plain init container',
      pod: makePod({ inits: [init('i1')] }),
      cs: [running('app')],
      want: { killPod: false, init: [], start: [], kill: [] },
    },
    {
      name: 'initialized pod restarts a vanished sidecar',
      pod: makePod({ inits: [sidecar('s1'), init('i2')] }),
      cs: [running('app')],
      want: { killPod: false, init: [0], start: [], kill: [] },
    },
  ];
  for (const c of cases) assert.deepEqual(summary(actions(c.pod, c.cs, c.probes)), c.want, c.name);
});

test('grace period selection (§11.4)', () => {
  const container: Container = {
    name: 'app',
    image: 'x',
    livenessProbe: { ...probe, terminationGracePeriodSeconds: 5 },
    startupProbe: { ...probe, terminationGracePeriodSeconds: 7 },
  };
  const withGrace = (podGrace?: number, deletionGrace?: number): Pod => ({
    metadata: { name: 'p', uid: 'u', ...(deletionGrace !== undefined ? { deletionGracePeriodSeconds: deletionGrace } : {}) },
    spec: { containers: [container], ...(podGrace !== undefined ? { terminationGracePeriodSeconds: podGrace } : {}) },
  });
  const table: [Pod, KillReason, number][] = [
    [withGrace(500, 3), 'liveness', 3],
    [withGrace(500, 0), '', 0],
    [withGrace(500), 'liveness', 5],
    [withGrace(500), 'startup', 7],
    [withGrace(500), '', 500],
    [withGrace(1), 'liveness', 5],
    [withGrace(undefined), 'liveness', 2],
  ];
  for (const [pod, reason, want] of table) {
    assert.equal(terminationGracePeriodSeconds(pod, container, reason), want, JSON.stringify([pod.metadata, pod.spec?.terminationGracePeriodSeconds, reason]));
  }
  const noProbeGrace: Container = { name: 'app', image: 'x', livenessProbe: probe };
  assert.equal(terminationGracePeriodSeconds(withGrace(30), noProbeGrace, 'liveness'), 30);
});
