// The process runtime with real host processes: exit codes and reasons, stop with grace period and
// stop signal, process-group cleanup, start errors, env and working directory, events and listing.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { DEFAULT_PATH, readPasswd } from '../../src/runtime/process/identity.js';
import { NotFoundError, type ContainerEvent } from '../../src/runtime/cri.js';
import { FakeClock, RealClock, type Clock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, isAlive, readPid, sandboxConfig, tempDir, waitFor } from './helpers.js';

/** HOME as runc sets it: the user's passwd entry, `/` without one. */
const homeOf = (uid: number) => readPasswd().find((p) => p.uid === uid)?.home || '/';

type WithRuntime = (fn: (rt: ProcessRuntime, root: string, clock: Clock) => Promise<void>, clock?: Clock) => Promise<void>;

/**
 * Each case runs on both faces of the runtime: in memory (the agent's own, processes spawned by
 * Node) and durable (the runtime service's: state on disk, output through FIFOs, processes started
 * by the spawner where perl is installed).
 */
const MODES = [
  { label: 'in memory', stateDir: (): string | undefined => undefined },
  { label: 'durable', stateDir: (root: string): string | undefined => join(root, 'runtime') },
];

function withRuntimeIn(mode: (typeof MODES)[number]): WithRuntime {
  return async (fn, clock = new RealClock()) => {
    const { dir, cleanup } = tempDir();
    const stateDir = mode.stateDir(dir);
    const rt = new ProcessRuntime({ rootDir: dir, clock, logger: silentLogger, ...(stateDir ? { stateDir } : {}) });
    if (stateDir) await rt.restore();
    try {
      await fn(rt, dir, clock);
    } finally {
      await rt.close();
      cleanup();
    }
  };
}

/** A test case run once per mode. */
function eachMode(name: string, fn: (t: TestContext, withRuntime: WithRuntime) => Promise<void>): void {
  for (const mode of MODES) test(`${name} (${mode.label})`, (t) => fn(t, withRuntimeIn(mode)));
}

async function runToExit(rt: ProcessRuntime, root: string, command: string[]) {
  const sbc = sandboxConfig(root);
  const sb = await rt.runPodSandbox(sbc);
  const id = await rt.createContainer(sb, containerConfig(command), sbc);
  await rt.startContainer(id);
  return waitFor('container exit', async () => {
    const s = await rt.containerStatus(id);
    return s.state === 'CONTAINER_EXITED' ? s : undefined;
  });
}

eachMode('exit codes and reasons', async (t, withRuntime) => {
  const cases: Array<{ name: string; script: string; exitCode: number; reason: string }> = [
    { name: 'exit 0', script: 'exit 0', exitCode: 0, reason: 'Completed' },
    { name: 'exit 3', script: 'exit 3', exitCode: 3, reason: 'Error' },
    { name: 'killed by SIGKILL', script: 'kill -KILL $$', exitCode: 137, reason: 'Error' },
    { name: 'killed by SIGTERM', script: 'kill -TERM $$', exitCode: 143, reason: 'Error' },
  ];
  await withRuntime(async (rt, root) => {
    for (const c of cases) {
      await t.test(c.name, async () => {
        const s = await runToExit(rt, root, ['sh', '-c', c.script]);
        assert.equal(s.exitCode, c.exitCode);
        assert.equal(s.reason, c.reason);
        assert.ok(s.startedAt > 0 && s.finishedAt >= s.startedAt);
      });
    }
  });
});

eachMode('stop: a SIGTERM-handling process exits 0', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const ready = join(root, 'ready');
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `trap 'exit 0' TERM; touch ${ready}; while :; do sleep 0.05; done`]), sbc);
    await rt.startContainer(id);
    await waitFor('trap installed', () => existsSync(ready));
    await rt.stopContainer(id, 30);
    const s = await rt.containerStatus(id);
    assert.equal(s.state, 'CONTAINER_EXITED');
    assert.equal(s.exitCode, 0);
    assert.equal(s.reason, 'Completed');
  });
});

eachMode('stop: a SIGTERM-ignoring process is SIGKILLed after its grace period', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const pidfile = join(root, 'pid');
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `trap "" TERM; echo $$ > ${pidfile}; sleep 100`]), sbc);
    await rt.startContainer(id);
    const pid = await readPid(pidfile);
    await rt.stopContainer(id, 1);
    const s = await rt.containerStatus(id);
    assert.equal(s.exitCode, 137);
    assert.equal(s.reason, 'Error');
    assert.equal(isAlive(pid), false);
  });
});

