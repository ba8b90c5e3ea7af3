// systemd readiness against a real datagram socket: a small python3 helper binds NOTIFY_SOCKET (Node
// cannot) and prints each datagram; a real `podvisor agent` with a static pod whose readiness probe
// passes once the test creates a file must send STATUS= counts, READY=1 only after the pod is Ready,
// and STOPPING=1 on SIGTERM; `podvisor up` the same with its pods.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mainJs, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const receiver = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    data = s.recv(4096).decode()
    print(data.replace("\\n", "|"), flush=True)
`;

const cleanups: Array<() => void | Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

test('READY=1 is sent only once the pods given at start are Ready, STOPPING=1 on shutdown', async () => {
  const dir = await tempDir();
  cleanups.push(() => dir.remove());
  const socketPath = join(dir.path, 'notify.sock');
  const py = spawn('python3', ['-c', receiver, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => void py.kill());
  let received = '';
  py.stdout.on('data', (b: Buffer) => (received += b.toString()));
  await waitFor('the datagram socket bound', () => received.includes('bound'));

  const manifests = join(dir.path, 'manifests');
  mkdirSync(manifests);
  const flag = join(dir.path, 'ready');
  const probe = { exec: { command: ['/bin/sh', '-c', `test -f ${flag}`] }, periodSeconds: 1 };
  writeFileSync(
    join(manifests, 'web.yaml'),
    manifestYaml(pod('web', [shell('app', 'exec sleep 300', { readinessProbe: probe })], { terminationGracePeriodSeconds: 1 })),
  );
  const agent = spawn(process.execPath, [mainJs, 'agent', '--root-dir', join(dir.path, 'root'), '--pod-manifest-path', manifests], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NOTIFY_SOCKET: socketPath },
  });
  let stderr = '';
  agent.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<void>((resolve) => agent.once('close', () => resolve()));
  cleanups.push(async () => {
    if (agent.exitCode === null) agent.kill('SIGTERM');
    await exited;
  });

  await waitFor(
    () => `STATUS=0/1 pods Ready; received: ${received}; agent: ${stderr}`,
    () => received.includes('STATUS=0/1 pods Ready'),
    60_000,
  );
  await holdsFor('no READY=1 while the pod is not Ready', () => !received.includes('READY=1'), 2000);
  writeFileSync(flag, '');
  await waitFor(
    () => `READY=1; received: ${received}`,
    () => /READY=1\|STATUS=1\/1 pods Ready/.test(received),
    30_000,
  );
  agent.kill('SIGTERM');
  await exited;
  await waitFor(
    () => `STOPPING=1; received: ${received}`,
    () => received.includes('STOPPING=1'),
    10_000,
  );
  const lines = received.split('\n').filter((l) => l && l !== 'bound');
  assert.ok(lines.indexOf(lines.find((l) => l.startsWith('READY=1'))!) < lines.findIndex((l) => l.startsWith('STOPPING=1')));
  assert.equal(lines.filter((l) => l.startsWith('READY=1')).length, 1);
});

test('up sends READY=1 once its pods are Ready, STOPPING=1 when interrupted', async () => {
  const dir = await tempDir();
  cleanups.push(() => dir.remove());
  const socketPath = join(dir.path, 'notify.sock');
  const py = spawn('python3', ['-c', receiver, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => void py.kill());
  let received = '';
  py.stdout.on('data', (b: Buffer) => (received += b.toString()));
  await waitFor('the datagram socket bound', () => received.includes('bound'));

  const flag = join(dir.path, 'ready');
  const file = join(dir.path, 'web.yaml');
  const probe = { exec: { command: ['/bin/sh', '-c', `test -f ${flag}`] }, periodSeconds: 1 };
  writeFileSync(file, manifestYaml(pod('web', [shell('app', 'exec sleep 300', { readinessProbe: probe })], { terminationGracePeriodSeconds: 1 })));
  const up = spawn(process.execPath, [mainJs, 'up', '-f', file, '--root-dir', join(dir.path, 'root')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NOTIFY_SOCKET: socketPath },
  });
  let stderr = '';
  up.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<void>((resolve) => up.once('close', () => resolve()));
  cleanups.push(async () => {
    if (up.exitCode === null) up.kill('SIGKILL');
    await exited;
  });

  await waitFor(
    () => `STATUS=0/1 pods Ready; received: ${received}; up: ${stderr}`,
    () => received.includes('STATUS=0/1 pods Ready'),
    60_000,
  );
  assert.ok(!received.includes('READY=1'));
  writeFileSync(flag, '');
  await waitFor(
    () => `READY=1; received: ${received}; up: ${stderr}`,
    () => /READY=1\|STATUS=1\/1 pods Ready/.test(received),
    30_000,
  );
  up.kill('SIGINT');
  await waitFor(
    () => `STOPPING=1; received: ${received}`,
    () => received.includes('STOPPING=1'),
    30_000,
  );
  await exited;
});
