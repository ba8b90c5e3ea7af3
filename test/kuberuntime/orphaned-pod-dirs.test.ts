// Housekeeping's sweep of orphaned pod directories asks the runtime only about directories no known
// pod holds, and after a sweep that found nothing to do stays quiet until a directory or the pods
// known change. A real process runtime in this process, its sandbox listings counted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrphanedPodDirs, SETTLED_SWEEP_MS } from '../../src/kuberuntime/orphaned-pod-dirs.js';
import { loadProcessRuntime } from '../../src/runtime/process-runtime.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

test('the sweep lists sandboxes only for directories of unknown pods, and removes those without one', async () => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-orphans-'));
  const clock = new FakeClock();
  const runtime = new (await loadProcessRuntime()).ProcessRuntime({ rootDir: root, clock, logger: silentLogger });
  let listings = 0;
  const counted = {
    listPodSandbox: () => {
      listings++;
      return runtime.listPodSandbox();
    },
  };
  const known = new Set(['uid-a', 'uid-b']);
  const dirsOf = (uid: string) => [join(root, 'sandboxes', uid), join(root, 'pods', `default_${uid}_${uid}`)];
  try {
    for (const uid of known) for (const d of dirsOf(uid)) mkdirSync(d, { recursive: true });
    const sweep = new OrphanedPodDirs({ rootDir: root, runtime: counted, knownPodUids: () => known }, () => clock.now());

    // Every directory is a known pod's: nothing removed, the runtime not asked, again and again.
    for (let i = 0; i < 3; i++) assert.deepEqual(await sweep.sweep(), []);
    assert.equal(listings, 0);

    // A pod gone: its directories go, after the runtime says it holds no sandbox of it.
    known.delete('uid-b');
    assert.deepEqual((await sweep.sweep()).sort(), dirsOf('uid-b').sort());
    assert.equal(listings, 1);
    assert.ok(dirsOf('uid-a').every((d) => existsSync(d)));

    assert.deepEqual(await sweep.sweep(), [], 'settled');
    assert.equal(listings, 1);

    // A directory left for a pod nobody knows while the pods known stay the same: found once the
    // directory's modification time moved, at the latest after SETTLED_SWEEP_MS.
    mkdirSync(join(root, 'sandboxes', 'uid-stray'));
    await clock.advance(SETTLED_SWEEP_MS);
    assert.deepEqual(await sweep.sweep(), [join(root, 'sandboxes', 'uid-stray')]);
    assert.equal(listings, 2);

    // Settled again: nothing asked until something changes.
    for (let i = 0; i < 3; i++) assert.deepEqual(await sweep.sweep(), []);
    assert.equal(listings, 2);
  } finally {
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  }
});