eachMode('stop: the grace period runs on the injected clock', async (_t, withRuntime) => {
  const clock = new FakeClock();
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const got = join(root, 'got-term');
    const ready = join(root, 'ready');
    const script = `trap 'echo term >> ${got}' TERM; touch ${ready}; while :; do sleep 0.05; done`;
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', script]), sbc);
    await rt.startContainer(id);
    await waitFor('trap installed', () => existsSync(ready));
    let stopped = false;
    const stopping = rt.stopContainer(id, 30).then(() => (stopped = true));
    await waitFor('SIGTERM delivered', () => existsSync(got));
    await clock.advance(29_000);
    assert.equal(stopped, false);
    assert.equal((await rt.containerStatus(id)).state, 'CONTAINER_RUNNING');
    await clock.advance(1_000);
    await stopping;
    const s = await rt.containerStatus(id);
    assert.equal(s.exitCode, 137);
    assert.equal(s.finishedAt, clock.now());
  }, clock);
});

eachMode('stop: timeout 0 kills at once', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', 'trap "" TERM; sleep 100']), sbc);
    await rt.startContainer(id);
    await rt.stopContainer(id, 0);
    assert.equal((await rt.containerStatus(id)).exitCode, 137);
    // Stopping an exited container is a no-op.
    await rt.stopContainer(id, 0);
  });
});

eachMode('stop: lifecycle.stopSignal replaces SIGTERM', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const marker = join(root, 'usr1');
    const ready = join(root, 'ready');
    const script = `trap 'echo usr1 > ${marker}; exit 0' USR1; trap '' TERM; touch ${ready}; while :; do sleep 0.05; done`;
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', script], { stopSignal: 'SIGUSR1' }), sbc);
    await rt.startContainer(id);
    await waitFor('trap installed', () => existsSync(ready));
    await rt.stopContainer(id, 30);
    assert.equal(readFileSync(marker, 'utf8').trim(), 'usr1');
    assert.equal((await rt.containerStatus(id)).exitCode, 0);
  });
});

eachMode('no process of a container outlives its main process', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const pidfile = join(root, 'child');
    const s = await runToExit(rt, root, ['sh', '-c', `sleep 300 & echo $! > ${pidfile}; exit 0`]);
    assert.equal(s.exitCode, 0);
    const child = await readPid(pidfile);
    await waitFor('background child killed', () => !isAlive(child));
  });
});

eachMode('stop kills every process of the group', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const pidfile = join(root, 'child');
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `sleep 300 & echo $! > ${pidfile}; wait`]), sbc);
    await rt.startContainer(id);
    const child = await readPid(pidfile);
    await rt.stopContainer(id, 5);
    await waitFor('child killed', () => !isAlive(child));
  });
});

eachMode('start errors: the container exits 128 with StartError and a containerd-like message', async (t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const notExec = join(root, 'not-executable');
    writeFileSync(notExec, '#!/bin/sh\nexit 0\n');
    chmodSync(notExec, 0o644);
    const notProgram = join(root, 'not-a-program');
    writeFileSync(notProgram, 'exit 0\n');
    chmodSync(notProgram, 0o755);
    const cases = [
      { name: 'not a program (no #! line)', command: [notProgram], over: {}, message: `exec: "${notProgram}": exec format error` },
      { name: 'not in PATH', command: ['nosuchcmd'], over: {}, message: 'exec: "nosuchcmd": executable file not found in $PATH' },
      {
        name: 'missing path',
        command: ['/no/such/bin'],
        over: {},
        message: 'exec: "/no/such/bin": stat /no/such/bin: no such file or directory',
      },
      { name: 'not executable', command: [notExec], over: {}, message: `exec: "${notExec}": permission denied` },
      {
        name: 'missing working dir',
        command: ['true'],
        over: { workingDir: '/no/such/dir' },
        message: 'chdir to workingDir "/no/such/dir" failed: no such file or directory',
      },
    ];
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    for (const c of cases) {
      await t.test(c.name, async () => {
        const id = await rt.createContainer(sb, containerConfig(c.command, c.over), sbc);
        await assert.rejects(rt.startContainer(id), { message: c.message });
        const s = await rt.containerStatus(id);
        assert.equal(s.state, 'CONTAINER_EXITED');
        assert.equal(s.exitCode, 128);
        assert.equal(s.reason, 'StartError');
        assert.equal(s.message, c.message);
        assert.equal(s.startedAt, 0);
      });
    }
  });
});

