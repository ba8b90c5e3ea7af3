// ExecSync of the process runtime with real processes: exit codes and output, the container's env and
// working dir, the timeout on the injected clock, output caps and the errors CRI returns.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { EXEC_OUTPUT_CAP_BYTES } from '../../src/runtime/process/exec.js';
import { NotFoundError } from '../../src/runtime/cri.js';
import { FakeClock, RealClock, type Clock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, isAlive, readPid, sandboxConfig, tempDir, waitFor } from './helpers.js';

async function withContainer(fn: (ctx: { rt: ProcessRuntime; id: string; root: string }) => Promise<void>, clock: Clock = new RealClock()) {
  const { dir, cleanup } = tempDir();
  const rt = new ProcessRuntime({ rootDir: dir, clock, logger: silentLogger });
  try {
    const sbc = sandboxConfig(dir, 'ex', 'uid-ex');
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sleep', '300'], { envs: [{ key: 'GREETING', value: 'hello' }] }), sbc);
    await rt.startContainer(id);
    await fn({ rt, id, root: dir });
  } finally {
    await rt.close();
    cleanup();
  }
}

test('exec: exit codes and output', async (t) => {
  const cases = [
    { name: 'success', cmd: ['sh', '-c', 'echo ok'], exitCode: 0, stdout: 'ok\n', stderr: '' },
    { name: 'failure', cmd: ['sh', '-c', 'echo bad >&2; exit 3'], exitCode: 3, stdout: '', stderr: 'bad\n' },
    { name: 'both streams', cmd: ['sh', '-c', 'echo out; echo err >&2; exit 1'], exitCode: 1, stdout: 'out\n', stderr: 'err\n' },
    { name: 'killed by a signal', cmd: ['sh', '-c', 'kill -KILL $$'], exitCode: 137, stdout: '', stderr: '' },
  ];
  await withContainer(async ({ rt, id }) => {
    for (const c of cases) {
      await t.test(c.name, async () => {
        const r = await rt.execSync(id, c.cmd, 10);
        assert.equal(r.exitCode, c.exitCode);
        assert.equal(r.stdout.toString(), c.stdout);
        assert.equal(r.stderr.toString(), c.stderr);
        assert.equal(r.timedOut, false);
      });
    }
  });
});

test('exec: runs with the container env and working directory', async () => {
  await withContainer(async ({ rt, id, root }) => {
    const r = await rt.execSync(id, ['sh', '-c', 'echo "$GREETING"; pwd'], 10);
    assert.equal(r.stdout.toString(), `hello\n${join(root, 'sandboxes', 'uid-ex')}\n`);
  });
});

test('exec: the timeout (on the injected clock) kills the command group and reports timedOut', async () => {
  const clock = new FakeClock();
  await withContainer(async ({ rt, id, root }) => {
    const pidfile = join(root, 'exec-child');
    let settled = false;
    const pending = rt.execSync(id, ['sh', '-c', `sleep 300 & echo $! > ${pidfile}; wait`], 2).finally(() => (settled = true));
    const child = await readPid(pidfile);
    await clock.advance(1000);
    assert.equal(settled, false);
    await clock.advance(1000);
    const r = await pending;
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, 137);
    await waitFor('exec child killed', () => !isAlive(child));
  }, clock);
});

test('exec: output is capped per stream', async () => {
  await withContainer(async ({ rt, id }) => {
    const r = await rt.execSync(id, ['sh', '-c', 'head -c 100000 /dev/zero; head -c 20000 /dev/zero >&2'], 10);
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout.length, EXEC_OUTPUT_CAP_BYTES);
    assert.equal(r.stderr.length, EXEC_OUTPUT_CAP_BYTES);
  });
});

test('exec: errors as CRI returns them', async () => {
  await withContainer(async ({ rt, id }) => {
    await assert.rejects(rt.execSync(id, ['nosuchcmd'], 1), {
      message: 'failed to exec in container: exec: "nosuchcmd": executable file not found in $PATH',
    });
    await assert.rejects(rt.execSync('unknown', ['true'], 1), NotFoundError);
    await rt.stopContainer(id, 0);
    await assert.rejects(rt.execSync(id, ['true'], 1), { message: 'container not running' });
  });
});

test('exec: a process left behind by an exec dies with its container', async () => {
  await withContainer(async ({ rt, id, root }) => {
    const pidfile = join(root, 'left');
    // The background sleep keeps no pipe open, so the exec returns while it lives on.
    const r = await rt.execSync(id, ['sh', '-c', `sleep 300 >/dev/null 2>&1 & echo $! > ${pidfile}`], 10);
    assert.equal(r.exitCode, 0);
    const left = await readPid(pidfile);
    assert.equal(isAlive(left), true);
    await rt.stopContainer(id, 0);
    await waitFor('left-behind exec process killed', () => !isAlive(left));
  });
});

test('exec: many concurrent execs all complete', async () => {
  await withContainer(async ({ rt, id }) => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => rt.execSync(id, ['sh', '-c', `exit ${i % 3}`], 10)));
    assert.deepEqual(
      results.map((r) => r.exitCode),
      Array.from({ length: 50 }, (_, i) => i % 3),
    );
  });
});

test('exec: a command still running when its container exits is killed with the container', async () => {
  await withContainer(async ({ rt, id, root }) => {
    const pidFile = join(root, 'exec.pid');
    const pending = rt.execSync(id, ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 300`], 0);
    const pid = await readPid(pidFile);
    await rt.stopContainer(id, 0);
    const r = await pending;
    assert.equal(r.exitCode, 137);
    await waitFor('the exec process to be gone', () => !isAlive(pid));
  });
});
