// The wait engine's decisions over pods and events (no process): image pull failures that cannot
// mend fail after the first back-off, transient ones keep waiting; kubectl's --for forms; the end of
// the container `run --exit-code-from` names under each restart policy; since when a pod has held
// (the settle hold of `up -d`); the JSONPath templates `get -o jsonpath=` prints.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import {
  refusedCreation,
  containerExit,
  containerExitCode,
  explainsWait,
  heldSinceMs,
  oneTerminalLine,
  parseWaitFor,
  podWait,
  type WaitEvent,
} from '../../src/kubelet/wait-engine.js';
import { jsonPathTemplate } from '../../src/printers/jsonpath.js';

function pullingPod(reason: string, message: string): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:typo' }] },
    status: {
      phase: 'Pending',
      containerStatuses: [{ name: 'app', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }],
    },
  } as Pod;
}

const pullFailed = (cause: string): WaitEvent => ({
  type: 'Warning',
  reason: 'Failed',
  message: `Failed to pull image "registry.example/app:typo": ${cause}`,
  involvedObject: { fieldPath: 'spec.containers{app}' },
});

test('image pull: not found, unauthorized and an unresolvable registry fail after the first back-off', () => {
  const ready = podWait(parseWaitFor('ready'));
  for (const cause of [
    'rpc error: code = NotFound desc = failed to pull and unpack image: not found',
    'rpc error: code = Unknown desc = failed to authorize: 401 Unauthorized',
    'rpc error: code = Unknown desc = dial tcp: lookup registry.example on 127.0.0.53:53: no such host',
  ]) {
    // ErrImagePull itself (the first failure) still waits: the kubelet retries after a back-off.
    assert.equal(ready(pullingPod('ErrImagePull', cause), [pullFailed(cause)]), 'wait');
    const d = ready(pullingPod('ImagePullBackOff', 'Back-off pulling image "registry.example/app:typo"'), [pullFailed(cause)]);
    assert.ok(typeof d === 'object', cause);
    assert.match(d.fail, /^cannot become ready: container app: ImagePullBackOff: Failed to pull image/);
  }
  const transient = 'rpc error: code = Unavailable desc = connection reset by peer';
  assert.equal(ready(pullingPod('ImagePullBackOff', 'Back-off pulling image "x"'), [pullFailed(transient)]), 'wait');
});

test('kubectl --for forms: condition, jsonpath, delete; a Succeeded pod ends modes and fails conditions', () => {
  const pod: Pod = {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: '', imageID: '', state: { running: {} } }],
    },
  } as Pod;
  assert.equal(podWait(parseWaitFor('condition=Ready'))(pod, []), 'done');
  assert.equal(podWait(parseWaitFor('condition=Ready=false'))(pod, []), 'wait');
  assert.equal(podWait(parseWaitFor('jsonpath={.status.phase}=Running'))(pod, []), 'done');
  assert.equal(podWait(parseWaitFor("jsonpath={.status.conditions[?(@.type=='Ready')].status}=True"))(pod, []), 'done');
  assert.equal(podWait(parseWaitFor('delete'))(pod, []), 'wait');
  const done = { ...pod, status: { phase: 'Succeeded' } } as Pod;
  assert.equal(podWait(parseWaitFor('running'))(done, []), 'done');
  assert.deepEqual(podWait(parseWaitFor('condition=Ready'))(done, []), { fail: 'pod has completed (Succeeded): it will not be condition Ready=true' });
  assert.throws(() => parseWaitFor('green'), /unrecognized condition: "green"/);
});

test('--exit-code-from POD/CONTAINER: a final end under Never or OnFailure exit 0, the first end under Always; MissingClusterDNS explains no wait', () => {
  type State = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number]['state'];
  const pod = (policy: string, state: State, last?: State) =>
    ({
      metadata: { name: 't' },
      spec: { restartPolicy: policy, containers: [{ name: 'test' }, { name: 'side' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'test', ready: false, restartCount: last ? 1 : 0, image: '', imageID: '', state, ...(last ? { lastState: last } : {}) },
          { name: 'side', ready: true, restartCount: 0, image: '', imageID: '', state: { running: {} } },
        ],
      },
    }) as Pod;
  const ended = (exitCode: number): State => ({ terminated: { exitCode } });
  const exit = (p: Pod) => containerExit(p, p.status, 'test');
  assert.equal(exit(pod('Never', ended(3))), 3);
  assert.equal(exit(pod('Never', { running: {} })), undefined);
  assert.equal(exit(pod('OnFailure', ended(0))), 0);
  assert.equal(exit(pod('OnFailure', ended(3))), undefined, 'the kubelet restarts it');
  assert.equal(exit(pod('Always', ended(3))), 3);
  assert.equal(exit(pod('Always', { running: {} }, ended(4))), 4, 'seen after its restart');
  const crashLooping = pod('OnFailure', { waiting: { reason: 'CrashLoopBackOff' } }, ended(5));
  assert.equal(containerExitCode(crashLooping.status, 'test'), 5);
  const wait = podWait({ kind: 'exit', container: 'test' });
  assert.equal(wait(pod('Never', ended(0)), []), 'done');
  assert.deepEqual(wait(pod('Never', ended(2)), []), { fail: 'container test exited with code 2' });
  assert.equal(wait(pod('Never', { running: {} }), []), 'wait');
  assert.ok(typeof wait(crashLooping, []) === 'object');
  assert.equal(explainsWait({ type: 'Warning', reason: 'MissingClusterDNS' }), false);
  assert.equal(explainsWait({ type: 'Warning', reason: 'BackOff' }), true);
});