eachMode(
  "env: exactly the config envs, plus containerd's default PATH, the passwd HOME and the sandbox's HOSTNAME when the config sets none",
  async (t, withRuntime) => {
    await withRuntime(async (rt, root) => {
      const sbc = sandboxConfig(root);
      const sb = await rt.runPodSandbox(sbc);
      let n = 0;
      const readEnv = async (envs: Array<{ key: string; value: string }>) => {
        const metadata = { name: `env${n++}`, attempt: 0 };
        const id = await rt.createContainer(sb, containerConfig(['/usr/bin/env'], { envs, metadata, logPath: `${metadata.name}/0.log` }), sbc);
        await rt.startContainer(id);
        await waitFor('exit', async () => (await rt.containerStatus(id)).state === 'CONTAINER_EXITED');
        const logPath = (await rt.containerStatus(id)).logPath;
        const lines = readFileSync(logPath, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(' ').slice(3).join(' '));
        return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      };
      await t.test('without PATH', async () => {
        const env = await readEnv([
          { key: 'HOSTNAME', value: 'web' },
          { key: 'A', value: 'x y' },
          { key: 'A', value: 'last wins' },
        ]);
        assert.deepEqual(env, { HOSTNAME: 'web', A: 'last wins', PATH: DEFAULT_PATH, HOME: homeOf(process.getuid!()) });
      });
      await t.test('with PATH', async () => {
        const env = await readEnv([
          { key: 'PATH', value: '/bin:/usr/bin' },
          { key: 'HOME', value: '/h' },
        ]);
        assert.deepEqual(env, { PATH: '/bin:/usr/bin', HOME: '/h', HOSTNAME: sbc.hostname });
      });
    });
  },
);

eachMode('working dir: the sandbox dir by default, else the configured one', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root, 'wd', 'uid-wd');
    const sb = await rt.runPodSandbox(sbc);
    let n = 0;
    const pwd = async (workingDir: string) => {
      const metadata = { name: `pwd${n++}`, attempt: 0 };
      const id = await rt.createContainer(sb, containerConfig(['sh', '-c', 'pwd'], { workingDir, metadata, logPath: `${metadata.name}/0.log` }), sbc);
      await rt.startContainer(id);
      const s = await waitFor('exit', async () => {
        const st = await rt.containerStatus(id);
        return st.state === 'CONTAINER_EXITED' ? st : undefined;
      });
      return readFileSync(s.logPath, 'utf8').trim().split(' ').slice(3).join(' ');
    };
    assert.equal(await pwd(''), join(root, 'sandboxes', 'uid-wd'));
    assert.equal(await pwd('/tmp'), '/tmp');
  });
});

eachMode('events follow each state change, in order', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const events: ContainerEvent[] = [];
    const off = rt.onContainerEvent((e) => events.push(e));
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', 'exit 0']), sbc);
    await rt.startContainer(id);
    await waitFor('stopped event', () => events.some((e) => e.type === 'CONTAINER_STOPPED_EVENT'));
    assert.equal((await rt.containerStatus(id)).state, 'CONTAINER_EXITED');
    await rt.removeContainer(id);
    off();
    assert.deepEqual(
      events.map((e) => e.type),
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT', 'CONTAINER_DELETED_EVENT'],
    );
    assert.ok(events.every((e) => e.containerId === id && e.podSandboxId === sb));
    await assert.rejects(rt.containerStatus(id), NotFoundError);
  });
});

eachMode('timestamps come from the injected clock; ids are 64 hex; imageRef names the image', async (_t, withRuntime) => {
  const clock = new FakeClock(Date.UTC(2026, 11, 2, 12, 0, 0));
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sleep', '100']), sbc);
    assert.match(id, /^[0-9a-f]{64}$/);
    const created = await rt.containerStatus(id);
    assert.equal(created.createdAt, clock.now());
    assert.equal(created.state, 'CONTAINER_CREATED');
    assert.equal(created.imageRef, 'process://busybox');
    await clock.advance(5000);
    await rt.startContainer(id);
    assert.equal((await rt.containerStatus(id)).startedAt, Date.UTC(2026, 11, 2, 12, 0, 5));
    const sandbox = await rt.podSandboxStatus(sb);
    assert.equal(sandbox.network.ip, '127.0.0.1');
    assert.equal(sandbox.state, 'SANDBOX_READY');
  }, clock);
});

