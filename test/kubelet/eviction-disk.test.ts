// Eviction on a real, small file system: the agent's root dir on a 20 MB tmpfs, one pod writing its
// log without end and one quiet pod. The eviction manager evicts the log-heavy pod (Failed, Evicted,
// upstream's message), the quiet one runs on, the agent keeps serving, the evicted pod's container
// and log are reclaimed so the disk recovers, DiskPressure clears after the transition period and a
// new pod is admitted again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Event, Pod } from '../../src/api/types.js';
import { startCli, stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call, shellPod } from '../agent/helpers.js';

const Mi = 1024 ** 2;

test('a log-heavy pod on a 20 MB root dir is evicted; the agent and the quiet pod live on and the disk recovers', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'podvisor-eviction-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mnt]);
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    t.skip('mounting a tmpfs needs root');
    return;
  }
  const root = join(mnt, 'root');
  const sock = join(root, 'podvisor.sock');
  const available = () => {
    const s = statfsSync(mnt);
    return s.bavail * s.bsize;
  };
  const agent = startCli(['agent', '--root-dir', root, '--eviction-hard', 'nodefs.available<6Mi', '--eviction-pressure-transition-period', '3s']);
  try {
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    const getPod = async (name: string): Promise<Pod> => (await call(sock, 'GET', `/api/v1/namespaces/default/pods/${name}`)).json();
    const conditions = async () => (await call(sock, 'GET', '/podvisor/v1/status')).json().node.conditions as string[];
    for (const p of [shellPod('quiet', 'exec sleep 300'), shellPod('noisy', `while :; do echo ${'x'.repeat(1000)}; done`)]) {
      const r = await call(sock, 'POST', '/api/v1/namespaces/default/pods', p);
      assert.equal(r.status, 201, r.body);
    }
    await waitFor(
      'both pods running',
      async () => (await getPod('quiet')).status?.phase === 'Running' && (await getPod('noisy')).status?.phase === 'Running',
      60_000,
    );

    const noisy = await waitFor(
      'the log-heavy pod evicted',
      async () => {
        const p = await getPod('noisy');
        return p.status?.phase === 'Failed' && p;
      },
      90_000,
    );
    const low = available();
    assert.equal(noisy.status?.reason, 'Evicted');
    assert.match(
      noisy.status?.message ?? '',
      /^The node was low on resource: ephemeral-storage\. Threshold quantity: 6Mi, available: \d+(Ki|Mi)?\. Container main was using \d+(Ki|Mi)?, request is 0, has larger consumption of ephemeral-storage\. $/,
    );
    assert.equal(noisy.metadata?.deletionTimestamp, undefined, 'an evicted pod stays, Failed, until deleted');
    assert.equal(noisy.status?.conditions?.find((c) => c.type === 'DisruptionTarget')?.reason, 'TerminationByKubelet');
    const events = (await call(sock, 'GET', '/api/v1/namespaces/default/events')).json().items as Event[];
    assert.ok(
      events.some((e) => e.involvedObject.name === 'noisy' && e.reason === 'Evicted' && e.type === 'Warning'),
      'a Warning Evicted event',
    );

    // The evicted pod's container and log are reclaimed: the disk recovers.
    await waitFor('the disk recovered', () => available() > 10 * Mi, 60_000);
    const quiet = await getPod('quiet');
    assert.equal(quiet.status?.phase, 'Running');
    assert.ok(quiet.status?.containerStatuses?.[0]?.state?.running, 'the quiet pod runs on');
    await waitFor('DiskPressure cleared after the transition period', async () => (await conditions()).length === 0, 60_000);

    const after = await call(sock, 'POST', '/api/v1/namespaces/default/pods', shellPod('after', 'exec sleep 300'));
    assert.equal(after.status, 201, after.body);
    await waitFor('a pod applied after the recovery running', async () => (await getPod('after')).status?.containerStatuses?.[0]?.state?.running, 60_000);
    t.diagnostic(`available when evicted: ${(low / Mi).toFixed(1)} MiB; after: ${(available() / Mi).toFixed(1)} MiB`);
  } finally {
    agent.child.kill('SIGKILL');
    await agent.exited;
    await stopRuntimeServices(mnt);
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
