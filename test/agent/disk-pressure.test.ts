// The root dir on a real, small file system (a 20 MB tmpfs) filling up, with a threshold given by
// --eviction-hard so the test is deterministic: under it the node reports DiskPressure (and the taint
// a cluster gives it) and new API pods are refused as the kubelet's eviction manager refuses them
// (Failed, Evicted, "The node had condition: [DiskPressure]. "); on a disk with no room at all, API
// writes answer 507 Insufficient Storage and what was stored stays; room made again, pods are admitted;
// an agent started on the full disk says why in one line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { runCli, startCli, stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call } from './helpers.js';

const Mi = 1024 ** 2;

function sleeper(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'busybox', command: ['/bin/sh', '-c', 'exec sleep 300'] }] },
  } as Pod;
}

/** Fills the file system of dir with a file at path until only `leave` bytes are available to it. */
function fillUntil(dir: string, path: string, leave: number): void {
  const s = statfsSync(dir);
  const available = s.bavail * s.bsize;
  if (available > leave) writeFileSync(path, Buffer.alloc(available - leave));
}

/** Fills the file system of dir completely, in pieces, until it refuses. */
function fillCompletely(dir: string, prefix: string): void {
  for (let i = 0; ; i++) {
    try {
      writeFileSync(`${prefix}.${i}`, Buffer.alloc(64 * 1024));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
      throw err;
    }
    if (statfsSync(dir).bavail === 0) break;
  }
}

test('disk pressure on the root dir: the condition, admission refusing with Evicted, 507 on a full disk, nothing stored lost', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'podvisor-diskpressure-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mnt]);
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    t.skip('mounting a tmpfs needs root');
    return;
  }
  const root = join(mnt, 'root');
  const fill = join(mnt, 'fill');
  mkdirSync(fill);
  const sock = join(root, 'podvisor.sock');
  let agent = startCli(['agent', '--root-dir', root, '--eviction-hard', 'nodefs.available<8Mi']);
  try {
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    const status = async () => (await call(sock, 'GET', '/podvisor/v1/status')).json().node as { conditions: string[]; taints: string[] };
    assert.deepEqual(await status(), { conditions: [], taints: [] });
    const before = await call(sock, 'POST', '/api/v1/namespaces/default/pods', sleeper('before'));
    assert.equal(before.status, 201, before.body);
    const cm = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept' },
      data: { a: '1' },
    });
    assert.equal(cm.status, 201, cm.body);
    await waitFor(
      'the first pod running',
      async () => (await call(sock, 'GET', '/api/v1/namespaces/default/pods/before')).json().status?.containerStatuses?.[0]?.state?.running,
      60_000,
    );

    // Below the threshold: DiskPressure, and a new pod refused as the kubelet refuses it.
    fillUntil(mnt, join(fill, 'big'), 4 * Mi);
    assert.deepEqual(await status(), { conditions: ['DiskPressure'], taints: ['node.kubernetes.io/disk-pressure:NoSchedule'] });
    const refused = await call(sock, 'POST', '/api/v1/namespaces/default/pods', sleeper('refused'));
    assert.equal(refused.status, 201, refused.body);
    const failed = await waitFor(
      'the refused pod Failed',
      async () => {
        const p: Pod = (await call(sock, 'GET', '/api/v1/namespaces/default/pods/refused')).json();
        return p.status?.phase === 'Failed' && p;
      },
      30_000,
    );
    assert.equal(failed.status?.reason, 'Evicted');
    assert.equal(failed.status?.message, 'Pod was rejected: The node had condition: [DiskPressure]. ');
    assert.equal(failed.status?.containerStatuses?.[0]?.state?.running, undefined);
    const events = (await call(sock, 'GET', '/api/v1/namespaces/default/events')).json().items as Array<{
      reason: string;
      type: string;
      involvedObject: { name: string };
    }>;
    assert.ok(
      events.some((e) => e.involvedObject.name === 'refused' && e.reason === 'Evicted' && e.type === 'Warning'),
      'a Warning Evicted event',
    );

    // No room at all: API writes answer 507 and name what was not stored; what was stored stays.
    fillCompletely(mnt, join(fill, 'rest'));
    const full = await call(sock, 'POST', '/api/v1/namespaces/default/pods', sleeper('full'));
    assert.equal(full.status, 507, full.body);
    assert.equal(full.json().reason, 'InsufficientStorage');
    assert.match(full.json().message, /^pods "full" was not stored: no space left on the file system of the agent's root dir/);
    const cm2 = await call(sock, 'PUT', '/api/v1/namespaces/default/configmaps/kept', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept', namespace: 'default' },
      data: { a: '2'.repeat(64 * 1024) },
    });
    assert.equal(cm2.status, 507, cm2.body);
    assert.equal((await call(sock, 'GET', '/api/v1/namespaces/default/configmaps/kept')).json().data.a, '1');
    assert.equal((await call(sock, 'GET', '/api/v1/namespaces/default/pods/full')).status, 404);
    const names = ((await call(sock, 'GET', '/api/v1/pods')).json().items as Pod[]).map((p) => p.metadata?.name).sort();
    assert.deepEqual(names, ['before', 'refused']);
    for (const f of readdirSync(join(root, 'api-pods')).filter((n) => n.endsWith('.json'))) {
      assert.doesNotThrow(() => JSON.parse(readFileSync(join(root, 'api-pods', f), 'utf8')), `${f} is whole`);
    }

    // An agent started on the full disk says why in one line.
    agent.child.kill('SIGKILL');
    await agent.exited;
    const second = await runCli(['agent', '--root-dir', root], 60_000);
    assert.notEqual(second.code, 0);
    assert.match(second.stderr.trim(), /^[^\n]*cannot take the lock of root dir .*no space left on device[^\n]*$/);

    // Room made again: no pressure, pods admitted.
    rmSync(fill, { recursive: true, force: true });
    agent = startCli(['agent', '--root-dir', root, '--eviction-hard', 'nodefs.available<8Mi']);
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    assert.deepEqual(await status(), { conditions: [], taints: [] });
    const after = await call(sock, 'POST', '/api/v1/namespaces/default/pods', sleeper('after'));
    assert.equal(after.status, 201, after.body);
    await waitFor(
      'the pod applied after the disk was freed running',
      async () => (await call(sock, 'GET', '/api/v1/namespaces/default/pods/after')).json().status?.containerStatuses?.[0]?.state?.running,
      60_000,
    );
    const down = await runCli(['down', '--all', '--grace-period', '0', '--root-dir', root]);
    assert.equal(down.code, 0, down.stderr);
  } finally {
    agent.child.kill('SIGKILL');
    await agent.exited;
    await stopRuntimeServices(mnt);
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
