// `podvisor up` as a process among others: SIGHUP stops the pods gracefully with no orphans, SIGUSR1
// opens no inspector, a descriptor the agent inherited never reaches a container, and a 100 MB burst
// of container output to a reader that does not read keeps the agent's memory bounded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, mainJs, tempDir } from '../fixtures/cli/cli-process.js';
import { container, manifestYaml, pod } from '../fixtures/pods.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

function podYaml(name: string, script: string): string {
  return manifestYaml(pod(name, [container('main', ['sh', '-c', script])], { terminationGracePeriodSeconds: 20 }));
}

function collect(child: ChildProcess): { err: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
  return { err: () => err, exited };
}

/** Ports a process listens on (TCP, IPv4 and IPv6), from its socket inodes and /proc/net. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

test('up: SIGUSR1 opens no inspector, no inherited descriptor reaches a container, SIGHUP stops the pods gracefully with no orphans', async () => {
  const tmp = await tempDir();
  try {
    const marker = `${process.pid}${Date.now() % 100000}`;
    const pidFile = join(tmp.path, 'pid');
    const byeFile = join(tmp.path, 'bye');
    const script = `trap 'echo bye > ${byeFile}; exit 0' TERM; setsid sleep ${marker} & echo $$$$ > ${pidFile}; while :; do sleep 0.1; done`;
    const manifest = join(tmp.path, 'pod.yaml');
    writeFileSync(manifest, podYaml('hup', script));
    // fd 3 of the agent: a socket its parent handed down without close-on-exec.
    const child = spawn(process.execPath, [mainJs, 'up', '-f', manifest, '--root-dir', join(tmp.path, 'root')], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    const run = collect(child);
    try {
      await waitFor('the container to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
      const containerPid = Number(readFileSync(pidFile, 'utf8').trim());
      assert.deepEqual(readdirSync(`/proc/${containerPid}/fd`).sort(), ['0', '1', '2']);

      child.kill('SIGUSR1');
      // The agent keeps running and nothing starts listening, for the time a listener would take to appear.
      await holdsFor(
        'the agent running after SIGUSR1 with no listener and no inspector',
        () => isAlive(child.pid!) && listeningPorts(child.pid!).length === 0 && !/Debugger listening/.test(run.err()),
        500,
      );
      assert.ok(isAlive(child.pid!), 'the agent survives SIGUSR1');
      assert.deepEqual(listeningPorts(child.pid!), []);
      assert.doesNotMatch(run.err(), /Debugger listening/);

      child.kill('SIGHUP');
      const { code } = await run.exited;
      assert.equal(code, 0, run.err());
      assert.match(run.err(), /SIGHUP: stopping 1 pod gracefully/);
      assert.equal(readFileSync(byeFile, 'utf8').trim(), 'bye', 'the container got its SIGTERM');
      assert.equal(isAlive(containerPid), false);
      const orphans = readdirSync('/proc').filter((n) => {
        try {
          return /^\d+$/.test(n) && readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
      assert.deepEqual(orphans, [], 'the setsid child is gone too');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  } finally {
    await tmp.remove();
  }
});

test('up --logs: a 100 MB burst to a reader that does not read keeps the agent bounded, and the drops are counted', async () => {
  const tmp = await tempDir();
  try {
    const done = join(tmp.path, 'done');
    const script = `head -c 100000000 /dev/zero | tr '\\000' x | fold -w 99; echo written > ${done}; exec sleep 600`;
    const manifest = join(tmp.path, 'pod.yaml');
    writeFileSync(manifest, podYaml('burst', script));
    const child = spawn(process.execPath, [mainJs, 'up', '-f', manifest, '--logs', '--root-dir', join(tmp.path, 'root')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = collect(child);
    // Nobody reads stdout while the burst lasts.
    child.stdout!.pause();
    try {
      await waitFor('the burst to be written', () => existsSync(done), 120_000);
      // The agent's peak RSS, and that it stays bounded while it takes in the last of the burst.
      const peakKiB = () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]);
      await holdsFor(
        () => `agent peak RSS under 200 MiB for a 100 MB burst (${Math.round(peakKiB() / 1024)} MiB)`,
        () => peakKiB() < 200 * 1024,
        500,
      );
      let out = '';
      child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      child.stdout!.resume();
      child.kill('SIGTERM');
      const { code } = await run.exited;
      assert.equal(code, 0, run.err());
      assert.match(out, /^burst\/main \| x{99}$/m);
      const dropped = [...out.matchAll(/\[podvisor\] (\d+) lines? of container output dropped: the reader is too slow/g)].reduce((n, m) => n + Number(m[1]), 0);
      assert.ok(dropped > 0, 'some lines were dropped and counted');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  } finally {
    await tmp.remove();
  }
});

test('crash loop: after many restarts only the current and the previous instance keep their logs', async () => {
  const tmp = await tempDir();
  try {
    const manifest = join(tmp.path, 'pod.yaml');
    writeFileSync(manifest, podYaml('crash', 'echo started; exit 1'));
    const root = join(tmp.path, 'root');
    const child = spawn(process.execPath, [mainJs, 'up', '-f', manifest, '--root-dir', root, '--max-container-restart-period=1s'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const run = collect(child);
    try {
      const logDir = () => {
        const pods = readdirSync(join(root, 'pods'));
        return join(root, 'pods', pods[0]!, 'main');
      };
      await waitFor('six restarts', () => existsSync(join(root, 'pods')) && existsSync(join(logDir(), '6.log')), 60_000);
      child.kill('SIGTERM');
      assert.equal((await run.exited).code, 0, run.err());
      const attempts = readdirSync(logDir()).map((n) => Number(/^(\d+)\.log/.exec(n)?.[1]));
      const newest = Math.max(...attempts);
      assert.ok(newest >= 6);
      assert.deepEqual(
        [...new Set(attempts)].sort((a, b) => a - b),
        [newest - 1, newest],
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  } finally {
    await tmp.remove();
  }
});
