// The run summary: failed pods with their error, each failed container's exit code or waiting
// reason, and its last log lines; healthy containers and pods left out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, Pod } from '../../src/api/types.js';
import { containerProblem, formatRunSummary } from '../../src/printers/run-summary.js';

const cs = (name: string, state: ContainerStatus['state'], extra: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready: false,
  restartCount: 0,
  state,
  ...extra,
});

test('which containers count as failed, and how they are described', () => {
  const cases: [string, ContainerStatus, string | undefined][] = [
    ['running and ready', cs('a', { running: {} }, { ready: true }), undefined],
    ['running, not ready', cs('a', { running: {} }), 'running, not ready'],
    ['running, not started', cs('a', { running: {} }, { started: false }), 'running, not started'],
    ['exited 0', cs('a', { terminated: { exitCode: 0, reason: 'Completed' } }), undefined],
    ['exited non-zero', cs('a', { terminated: { exitCode: 3, reason: 'Error' } }), 'exit code 3 (Error)'],
    ['killed', cs('a', { terminated: { exitCode: 137 } }), 'exit code 137'],
    ['waiting its turn', cs('a', { waiting: { reason: 'PodInitializing' } }), undefined],
    ['being created', cs('a', { waiting: { reason: 'ContainerCreating' } }), undefined],
    [
      'back-off after a crash',
      cs('a', { waiting: { reason: 'CrashLoopBackOff' } }, { restartCount: 2, lastState: { terminated: { exitCode: 2, reason: 'Error' } } }),
      'waiting: CrashLoopBackOff, last exit code 2 (Error), 2 restarts',
    ],
    ['a start error', cs('a', { waiting: { reason: 'RunContainerError' } }), 'waiting: RunContainerError'],
  ];
  for (const [name, status, want] of cases) assert.equal(containerProblem(status), want, name);
  assert.equal(containerProblem(cs('init', { running: {} }), true), 'running, not finished');
});

test('the summary names failed pods, their containers and the log tail', async () => {
  const pod = (name: string, statuses: ContainerStatus[], init: ContainerStatus[] = []): Pod => ({
    metadata: { name, namespace: 'default', uid: name },
    spec: { containers: [] },
    status: { phase: 'Running', containerStatuses: statuses, initContainerStatuses: init },
  });
  const reads: string[] = [];
  const text = await formatRunSummary(
    [
      { pod: pod('ok', [cs('app', { running: {} }, { ready: true })]), ok: true },
      {
        pod: pod(
          'bad',
          [cs('web', { running: {} }, { ready: true }), cs('db', { terminated: { exitCode: 1, reason: 'Error', containerID: 'process://db1' } })],
          [cs('init', { terminated: { exitCode: 0 } })],
        ),
        ok: false,
        error: 'timeout error: pod "bad_default(bad)" containers not running after 10 retries',
      },
      { pod: pod('quiet', [cs('app', { terminated: { exitCode: 4, reason: 'Error' } })]), ok: false, error: 'pod "quiet_default(quiet)" failed' },
    ],
    'running',
    async (p, status, id) => {
      reads.push(`${p.metadata!.name}/${status.name}/${id ?? ''}`);
      return p.metadata!.name === 'bad' ? ['connecting', 'refused'] : [];
    },
  );
  assert.equal(
    text,
    '2 of 3 pods failed:\n' +
      'pod/bad: timeout error: pod "bad_default(bad)" containers not running after 10 retries\n' +
      '  container db: exit code 1 (Error)\n' +
      '    last 2 log lines:\n' +
      '    | connecting\n' +
      '    | refused\n' +
      'pod/quiet: pod "quiet_default(quiet)" failed\n' +
      '  container app: exit code 4 (Error)\n' +
      '    (no log output)\n',
  );
  assert.deepEqual(reads, ['bad/db/process://db1', 'quiet/app/']);
  assert.equal(await formatRunSummary([{ pod: pod('ok', []), ok: true }], 'ready', async () => []), 'all 1 pod ready\n');
});
