// Housekeeping collects the directories of pods that are gone (the kubelet's cleanupOrphanedPodDirs
// and its log GC): pods applied and deleted leave no sandbox or log directory behind, a pod that
// still runs keeps both, and a directory left by an earlier agent for an unknown pod is removed too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { runCli, startCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call } from './helpers.js';

const sock = (root: string) => join(root, 'podvisor.sock');

function sleeper(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'main', image: 'busybox', command: ['/bin/sh', '-c', 'echo hello; exec sleep 300'] }] },
  } as Pod;
}

const list = (dir: string) => {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
};

test('the sandbox and log directories of deleted pods are removed; those of a live pod stay', async () => {
  const dir = await tempDir('podvisor-podgc-');
  const root = join(dir.path, 'root');
  // Left by an earlier agent for a pod nobody knows any more.
  const strayUid = '0b7e2e4c-0000-4000-8000-000000000001';
  mkdirSync(join(root, 'sandboxes', strayUid), { recursive: true, mode: 0o700 });
  mkdirSync(join(root, 'pods', `default_stray_${strayUid}`, 'main'), { recursive: true });
  writeFileSync(join(root, 'pods', `default_stray_${strayUid}`, 'main', '0.log'), 'old\n');
  const agent = startCli(['agent', '--root-dir', root]);
  try {
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    for (const name of ['keep', 'a', 'b', 'c', 'd']) {
      const r = await call(sock(root), 'POST', '/api/v1/namespaces/default/pods', sleeper(name));
      assert.equal(r.status, 201, r.body);
    }
    const running = await waitFor(
      'five pods running',
      async () => {
        const items: Pod[] = (await call(sock(root), 'GET', '/api/v1/pods')).json().items;
        return items.length === 5 && items.every((p) => p.status?.containerStatuses?.[0]?.state?.running) && items;
      },
      60_000,
    );
    const keepUid = running.find((p) => p.metadata?.name === 'keep')!.metadata!.uid!;
    for (const name of ['a', 'b', 'c', 'd']) {
      const r = await call(sock(root), 'DELETE', `/api/v1/namespaces/default/pods/${name}?gracePeriodSeconds=0`);
      assert.equal(r.status, 200, r.body);
    }
    await waitFor(
      () => `only the live pod's directories: sandboxes ${JSON.stringify(list(join(root, 'sandboxes')))}, pods ${JSON.stringify(list(join(root, 'pods')))}`,
      () => list(join(root, 'sandboxes')).join() === keepUid && list(join(root, 'pods')).join() === `default_keep_${keepUid}`,
      30_000,
    );
    assert.deepEqual(list(join(root, 'pods', `default_keep_${keepUid}`, 'main')), ['0.log'], "the live pod's log stays");
    const down = await runCli(['down', '--all', '--grace-period', '0', '--root-dir', root]);
    assert.equal(down.code, 0, down.stderr);
    await waitFor('no directory left once every pod is gone', () => list(join(root, 'sandboxes')).length + list(join(root, 'pods')).length === 0, 30_000);
  } finally {
    agent.child.kill('SIGKILL');
    await agent.exited;
    await stopRuntimeServices(dir.path);
    await dir.remove();
  }
});
