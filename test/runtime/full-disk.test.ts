// The runtime service on a real, small, full disk (a 20 MB tmpfs filled by a container's own log): the
// service keeps serving and logs the refused output once instead of exiting, refuses new sandboxes
// with a clear error instead of half-making them, and still stops and removes what runs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectOrLaunch } from '../../src/runtime/cri/launch.js';
import { silentLogger } from '../../src/util/logger.js';
import { holdsFor } from '../fixtures/wait.js';
import { containerConfig, isAlive, sandboxConfig, waitFor } from './helpers.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

/** Live processes whose working directory, or any open file, is under dir: what keeps a mount busy. */
function processesUnder(dir: string): number[] {
  const out: number[] = [];
  const under = (link: string): boolean => {
    try {
      return readlinkSync(link).startsWith(dir);
    } catch {
      return false; // gone, or not ours to read
    }
  };
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      // gone, or not ours to read
    }
    if (under(`/proc/${name}/cwd`) || fds.some((fd) => under(`/proc/${name}/fd/${fd}`))) out.push(Number(name));
  }
  return out;
}

test('a full disk: the runtime service keeps serving, refuses new sandboxes clearly, and still stops what runs', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'podvisor-fulldisk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mnt]);
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    t.skip('mounting a tmpfs needs root');
    return;
  }
  const root = join(mnt, 'root');
  mkdirSync(root, { mode: 0o700 });
  const serviceLog = join(root, 'runtime.log');
  const { client, startedPid } = await connectOrLaunch({
    endpoint: `unix://${join(root, 'runtime.sock')}`,
    logger: silentLogger,
    command: [process.execPath, mainJs, 'runtime', 'serve', '--root-dir', root],
    logFile: serviceLog,
  });
  try {
    const sbc = sandboxConfig(root, 'chatty');
    const sb = await client.runPodSandbox(sbc);
    const line = 'x'.repeat(1000);
    const id = await client.createContainer(sb, containerConfig(['sh', '-c', `while :; do echo ${line}; done`]), sbc);
    await client.startContainer(id);
    await waitFor('the disk is full', () => statfsSync(mnt).bavail === 0, 60_000);

    await holdsFor(
      'the service answers on the full disk',
      () =>
        client.version().then(
          () => true,
          () => false,
        ),
      2_000,
    );
    assert.equal(isAlive(startedPid!), true);
    await assert.rejects(client.runPodSandbox(sandboxConfig(root, 'late')), /cannot record the pod sandbox, so it was not created: .*no space left on device/);
    assert.equal((await client.containerStatus(id)).state, 'CONTAINER_RUNNING');
    const drops = readFileSync(serviceLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes('dropping its output'));
    assert.equal(drops.length, 1, 'the refused output is reported once, not per line');

    await client.stopContainer(id, 0);
    await client.removePodSandbox(sb);
    await waitFor('nothing of the pod runs', () => processesUnder(root).every((pid) => pid === startedPid));
    assert.deepEqual(
      (await client.listPodSandbox()).map((s) => s.metadata.name),
      [],
      'the refused sandbox was never made',
    );
  } finally {
    await client.close();
    for (const p of [...processesUnder(mnt), ...(startedPid ? [startedPid] : [])]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await waitFor('nothing holds the tmpfs', () => processesUnder(mnt).length === 0 && !isAlive(startedPid ?? 0));
    // The kernel drops the last references of exited processes to a mount a moment after they are
    // gone (deferred fput/mntput), so an unmount right after them may still find it busy.
    await waitFor('the tmpfs unmounts', () => {
      try {
        execFileSync('umount', [mnt], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    });
    rmSync(mnt, { recursive: true, force: true });
  }
});