eachMode('list, filters, start twice, unknown ids', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const a = sandboxConfig(root, 'a');
    const b = sandboxConfig(root, 'b');
    const sa = await rt.runPodSandbox(a);
    const sbId = await rt.runPodSandbox(b);
    const c1 = await rt.createContainer(sa, containerConfig(['sleep', '100']), a);
    const c2 = await rt.createContainer(sbId, containerConfig(['sleep', '100']), b);
    await rt.startContainer(c1);
    await assert.rejects(rt.startContainer(c1), /only a created container can be started/);
    assert.deepEqual(
      (await rt.listContainers()).map((c) => c.id),
      [c1, c2],
    );
    assert.deepEqual(
      (await rt.listContainers({ podSandboxId: sbId })).map((c) => c.id),
      [c2],
    );
    assert.deepEqual(
      (await rt.listContainers({ state: 'CONTAINER_RUNNING' })).map((c) => c.id),
      [c1],
    );
    await assert.rejects(rt.startContainer('nope'), NotFoundError);
    await assert.rejects(rt.stopContainer('nope', 0), NotFoundError);
    await assert.rejects(rt.podSandboxStatus('nope'), NotFoundError);
  });
});

test('stopPodSandbox kills every container of the sandbox; close kills the rest', async () => {
  const { dir, cleanup } = tempDir();
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger });
  try {
    const a = sandboxConfig(dir, 'a');
    const b = sandboxConfig(dir, 'b');
    const sa = await rt.runPodSandbox(a);
    const sb = await rt.runPodSandbox(b);
    const ids = [
      await rt.createContainer(sa, containerConfig(['sh', '-c', 'trap "" TERM; sleep 100'], { metadata: { name: 'x', attempt: 0 } }), a),
      await rt.createContainer(sa, containerConfig(['sleep', '100'], { metadata: { name: 'y', attempt: 0 } }), a),
      await rt.createContainer(sb, containerConfig(['sleep', '100']), b),
    ];
    for (const id of ids) await rt.startContainer(id);
    await rt.stopPodSandbox(sa);
    assert.equal((await rt.podSandboxStatus(sa)).state, 'SANDBOX_NOTREADY');
    assert.deepEqual(
      (await rt.listContainers({ podSandboxId: sa })).map((c) => [c.state, c.exitCode]),
      [
        ['CONTAINER_EXITED', 137],
        ['CONTAINER_EXITED', 137],
      ],
    );
    assert.equal((await rt.containerStatus(ids[2]!)).state, 'CONTAINER_RUNNING');
    await rt.stopPodSandbox(sa); // idempotent
    await rt.close();
    assert.equal((await rt.containerStatus(ids[2]!)).state, 'CONTAINER_EXITED');
    await rt.removePodSandbox(sa);
    await assert.rejects(rt.podSandboxStatus(sa), NotFoundError);
    assert.equal((await rt.listContainers({ podSandboxId: sa })).length, 0);
  } finally {
    await rt.close();
    cleanup();
  }
});

eachMode('removeContainer stops a running container first', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const sbc = sandboxConfig(root);
    const sb = await rt.runPodSandbox(sbc);
    const pidfile = join(root, 'pid');
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `echo $$ > ${pidfile}; exec sleep 100`]), sbc);
    await rt.startContainer(id);
    const pid = await readPid(pidfile);
    await rt.removeContainer(id);
    assert.equal(isAlive(pid), false);
    assert.equal((await rt.listContainers()).length, 0);
  });
});

eachMode('onContainerOutput: each line as it is written, with its stream', async (_t, withRuntime) => {
  await withRuntime(async (rt, root) => {
    const seen: Array<[string, string, string]> = [];
    const off = rt.onContainerOutput((id, stream, line) => seen.push([id, stream, line]));
    const s = await runToExit(rt, root, ['sh', '-c', 'echo one; echo two >&2; printf three']);
    off();
    const mine = seen.filter(([id]) => id === s.id).map(([, stream, line]) => `${stream}:${line}`);
    assert.deepEqual(mine.sort(), ['stderr:two', 'stdout:one', 'stdout:three']);
  });
});
