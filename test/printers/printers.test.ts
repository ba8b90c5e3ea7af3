// The pod table printer: every STATUS rule of kubectl's printPod, READY with sidecars, RESTARTS with
// "(… ago)", wide columns, ages, the tabwriter layout, and the List/JSON/YAML printers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import type { Container, ContainerStatus, Pod, PodStatus } from '../../src/api/types.js';
import { formatPodTable, podRow, podStatusReason } from '../../src/printers/tables.js';
import { formatObject, toV1List } from '../../src/printers/json-yaml.js';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const ago = (s: number) => new Date(now - s * 1000).toISOString();

const running = (name: string, ready = true, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready,
  restartCount: 0,
  started: true,
  state: { running: { startedAt: ago(30) } },
  ...extra,
});
const waiting = (name: string, reason: string, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { waiting: { reason } },
  ...extra,
});
const terminated = (name: string, exitCode: number, reason?: string, extra: Partial<ContainerStatus> = {}, signal?: number): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, ...(reason ? { reason } : {}), ...(signal ? { signal } : {}), finishedAt: ago(10) } },
  ...extra,
});

const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'busybox', command: ['sh'], ...extra });

function pod(opts: { containers?: Container[]; init?: Container[]; status: PodStatus; deleting?: boolean; gates?: string[] }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'default',
      uid: 'u',
      creationTimestamp: ago(90),
      ...(opts.deleting ? { deletionTimestamp: ago(1) } : {}),
    },
    spec: {
      containers: opts.containers ?? [c('app')],
      ...(opts.init ? { initContainers: opts.init } : {}),
      ...(opts.gates ? { readinessGates: opts.gates.map((conditionType) => ({ conditionType })) } : {}),
    },
    status: opts.status,
  };
}

const readyCond = (status: 'True' | 'False') => ({ type: 'Ready', status });
const initializedCond = (status: 'True' | 'False') => ({ type: 'Initialized', status });

