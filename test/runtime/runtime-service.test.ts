// The process runtime as its own service (`podvisor runtime serve`, a real process) behind the CRI
// client: kill -9 of the service keeps containers running and logging, a restarted service adopts
// them (same ids, continuous logs), reports an exit it could not observe as ContainerStatusUnknown,
// never mistakes a recycled pid, and leaves no process behind once the pod is removed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { stopPodSandboxesSync } from '../../src/runtime/cri/stop-sync.js';
import { STATUS_UNKNOWN_REASON } from '../../src/runtime/process/runtime.js';
import { silentLogger } from '../../src/util/logger.js';
import { holdsFor } from '../fixtures/wait.js';
import { containerConfig, isAlive, readPid, sandboxConfig, tempDir, waitFor } from './helpers.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

interface Service {
  child: ChildProcess;
  exited: Promise<number | null>;
}

function startService(root: string): Service {
  const child = spawn(process.execPath, [mainJs, 'runtime', 'serve', '--root-dir', root], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  void exited.then((code) => {
    if (code !== null && code !== 0 && code !== 3) process.stderr.write(`runtime service exited ${code}: ${err}\n`);
  });
  return { child, exited };
}

async function connected(root: string): Promise<CriRuntimeClient> {
  const client = new CriRuntimeClient({ endpoint: `unix://${join(root, 'runtime.sock')}`, logger: silentLogger });
  await waitFor('the runtime service answers', () =>
    client.version().then(
      () => true,
      () => false,
    ),
  );
  return client;
}

function logLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ').slice(3).join(' '));
}

