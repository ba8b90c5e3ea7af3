// One owner per root dir: `agent`, `run` and `up` take an exclusive lock file (`<root>/podvisor.lock`,
// created with O_EXCL, holding the owner's pid and /proc start time) before touching sandboxes or logs.
// A lock whose pid is gone, or whose pid now belongs to another process (start time differs), is stale
// and taken over.

import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'podvisor.lock';

export interface LockOwner {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot), '' where /proc is absent. */
  startTime: string;
  command: string;
}

/** Thrown when another live process holds the lock. */
export class RootDirLockedError extends Error {
  constructor(
    readonly rootDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `root dir ${rootDir} is in use by "podvisor ${owner.command}" (pid ${owner.pid}); ` +
        'one podvisor agent, run or up per root dir (pass another --root-dir, or stop that one)',
    );
    this.name = 'RootDirLockedError';
  }
}

/** The start time of pid from /proc, '' when unknown, undefined when the process does not exist. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? '';
  } catch {
    try {
      process.kill(pid, 0);
      return '';
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM' ? '' : undefined;
    }
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) return undefined;
    return { pid: v.pid, startTime: String(v.startTime ?? ''), command: String(v.command ?? '?') };
  } catch {
    return undefined;
  }
}

function isAlive(owner: LockOwner): boolean {
  const start = processStartTime(owner.pid);
  if (start === undefined) return false;
  return owner.startTime === '' || start === '' || start === owner.startTime;
}

export interface RootDirLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the root dir's lock for this process (creating the root dir, mode 0700, if needed).
 * Throws RootDirLockedError when a live process holds it.
 */
export function lockRootDir(rootDir: string, command: string): RootDirLock {
  mkdirSync(rootDir, { recursive: true, mode: 0o700 });
  const path = join(rootDir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, startTime: processStartTime(process.pid) ?? '', command };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      if (owner && owner.pid !== process.pid && isAlive(owner)) throw new RootDirLockedError(rootDir, owner);
      // Stale (or half-written by an owner that died at once): take it over.
      try {
        unlinkSync(path);
      } catch {
        // another contender removed it first
      }
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(me) + '\n');
    } finally {
      closeSync(fd);
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.removeListener('exit', release);
      const owner = readOwner(path);
      if (owner && owner.pid === me.pid && owner.startTime === me.startTime) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    };
    process.once('exit', release);
    return { path, release };
  }
  const owner = readOwner(path);
  if (owner) throw new RootDirLockedError(rootDir, owner);
  throw new Error(`cannot take the lock ${path}`);
}

/** The current holder of the root dir's lock, if a live process holds it. */
export function lockOwner(rootDir: string): LockOwner | undefined {
  const owner = readOwner(join(rootDir, LOCK_FILE));
  return owner && isAlive(owner) ? owner : undefined;
}
