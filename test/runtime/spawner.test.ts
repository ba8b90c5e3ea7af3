// The process spawner (a real perl process): what its children start with (session, stdio,
// signals, environment, user), its errors as spawn's, exits as ChildProcess reports them, and a
// spawner killed under running containers: they keep running, are watched by pid, and the next
// container starts through a new spawner.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, constants as fsConstants, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPerl, ProcessSpawner, type SpawnedProcess, type SpawnerRequest } from '../../src/runtime/process/spawner.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, isAlive, sandboxConfig, tempDir, waitFor } from './helpers.js';

const perl = findPerl();
const skip = perl ? false : 'perl is not installed: the runtime spawns processes itself';

async function withSpawner(
  fn: (spawner: ProcessSpawner, dir: string, request: (argv: string[], over?: Partial<SpawnerRequest>) => SpawnerRequest) => Promise<void>,
) {
  const { dir, cleanup } = tempDir('podvisor-spawner-');
  const spawner = new ProcessSpawner(perl!, silentLogger);
  let n = 0;
  const request = (argv: string[], over: Partial<SpawnerRequest> = {}): SpawnerRequest => {
    const i = n++;
    return {
      file: argv[0]!,
      argv,
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
      stdout: join(dir, `out${i}`),
      stderr: join(dir, `err${i}`),
      cgroupProcs: [],
      ...over,
    };
  };
  try {
    await fn(spawner, dir, request);
  } finally {
    spawner.close();
    cleanup();
  }
}

async function output(p: SpawnedProcess, req: SpawnerRequest): Promise<string> {
  await p.exited;
  return readFileSync(req.stdout, 'utf8');
}

/** Output files must exist before the child opens them read-write (the runtime's are FIFOs). */
function prepared(req: SpawnerRequest): SpawnerRequest {
  writeFileSync(req.stdout, '');
  writeFileSync(req.stderr, '');
  return req;
}

test('exit codes and signals are reported as ChildProcess reports them', { skip }, async () => {
  await withSpawner(async (spawner, _dir, request) => {
    const exit3 = await spawner.spawn(prepared(request(['/bin/sh', '-c', 'exit 3'])));
    assert.deepEqual(await exit3.exited, { code: 3, signal: null });
    const sleeper = await spawner.spawn(prepared(request(['/bin/sleep', '100'])));
    process.kill(sleeper.pid, 'SIGKILL');
    assert.deepEqual(await sleeper.exited, { code: null, signal: 'SIGKILL' });
  });
});

test(
  'a child starts in its own session, stdin /dev/null, output to the given files, no signal blocked or ignored, exactly the given env',
  { skip },
  async () => {
    await withSpawner(async (spawner, _dir, request) => {
      const script = 'cat /proc/$$/stat; readlink /proc/$$/fd/0; echo err >&2; env';
      const req = prepared(request(['/bin/sh', '-c', script], { env: { PATH: '/bin', A: 'x y=z', EMPTY: '' } }));
      const p = await spawner.spawn(req);
      const lines = (await output(p, req)).trim().split('\n');
      const stat = lines[0]!.slice(lines[0]!.lastIndexOf(')') + 2).split(' ');
      assert.equal(Number(stat[2]), p.pid, 'its own process group');
      assert.equal(Number(stat[3]), p.pid, 'its own session');
      assert.equal(lines[1], '/dev/null');
      // The signal mask and ignored set the program is exec'd with, read by the program itself: a
      // shell cannot report its own (dash blocks every signal around each vfork of a command, so
      // a child reading the shell's /proc status may see them all blocked).
      for (let i = 0; i < 20; i++) {
        const own = prepared(request(['/bin/grep', '-E', '^Sig(Blk|Ign)', '/proc/self/status']));
        assert.deepEqual((await output(await spawner.spawn(own), own)).trim().split('\n'), ['SigBlk:\t0000000000000000', 'SigIgn:\t0000000000000000']);
      }
      // dash adds PWD (and nothing else) for itself.
      assert.deepEqual(
        lines
          .slice(2)
          .filter((l) => !l.startsWith('PWD='))
          .sort(),
        ['A=x y=z', 'EMPTY=', 'PATH=/bin'],
      );
      assert.equal(readFileSync(req.stderr, 'utf8'), 'err\n');
    });
  },
);

test('as root, the child runs as the given user and group, with no other group', { skip: skip || (process.getuid?.() !== 0 && 'needs root') }, async () => {
  await withSpawner(async (spawner, _dir, request) => {
    const req = prepared(request(['/bin/sh', '-c', 'id -u; id -g; id -G'], { uid: 65534, gid: 65533, cwd: '/' }));
    const p = await spawner.spawn(req);
    assert.deepEqual((await output(p, req)).trim().split('\n'), ['65534', '65533', '65533']);
  });
});