test('kill -9 of the runtime service: containers keep running and logging, the restarted service adopts them', async () => {
  const { dir: root, cleanup } = tempDir('podvisor-svc-');
  let svc = startService(root);
  let client = await connected(root);
  const pids: number[] = [];
  try {
    const sbc = sandboxConfig(root, 'web');
    const sb = await client.runPodSandbox(sbc);
    const counterPid = join(root, 'counter.pid');
    // Writes a numbered line every 20 ms: a gap in the numbers would be lost output.
    const counter = await client.createContainer(
      sb,
      containerConfig(['sh', '-c', `echo $$ > ${counterPid}; i=0; while :; do i=$((i+1)); echo "n $i"; sleep 0.02; done`], {
        metadata: { name: 'counter', attempt: 0 },
      }),
      sbc,
    );
    const quitterPid = join(root, 'quitter.pid');
    const quitFlag = join(root, 'quit');
    const quitter = await client.createContainer(
      sb,
      containerConfig(['sh', '-c', `echo $$ > ${quitterPid}; while [ ! -e ${quitFlag} ]; do sleep 0.02; done; exit 5`], {
        metadata: { name: 'quitter', attempt: 0 },
      }),
      sbc,
    );
    await client.startContainer(counter);
    await client.startContainer(quitter);
    pids.push(await readPid(counterPid), await readPid(quitterPid));
    const counterLog = (await client.containerStatus(counter)).logPath;
    await waitFor('first lines logged', () => logLines(counterLog).length >= 5);

    // The service dies without warning.
    svc.child.kill('SIGKILL');
    await svc.exited;
    await client.close();
    const linesAtDeath = logLines(counterLog).length;
    // Meanwhile one container exits: nobody can wait for it.
    writeFileSync(quitFlag, '');
    await waitFor('quitter exited while the service was down', () => !isAlive(pids[1]!));
    await holdsFor('the counter keeps running without the service', () => isAlive(pids[0]!), 300);

    svc = startService(root);
    client = await connected(root);
    const st = await client.containerStatus(counter);
    assert.equal(st.state, 'CONTAINER_RUNNING', 'the same container id is running again under the new service');
    const q = await client.containerStatus(quitter);
    assert.deepEqual([q.state, q.exitCode, q.reason], ['CONTAINER_EXITED', 137, STATUS_UNKNOWN_REASON]);

    // Output written while no service ran (held in the FIFO) and after reaches the same log, in order.
    await waitFor('logging continues after the restart', () => logLines(counterLog).length >= linesAtDeath + 20);
    const numbers = logLines(counterLog).map((l) => Number(l.split(' ')[1]));
    numbers.forEach((n, i) => assert.equal(n, i + 1, `line ${i + 1} of the log is number ${n}: no line lost or repeated`));

    // Stopping the adopted container works; its group is gone and nothing is left behind.
    await client.stopContainer(counter, 5);
    const done = await client.containerStatus(counter);
    assert.equal(done.state, 'CONTAINER_EXITED');
    assert.equal(isAlive(pids[0]!), false);
    await client.removePodSandbox(sb);
    assert.deepEqual(await client.listContainers(), []);
    assert.deepEqual(readdirSync(join(root, 'runtime', 'containers')), []);
  } finally {
    for (const p of pids) {
      try {
        process.kill(-p, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await client.close();
    svc.child.kill('SIGKILL');
    await svc.exited;
    cleanup();
  }
});

test('a recycled pid is never taken for the container; state files are 0600', async () => {
  const { dir: root, cleanup } = tempDir('podvisor-svc-');
  let svc = startService(root);
  let client = await connected(root);
  // An unrelated process, leader of its own group, as a recycled pid would be.
  const stranger = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  try {
    const sbc = sandboxConfig(root, 'reuse');
    const sb = await client.runPodSandbox(sbc);
    const pidFile = join(root, 'c.pid');
    const id = await client.createContainer(sb, containerConfig(['sh', '-c', `echo $$ > ${pidFile}; exec sleep 60`]), sbc);
    await client.startContainer(id);
    const pid = await readPid(pidFile);
    const stateFile = join(root, 'runtime', 'containers', `${id}.json`);
    assert.equal(statSync(stateFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(root, 'runtime')).mode & 0o777, 0o700);

    svc.child.kill('SIGKILL');
    await svc.exited;
    await client.close();
    // The container dies and its pid "comes back" as another process: the record now names the stranger.
    process.kill(-pid, 'SIGKILL');
    await waitFor('container gone', () => !isAlive(pid));
    const rec = JSON.parse(readFileSync(stateFile, 'utf8')) as { pid: number };
    rec.pid = stranger.pid!;
    writeFileSync(stateFile, JSON.stringify(rec), { mode: 0o600 });

    svc = startService(root);
    client = await connected(root);
    const st = await client.containerStatus(id);
    assert.deepEqual([st.state, st.reason], ['CONTAINER_EXITED', STATUS_UNKNOWN_REASON], 'start time differs: not adopted');
    await client.stopContainer(id, 0);
    await client.removePodSandbox(sb);
    assert.ok(isAlive(stranger.pid!), 'the process now holding the pid was never signalled');
  } finally {
    stranger.kill('SIGKILL');
    await client.close();
    svc.child.kill('SIGKILL');
    await svc.exited;
    cleanup();
  }
});

test('one service per root dir: a second one exits 3', async () => {
  const { dir: root, cleanup } = tempDir('podvisor-svc-');
  const svc = startService(root);
  const client = await connected(root);
  try {
    const second = startService(root);
    assert.equal(await second.exited, 3);
    await client.version();
  } finally {
    await client.close();
    svc.child.kill('SIGTERM');
    assert.equal(await svc.exited, 0, 'SIGTERM stops the service cleanly');
    cleanup();
  }
});

test('stopPodSandboxesSync: the sandboxes given are stopped, their containers killed, before the call returns', async () => {
  const { dir: root, cleanup } = tempDir('podvisor-svc-');
  const svc = startService(root);
  const client = await connected(root);
  try {
    const pids: Record<string, number> = {};
    const sandboxes: Record<string, string> = {};
    for (const name of ['stopped', 'kept']) {
      const sbc = sandboxConfig(root, name);
      const sb = await client.runPodSandbox(sbc);
      const pidFile = join(root, `${name}.pid`);
      const id = await client.createContainer(sb, containerConfig(['/bin/sh', '-c', `echo $$ > ${pidFile}; exec sleep 300`]), sbc);
      await client.startContainer(id);
      sandboxes[name] = sb;
      pids[name] = await readPid(pidFile);
    }
    stopPodSandboxesSync(`unix://${join(root, 'runtime.sock')}`, [sandboxes.stopped!]);
    assert.equal(isAlive(pids.stopped!), false, 'killed before the call returned');
    assert.equal((await client.podSandboxStatus(sandboxes.stopped!)).state, 'SANDBOX_NOTREADY');
    assert.equal(isAlive(pids.kept!), true, 'a sandbox not named is left alone');
    await client.stopPodSandbox(sandboxes.kept!);
    await client.removePodSandbox(sandboxes.kept!);
    await client.removePodSandbox(sandboxes.stopped!);
  } finally {
    await client.close();
    svc.child.kill('SIGTERM');
    await svc.exited;
    cleanup();
  }
});