test('jsonpath templates as kubectl prints them; progress lines fit one terminal line', () => {
  const list = {
    items: [
      { metadata: { name: 'a', labels: { app: 'x' } }, status: { phase: 'Running' } },
      { metadata: { name: 'b' }, status: { phase: 'Pending' } },
    ],
  };
  assert.equal(jsonPathTemplate('{.items[*].metadata.name}').print(list), 'a b');
  assert.equal(jsonPathTemplate('{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}').print(list), 'a\tRunning\nb\tPending\n');
  assert.equal(jsonPathTemplate('{.items[?(@.status.phase=="Pending")].metadata.name}').print(list), 'b');
  assert.equal(jsonPathTemplate('{.items[0].metadata.labels}').print(list), '{"app":"x"}');
  assert.equal(jsonPathTemplate('{..phase}').print(list), 'Running Pending');
  assert.equal(jsonPathTemplate('name: {.items[-1:].metadata.name}').print(list), 'name: b');
  assert.equal(oneTerminalLine('x'.repeat(400), 80).length, 79);
});

test('a pod has held since the last start of its running instances or of Ready, each taken at the end of its second', () => {
  const running = (name: string, startedAt: string) => ({ name, image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt } } });
  const at = (t: string) => Date.parse(t);
  assert.equal(heldSinceMs(undefined), Infinity, 'no status: not held at all');
  assert.equal(heldSinceMs({ phase: 'Pending' }), Infinity);
  const two = { phase: 'Running', containerStatuses: [running('a', '2026-12-04T10:00:00Z'), running('b', '2026-12-04T10:00:05Z')] };
  assert.equal(heldSinceMs(two), at('2026-12-04T10:00:05Z') + 999, 'the latest start, at the end of its second');
  const ready = { ...two, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-04T10:01:00Z' }] };
  assert.equal(heldSinceMs(ready), at('2026-12-04T10:01:00Z') + 999, 'Ready became True later');
  const notReady = { ...two, conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-12-04T10:01:00Z' }] };
  assert.equal(heldSinceMs(notReady), at('2026-12-04T10:00:05Z') + 999, 'a False Ready does not count');
  const fine = { phase: 'Running', containerStatuses: [running('a', '2026-12-04T10:00:00.250Z')] };
  assert.equal(heldSinceMs(fine), at('2026-12-04T10:00:00.250Z'), 'a time with a fraction is taken as it is');
  const sidecar = { ...two, initContainerStatuses: [running('s', '2026-12-04T10:02:00Z')] };
  assert.equal(heldSinceMs(sidecar), at('2026-12-04T10:02:00Z') + 999, 'a restarted sidecar counts');
});

test('a Job, StatefulSet or DaemonSet whose latest pod creation was refused cannot roll out; a later success clears it', () => {
  const failed = { type: 'Warning', reason: 'FailedCreate', message: 'Error creating: Pod "w-x" is invalid: spec.hostname: Invalid value' };
  const created = { type: 'Normal', reason: 'SuccessfulCreate', message: 'Created pod: w-y' };
  for (const kind of ['Job', 'StatefulSet', 'DaemonSet']) {
    const o = { kind, metadata: { name: 'w' } };
    assert.equal(refusedCreation(o, failed), `${kind.toLowerCase()} "w" cannot create its pods: FailedCreate: ${failed.message}`);
    assert.equal(refusedCreation(o, created), undefined);
    assert.equal(refusedCreation(o, undefined), undefined);
  }
  // Deployments and ReplicaSets say it with ReplicaFailure (rolloutStatus).
  assert.equal(refusedCreation({ kind: 'ReplicaSet', metadata: { name: 'w' } }, failed), undefined);
});
