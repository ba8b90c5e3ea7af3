// The root dir lock: a live holder refuses a second owner (naming its pid); a stale lock (dead pid,
// or a pid reused by another process, or a zombie) is taken over; release removes only our own lock; a
// full disk gives a clear error and leaves no empty lock; an existing root dir of ours becomes 0700.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE, lockOwner, lockRootDir, RootDirLockedError, RootDirUnavailableError } from '../../src/runtime/root-lock.js';
import { waitFor } from '../fixtures/wait.js';

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

test('a lock held by a zombie (killed, not yet reaped) is stale', async () => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-lock-'));
  // The sleep's parent execs another sleep that never reaps it: once killed, it stays a zombie.
  const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const pid = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d: Buffer) => r(d.toString().trim()))));
    const start = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ pid, startTime: start, command: 'agent' }));
    assert.throws(() => lockRootDir(root, 'agent'), RootDirLockedError, 'alive: it holds the lock');
    process.kill(pid, 'SIGKILL');
    await waitFor('the holder is a zombie', () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] === 'Z');
    const lock = lockRootDir(root, 'agent');
    assert.equal(JSON.parse(readFileSync(lock.path, 'utf8')).pid, process.pid);
    lock.release();
  } finally {
    parent.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
});

test('an existing root dir of ours is made 0700', () => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-lock-'));
  try {
    chmodSync(root, 0o755);
    lockRootDir(root, 'agent').release();
    assert.equal(statSync(root).mode & 0o777, 0o700);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a full disk: a clear error, and no empty lock file left behind', (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'podvisor-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]);
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    t.skip('mounting a tmpfs needs root');
    return;
  }
  try {
    const root = join(mnt, 'root');
    mkdirSync(root, { mode: 0o700 });
    fillDisk(join(mnt, 'filler'));
    assert.throws(
      () => lockRootDir(root, 'agent'),
      (e: unknown) => e instanceof RootDirUnavailableError && /cannot take the lock of root dir .*no space left on device/i.test(e.message),
    );
    assert.deepEqual(readdirSync(root), [], 'no lock file, empty or staged');
  } finally {
    execFileSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});

/** Writes into path until the file system is full. */
function fillDisk(path: string): void {
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) appendFileSync(path, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  try {
    for (;;) appendFileSync(path, 'x');
  } catch {
    // not one byte more
  }
}