test('STATUS, READY and RESTARTS by kubectl printPod', () => {
  const lastTerm = (s: number) => ({ terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(s) } });
  const cases: { name: string; pod: Pod; ready: string; status: string; restarts: string }[] = [
    {
      name: 'running and ready',
      pod: pod({ status: { phase: 'Running', containerStatuses: [running('app')] } }),
      ready: '1/1',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'running, not ready',
      pod: pod({ status: { phase: 'Running', containerStatuses: [running('app', false)] } }),
      ready: '0/1',
      status: 'Running',
      restarts: '0',
    },
    { name: 'pending, no statuses', pod: pod({ status: { phase: 'Pending' } }), ready: '0/1', status: 'Pending', restarts: '0' },
    {
      name: 'ContainerCreating',
      pod: pod({ status: { phase: 'Pending', containerStatuses: [waiting('app', 'ContainerCreating')] } }),
      ready: '0/1',
      status: 'ContainerCreating',
      restarts: '0',
    },
    {
      name: 'CrashLoopBackOff with last restart time',
      pod: pod({ status: { phase: 'Running', containerStatuses: [waiting('app', 'CrashLoopBackOff', { restartCount: 3, lastState: lastTerm(5) })] } }),
      ready: '0/1',
      status: 'CrashLoopBackOff',
      restarts: '3 (5s ago)',
    },
    {
      name: 'restarted and running again',
      pod: pod({ status: { phase: 'Running', containerStatuses: [running('app', true, { restartCount: 1, lastState: lastTerm(150) })] } }),
      ready: '1/1',
      status: 'Running',
      restarts: '1 (2m30s ago)',
    },
    {
      name: 'Completed',
      pod: pod({ status: { phase: 'Succeeded', containerStatuses: [terminated('app', 0, 'Completed')] } }),
      ready: '0/1',
      status: 'Completed',
      restarts: '0',
    },
    {
      name: 'Error',
      pod: pod({ status: { phase: 'Failed', containerStatuses: [terminated('app', 1, 'Error')] } }),
      ready: '0/1',
      status: 'Error',
      restarts: '0',
    },
    {
      name: 'ExitCode without reason',
      pod: pod({ status: { phase: 'Failed', containerStatuses: [terminated('app', 2)] } }),
      ready: '0/1',
      status: 'ExitCode:2',
      restarts: '0',
    },
    {
      name: 'Signal without reason',
      pod: pod({ status: { phase: 'Failed', containerStatuses: [terminated('app', 137, undefined, {}, 9)] } }),
      ready: '0/1',
      status: 'Signal:9',
      restarts: '0',
    },
    {
      name: 'the first container in spec order decides (statuses walked backwards)',
      pod: pod({
        containers: [c('a'), c('b')],
        status: { phase: 'Running', containerStatuses: [waiting('a', 'CrashLoopBackOff'), terminated('b', 1, 'Error')] },
      }),
      ready: '0/2',
      status: 'CrashLoopBackOff',
      restarts: '0',
    },
    {
      name: 'Completed with a container still running and Ready',
      pod: pod({
        containers: [c('a'), c('b')],
        status: { phase: 'Running', conditions: [readyCond('True')], containerStatuses: [terminated('a', 0, 'Completed'), running('b')] },
      }),
      ready: '1/2',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'Completed with a container still running, pod not Ready',
      pod: pod({
        containers: [c('a'), c('b')],
        status: { phase: 'Running', conditions: [readyCond('False')], containerStatuses: [terminated('a', 0, 'Completed'), running('b')] },
      }),
      ready: '1/2',
      status: 'NotReady',
      restarts: '0',
    },
    {
      name: 'pod reason (admission)',
      pod: pod({ status: { phase: 'Failed', reason: 'OutOfcpu', message: "Node didn't have enough resource" } }),
      ready: '0/1',
      status: 'OutOfcpu',
      restarts: '0',
    },
    {
      name: 'Terminating',
      pod: pod({ deleting: true, status: { phase: 'Running', containerStatuses: [running('app')] } }),
      ready: '1/1',
      status: 'Terminating',
      restarts: '0',
    },
    {
      name: 'terminal pods are not Terminating',
      pod: pod({ deleting: true, status: { phase: 'Succeeded', containerStatuses: [terminated('app', 0, 'Completed')] } }),
      ready: '0/1',
      status: 'Completed',
      restarts: '0',
    },
    {
      name: 'NodeLost while deleting',
      pod: pod({ deleting: true, status: { phase: 'Running', reason: 'NodeLost' } }),
      ready: '0/1',
      status: 'Unknown',
      restarts: '0',
    },
    // init containers
    {
      name: 'Init:0/2 while the first init container runs',
      pod: pod({
        init: [c('i1'), c('i2')],
        status: {
          phase: 'Pending',
          initContainerStatuses: [running('i1', false), waiting('i2', 'PodInitializing')],
          containerStatuses: [waiting('app', 'PodInitializing')],
        },
      }),
      ready: '0/1',
      status: 'Init:0/2',
      restarts: '0',
    },
    {
      name: 'Init:1/2 after the first succeeded',
      pod: pod({
        init: [c('i1'), c('i2')],
        status: {
          phase: 'Pending',
          initContainerStatuses: [terminated('i1', 0, 'Completed'), running('i2', false)],
          containerStatuses: [waiting('app', 'PodInitializing')],
        },
      }),
      ready: '0/1',
      status: 'Init:1/2',
      restarts: '0',
    },
    {
      name: 'Init:<waiting reason>',
      pod: pod({
        init: [c('i1')],
        status: { phase: 'Pending', initContainerStatuses: [waiting('i1', 'CrashLoopBackOff', { restartCount: 2, lastState: lastTerm(3) })] },
      }),
      ready: '0/1',
      status: 'Init:CrashLoopBackOff',
      restarts: '2 (3s ago)',
    },
    {
      name: 'Init:<terminated reason>',
      pod: pod({ init: [c('i1')], status: { phase: 'Failed', initContainerStatuses: [terminated('i1', 1, 'Error')] } }),
      ready: '0/1',
      status: 'Init:Error',
      restarts: '0',
    },
    {
      name: 'Init:ExitCode:N',
      pod: pod({ init: [c('i1')], status: { phase: 'Failed', initContainerStatuses: [terminated('i1', 3)] } }),
      ready: '0/1',
      status: 'Init:ExitCode:3',
      restarts: '0',
    },
    {
      name: 'Init:Signal:N',
      pod: pod({ init: [c('i1')], status: { phase: 'Failed', initContainerStatuses: [terminated('i1', 143, undefined, {}, 15)] } }),
      ready: '0/1',
      status: 'Init:Signal:15',
      restarts: '0',
    },
    {
      name: 'PodInitializing once init containers are done',
      pod: pod({
        init: [c('i1')],
        status: { phase: 'Pending', initContainerStatuses: [terminated('i1', 0, 'Completed')], containerStatuses: [waiting('app', 'PodInitializing')] },
      }),
      ready: '0/1',
      status: 'PodInitializing',
      restarts: '0',
    },
    // sidecars
    {
      name: 'a started sidecar counts in READY',
      pod: pod({
        init: [c('proxy', { restartPolicy: 'Always' })],
        status: { phase: 'Running', initContainerStatuses: [running('proxy')], containerStatuses: [running('app')] },
      }),
      ready: '2/2',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'a sidecar not started yet keeps the pod initializing',
      pod: pod({
        init: [c('proxy', { restartPolicy: 'Always' })],
        status: {
          phase: 'Pending',
          initContainerStatuses: [running('proxy', false, { started: false })],
          containerStatuses: [waiting('app', 'PodInitializing')],
        },
      }),
      ready: '0/2',
      status: 'Init:0/1',
      restarts: '0',
    },
    {
      name: 'sidecar restarts count with the app containers once initialized',
      pod: pod({
        init: [c('migrate'), c('proxy', { restartPolicy: 'Always' })],
        status: {
          phase: 'Running',
          conditions: [initializedCond('True')],
          initContainerStatuses: [
            terminated('migrate', 0, 'Completed', { restartCount: 4 }),
            running('proxy', true, { restartCount: 2, lastState: lastTerm(20) }),
          ],
          containerStatuses: [running('app', true, { restartCount: 1, lastState: lastTerm(40) })],
        },
      }),
      ready: '2/2',
      status: 'Running',
      restarts: '3 (20s ago)',
    },
    {
      // kubectl keeps the init reason here: the app loop only overrides it for non-running states.
      name: 'a crashing sidecar after initialization keeps its Init: reason',
      pod: pod({
        init: [c('proxy', { restartPolicy: 'Always' })],
        status: {
          phase: 'Running',
          conditions: [initializedCond('True')],
          initContainerStatuses: [waiting('proxy', 'CrashLoopBackOff', { restartCount: 1, started: false, lastState: lastTerm(8) })],
          containerStatuses: [running('app')],
        },
      }),
      ready: '1/2',
      status: 'Init:CrashLoopBackOff',
      restarts: '1 (8s ago)',
    },
  ];
  for (const t of cases) {
    const [name, ready, status, restarts, age] = podRow(t.pod, { now });
    assert.equal(name, 'p', t.name);
    assert.equal(ready, t.ready, `${t.name}: READY`);
    assert.equal(status, t.status, `${t.name}: STATUS`);
    assert.equal(restarts, t.restarts, `${t.name}: RESTARTS`);
    assert.equal(age, '90s', `${t.name}: AGE`);
    assert.equal(podStatusReason(t.pod, now), t.status);
  }
});