test('start errors carry the errno spawn would (ENOENT, EACCES, a missing cwd)', { skip }, async () => {
  await withSpawner(async (spawner, dir, request) => {
    const notExec = join(dir, 'not-exec');
    writeFileSync(notExec, '#!/bin/sh\n');
    chmodSync(notExec, 0o644);
    await assert.rejects(spawner.spawn(prepared(request(['/no/such/file']))), { code: 'ENOENT', message: 'spawn /no/such/file ENOENT' });
    await assert.rejects(spawner.spawn(prepared(request([notExec]))), { code: 'EACCES' });
    await assert.rejects(spawner.spawn(prepared(request(['/bin/true'], { cwd: join(dir, 'missing') }))), { code: 'ENOENT' });
    await assert.rejects(spawner.spawn(prepared(request(['/bin/true'], { env: { A: 'a\0b' } }))), { code: 'ERR_INVALID_ARG_VALUE' });
    // And it still starts processes afterwards.
    const ok = await spawner.spawn(prepared(request(['/bin/true'])));
    assert.deepEqual(await ok.exited, { code: 0, signal: null });
  });
});

test('a killed spawner: what it started runs on and settles as lost; the next spawn starts a new spawner', { skip }, async () => {
  await withSpawner(async (spawner, _dir, request) => {
    const sleeper = await spawner.spawn(prepared(request(['/bin/sleep', '100'])));
    const first = spawner.pid!;
    process.kill(first, 'SIGKILL');
    assert.deepEqual(await sleeper.exited, { lost: true });
    assert.ok(isAlive(sleeper.pid), 'the process it started still runs');
    const next = await spawner.spawn(prepared(request(['/bin/sh', '-c', 'exit 4'])));
    assert.notEqual(spawner.pid, first);
    assert.deepEqual(await next.exited, { code: 4, signal: null });
    process.kill(sleeper.pid, 'SIGKILL');
  });
});

/** Pids whose parent is pid. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('a spawner killed in the middle of a start: the start fails as lost, and the half-started child never runs its program', { skip }, async () => {
  await withSpawner(async (spawner, dir, request) => {
    // The child blocks opening this FIFO as a cgroup.procs file, between its fork and its exec.
    const gate = join(dir, 'gate');
    execFileSync('mkfifo', [gate]);
    const marker = join(dir, 'ran');
    const starting = spawner.spawn(prepared(request(['/bin/sh', '-c', `touch ${marker}`], { cgroupProcs: [gate] })));
    const spawnerPid = await waitFor('the spawner running', () => spawner.pid);
    const [child] = await waitFor('the child forked, held at the gate', () => {
      const kids = childrenOf(spawnerPid);
      return kids.length > 0 ? kids : undefined;
    });
    process.kill(spawnerPid, 'SIGKILL');
    await waitFor('the spawner gone', () => !isAlive(spawnerPid));
    const reader = openSync(gate, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    try {
      await assert.rejects(starting, { name: 'SpawnerLostError' });
      await waitFor('the child gone', () => !isAlive(child!));
    } finally {
      closeSync(reader);
    }
    assert.equal(existsSync(marker), false, 'the program never ran');
  });
});

test(
  'the runtime service, its spawner killed: a running container is watched by pid, exits as ContainerStatusUnknown, and new containers start',
  { skip },
  async () => {
    const { dir, cleanup } = tempDir();
    const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, stateDir: join(dir, 'runtime') });
    await rt.restore();
    try {
      const sbc = sandboxConfig(dir);
      const sb = await rt.runPodSandbox(sbc);
      const start = async (name: string, command: string[]) => {
        const id = await rt.createContainer(sb, containerConfig(command, { metadata: { name, attempt: 0 }, logPath: `${name}/0.log` }), sbc);
        await rt.startContainer(id);
        return id;
      };
      const stateOf = (id: string) => JSON.parse(readFileSync(join(dir, 'runtime', 'containers', `${id}.json`), 'utf8')) as { pid: number };
      const first = await start('first', ['sleep', '100']);
      const pid = stateOf(first).pid;
      const spawnerPid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      assert.equal(readFileSync(`/proc/${spawnerPid}/cmdline`, 'utf8').split('\0')[0], 'podvisor-spawner', 'the container is the spawner child');
      process.kill(spawnerPid, 'SIGKILL');
      await waitFor('the spawner gone', () => !isAlive(spawnerPid));
      assert.equal((await rt.containerStatus(first)).state, 'CONTAINER_RUNNING');
      const second = await start('second', ['sh', '-c', 'exit 5']);
      const s2 = await waitFor('the second container exits', async () => {
        const s = await rt.containerStatus(second);
        return s.state === 'CONTAINER_EXITED' ? s : undefined;
      });
      assert.deepEqual([s2.exitCode, s2.reason], [5, 'Error'], 'a new spawner waits for it');
      process.kill(pid, 'SIGKILL');
      const s1 = await waitFor('the first container reported exited', async () => {
        const s = await rt.containerStatus(first);
        return s.state === 'CONTAINER_EXITED' ? s : undefined;
      });
      assert.deepEqual([s1.exitCode, s1.reason], [137, 'ContainerStatusUnknown']);
      assert.match(s1.message, /spawner stopped/);
    } finally {
      await rt.close();
      cleanup();
    }
  },
);
