// Log pruning: only `<n>.log` files (and their rotated copies) of instances before the previous one
// go; other names stay, and a symlink is removed itself, never followed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pruneContainerLogs } from '../../src/runtime/logs/prune.js';
import { tempDir } from './helpers.js';

test('pruneContainerLogs keeps the current and the previous instance, touches nothing else', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const logs = join(dir, 'app');
    mkdirSync(logs);
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'keep me');
    for (const n of ['0.log', '0.log.20260101-000000', '1.log', '1.log.20260101-000000.1', '2.log', '3.log', 'notes.txt', '1.logx'])
      writeFileSync(join(logs, n), '');
    symlinkSync(victim, join(logs, '1.log.20260101-000001'));
    const removed = await pruneContainerLogs(logs, 2);
    assert.deepEqual(removed.sort(), ['0.log', '0.log.20260101-000000', '1.log', '1.log.20260101-000000.1', '1.log.20260101-000001']);
    assert.deepEqual(readdirSync(logs).sort(), ['1.logx', '2.log', '3.log', 'notes.txt']);
    assert.ok(existsSync(victim), 'the symlink target stays');
    assert.deepEqual(await pruneContainerLogs(join(dir, 'missing'), 5), []);
  } finally {
    cleanup();
  }
});