test('wide columns: IP, NODE, NOMINATED NODE, READINESS GATES', () => {
  const p = pod({
    gates: ['example.com/a', 'example.com/b'],
    status: {
      phase: 'Running',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      conditions: [{ type: 'example.com/a', status: 'True' }],
      containerStatuses: [running('app')],
    },
  });
  assert.deepEqual(podRow(p, { now, wide: true }).slice(5), ['127.0.0.1', '<none>', '<none>', '1/2']);
  const bare = pod({ status: { phase: 'Pending' } });
  assert.deepEqual(podRow(bare, { now, wide: true }).slice(5), ['<none>', '<none>', '<none>', '<none>']);
});

test('AGE and RESTARTS ages are HumanDuration; an unset creation time is <unknown>', () => {
  const p = (created: number) => ({ metadata: { name: 'x', creationTimestamp: ago(created) }, spec: { containers: [] } }) as Pod;
  assert.equal(podRow(p(150), { now })[4], '2m30s');
  assert.equal(podRow(p(3 * 3600), { now })[4], '3h');
  assert.equal(podRow({ metadata: { name: 'x' }, spec: { containers: [] } }, { now })[4], '<unknown>');
});

test('table layout is tabwriter with padding 3 and minimum width 6', () => {
  const two = formatPodTable(
    [
      { ...pod({ status: { phase: 'Running', containerStatuses: [running('app')] } }), metadata: { name: 'web', creationTimestamp: ago(5) } },
      {
        ...pod({
          status: {
            phase: 'Running',
            containerStatuses: [waiting('app', 'CrashLoopBackOff', { restartCount: 3, lastState: { terminated: { exitCode: 1, finishedAt: ago(5) } } })],
          },
        }),
        metadata: { name: 'a-much-longer-name', creationTimestamp: ago(120) },
      },
    ],
    { now },
  );
  assert.equal(
    two,
    'NAME                 READY   STATUS             RESTARTS     AGE\n' +
      'web                  1/1     Running            0            5s\n' +
      'a-much-longer-name   0/1     CrashLoopBackOff   3 (5s ago)   2m\n',
  );
  const table = formatPodTable([pod({ status: { phase: 'Running', containerStatuses: [running('app')] } })], { now });
  assert.equal(table, 'NAME   READY   STATUS    RESTARTS   AGE\np      1/1     Running   0          90s\n');
  const wide = formatPodTable([pod({ status: { phase: 'Running', podIPs: [{ ip: '127.0.0.1' }], containerStatuses: [running('app')] } })], { now, wide: true });
  assert.equal(wide.split('\n')[0], 'NAME   READY   STATUS    RESTARTS   AGE   IP          NODE     NOMINATED NODE   READINESS GATES');
});

test('lists print in the API server field order, 4-space JSON and block YAML', () => {
  const list = toV1List([{ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'Running' } }]);
  const json = formatObject(list, 'json');
  assert.ok(
    json.startsWith('{\n    "kind": "List",\n    "apiVersion": "v1",\n    "metadata": {\n        "resourceVersion": ""\n    },\n    "items": [\n'),
    json,
  );
  assert.deepEqual(JSON.parse(json), list);
  const yaml = formatObject(list, 'yaml');
  assert.ok(yaml.startsWith('kind: List\napiVersion: v1\nmetadata:\n  resourceVersion: ""\nitems:\n- kind: Pod\n  apiVersion: v1\n'), yaml);
  assert.match(yaml, /creationTimestamp: "2026-01-01T00:00:00Z"/);
  assert.deepEqual(parse(yaml), list);
});
