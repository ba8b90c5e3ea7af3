// Process-group teardown: a group whose members are all zombies counts as stopped (an orphan's
// reaping is init's business and may come late), and a container that forks children which ignore
// SIGTERM is torn down completely, in both the in-memory and the durable (FIFO output) modes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupHasLiveMember, signalGroup, waitGroupGone } from '../../src/runtime/process/process-group.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, readPid, sandboxConfig, tempDir, waitFor } from './helpers.js';

/** Pids of the group's members that are not zombies. */
function liveMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid && f[0] !== 'Z') out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

test('a process group of zombies counts as stopped', async () => {
  // The parent forks a child that leads its own group and exits; the parent never reaps it.
  const parent = spawn('perl', ['-e', '$|=1; my $p = fork(); if ($p == 0) { setpgrp(0, 0); exit 0 } print "$p\\n"; sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const zombie = await new Promise<number>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    await waitFor('the child is a zombie', () => {
      try {
        return readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z ');
      } catch {
        return false;
      }
    });
    assert.equal(signalGroup(zombie, 0), true, 'the group still answers signals');
    assert.equal(groupHasLiveMember(zombie), false);
    assert.equal(await waitGroupGone(zombie, 5_000), true, 'teardown does not wait for the reaper');
  } finally {
    parent.kill('SIGKILL');
  }
});

for (const durable of [false, true]) {
  test(`teardown of a forking container whose children ignore SIGTERM (${durable ? 'durable, FIFO output' : 'in memory'})`, async () => {
    const { dir, cleanup } = tempDir();
    const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, ...(durable ? { stateDir: join(dir, 'runtime') } : {}) });
    if (durable) await rt.restore();
    try {
      const sbc = sandboxConfig(dir);
      const sb = await rt.runPodSandbox(sbc);
      const pidFile = join(dir, 'pid');
      const id = await rt.createContainer(
        sb,
        containerConfig(['sh', '-c', `trap '' TERM; for i in 1 2 3; do (trap '' TERM; echo child $i; sleep 100) & done; echo $$ > ${pidFile}; wait`]),
        sbc,
      );
      await rt.startContainer(id);
      const pgid = await readPid(pidFile);
      await waitFor('main process and three children', () => liveMembers(pgid).length >= 4);
      await rt.stopContainer(id, 1);
      const st = await rt.containerStatus(id);
      assert.deepEqual([st.state, st.exitCode], ['CONTAINER_EXITED', 137]);
      assert.deepEqual(liveMembers(pgid), [], 'no process of the container is left');
      const log = readFileSync(st.logPath, 'utf8');
      for (const i of [1, 2, 3]) assert.match(log, new RegExp(`stdout F child ${i}\\n`));
      await rt.removePodSandbox(sb);
    } finally {
      await rt.close();
      cleanup();
    }
  });
}
