// The root dir lock: a live holder refuses a second owner (naming its pid); a stale lock (dead pid,
// or a pid reused by another process) is taken over; release removes only our own lock.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE, lockOwner, lockRootDir, RootDirLockedError } from '../../src/runtime/root-lock.js';

test('a live holder refuses a second owner; stale locks are taken over', async () => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-lock-'));
  try {
    const child = spawn('sleep', ['30']);
    const pid = child.pid!;
    const start = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ pid, startTime: start, command: 'up' }));
    assert.throws(
      () => lockRootDir(root, 'run'),
      (e: unknown) => e instanceof RootDirLockedError && /"podvisor up" \(pid \d+\)/.test(e.message),
    );
    assert.equal(lockOwner(root)?.pid, pid);

    // Same pid, another start time: the pid was reused, the lock is stale.
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ pid, startTime: '1', command: 'up' }));
    const lock = lockRootDir(root, 'run');
    assert.equal(statSync(lock.path).mode & 0o777, 0o600);
    assert.equal(JSON.parse(readFileSync(lock.path, 'utf8')).pid, process.pid);
    lock.release();
    assert.equal(existsSync(lock.path), false);

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ pid, startTime: start, command: 'up' }));
    const again = lockRootDir(root, 'agent');
    again.release();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
