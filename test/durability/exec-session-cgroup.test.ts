// Interactive exec sessions (kubectl exec, attach's sibling) start inside their container's cgroup
// before the command runs, as the container and its exec probes do: the command's /proc/self/cgroup
// is the container's from its first instruction, a child that setsids and is orphaned in that first
// instant dies with the container (with and without a terminal), and a command that cannot be run
// fails with the same words with cgroups as without.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { ProcessRuntime, type ProcessRuntimeOptions } from '../../src/runtime/process/runtime.js';
import { detectCgroupLayout } from '../../src/runtime/process/cgroup.js';
import { startExecSession, onTerminal } from '../../src/runtime/process/exec-session.js';
import { parseStat } from '../../src/runtime/process/proc-tree.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir } from '../runtime/helpers.js';
import { waitFor } from '../fixtures/wait.js';

const cgroupsUsable = process.getuid?.() === 0 && detectCgroupLayout() !== undefined;
const skip = cgroupsUsable ? false : 'needs root and a cgroup hierarchy';

/** Pids of live (non-zombie) processes whose command line contains marker. */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (!readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker)) continue;
      if (parseStat(readFileSync(`/proc/${n}/stat`, 'utf8'))?.state === 'Z') continue;
      out.push(Number(n));
    } catch {
      // gone
    }
  }
  return out;
}

const marker = () => `${randomInt(100_000, 999_999)}.${randomInt(1000, 9999)}`;

async function withContainer(opts: Partial<ProcessRuntimeOptions>, m: string, fn: (rt: ProcessRuntime, id: string, root: string) => Promise<void>) {
  const { dir, cleanup } = tempDir();
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, ...opts });
  try {
    const sbc = sandboxConfig(dir);
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['sleep', m]), sbc);
    await rt.startContainer(id);
    await fn(rt, id, dir);
  } finally {
    await rt.close();
    cleanup();
  }
}

/** Runs cmd as an exec session of the container; resolves with its exit code and stdout. */
async function execSession(rt: ProcessRuntime, id: string, cmd: string[], tty = false): Promise<{ code: number; stdout: string }> {
  const s = startExecSession(rt.containerProcess(id)!, cmd, { stdin: false, stdout: true, stderr: !tty, tty });
  let stdout = '';
  s.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  s.stderr?.resume();
  const code = await s.exit;
  return { code, stdout };
}

test('an exec session runs in the container cgroup from its first instruction', { skip }, async () => {
  const m = marker();
  await withContainer({ cgroups: 'auto' }, m, async (rt, id) => {
    // The container's process once it is `sleep`: before its exec, the shell that starts it inside
    // the cgroup may be between one hierarchy's cgroup.procs and the next.
    const main = await waitFor('the container process to be sleep', () =>
      withMarker(m).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0')),
    );
    const cgroupOf = (text: string) => text.trim().split('\n').sort().join('\n');
    const container = cgroupOf(readFileSync(`/proc/${main}/cgroup`, 'utf8'));
    assert.match(container, /podvisor/);
    const r = await execSession(rt, id, ['cat', '/proc/self/cgroup']);
    assert.equal(r.code, 0);
    assert.equal(cgroupOf(r.stdout), container);
  });
});

test('a child that setsids and is orphaned in the first instant of an exec session dies with the container', { skip }, async () => {
  const m = marker();
  await withContainer({ cgroups: 'auto' }, m, async (rt, id) => {
    // Each orphan leaves the session's process group at once (or is caught in it as the session ends):
    // only the cgroup it was born in still holds it.
    for (let round = 0; round < 20; round++) {
      const r = await execSession(rt, id, ['sh', '-c', `setsid sleep ${m}${round} >/dev/null 2>&1 & true`]);
      assert.equal(r.code, 0);
    }
    const tty = onTerminal('true', []) !== undefined;
    if (tty) {
      const r = await execSession(rt, id, ['sh', '-c', `setsid sleep ${m}99 >/dev/null 2>&1 & true`], true);
      assert.equal(r.code, 0);
    }
    await rt.stopContainer(id, 5);
    assert.deepEqual(withMarker(m), [], "an exec session's setsid child survived the container");
  });
});

test('a command an exec session cannot run fails with the same words with and without cgroups', { skip }, async () => {
  const messages = async (opts: Partial<ProcessRuntimeOptions>) => {
    const out: string[] = [];
    await withContainer(opts, marker(), async (rt, id, root) => {
      const script = join(root, 'not-executable.sh');
      writeFileSync(script, '#!/bin/sh\necho no\n');
      chmodSync(script, 0o644);
      for (const cmd of [['no-such-command-here'], ['/no/such/path'], [script]]) {
        out.push(
          await execSession(rt, id, cmd).then(
            (r) => `exit ${r.code}`,
            (e: Error) => e.message,
          ),
        );
      }
    });
    return out.map((s) => s.replace(/\/tmp\/podvisor-rt-[^/]+\//g, '<root>/'));
  };
  const withCgroups = await messages({ cgroups: 'auto' });
  assert.deepEqual(withCgroups, await messages({ cgroups: false }));
  for (const m of withCgroups) assert.match(m, /^failed to exec in container: /);
});
