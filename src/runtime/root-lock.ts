// One owner per root dir: `agent`, `run` and `up` take an exclusive lock file (`<root>/podvisor.lock`,
// created with O_EXCL, holding the owner's pid and /proc start time) before touching sandboxes or logs.
// A lock whose pid is gone, or whose pid now belongs to another process (start time differs), is stale
// and taken over, as is one held by a zombie (a killed owner not yet reaped). The lock is written in full
// to a temporary file and linked into place, so a full disk never leaves an empty lock behind.

import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
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

/** Thrown when the lock cannot be written (a full disk, a read-only root dir): nothing was left behind. */
export class RootDirUnavailableError extends Error {
  constructor(rootDir: string, cause: Error) {
    super(`cannot take the lock of root dir ${rootDir}: ${cause.message}`);
    this.name = 'RootDirUnavailableError';
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

/** True when pid is a zombie (exited, waiting for its parent to reap it): it holds nothing any more. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

function isAlive(owner: LockOwner): boolean {
  const start = processStartTime(owner.pid);
  if (start === undefined || isZombie(owner.pid)) return false;
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
  privateRootDir(rootDir);
  const path = join(rootDir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, startTime: processStartTime(process.pid) ?? '', command };
  const staged = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(staged, JSON.stringify(me) + '\n', { mode: 0o600 });
  } catch (err) {
    try {
      unlinkSync(staged);
    } catch {
      // never made
    }
    throw new RootDirUnavailableError(rootDir, err as Error);
  }
  try {
    return takeStaged(rootDir, path, staged, me);
  } finally {
    try {
      unlinkSync(staged);
    } catch {
      // already gone
    }
  }
}

/**
 * The root dir as docs/security.md says it is: 0700. One this user owns with a looser mode is
 * tightened; a shared directory (another owner's, or sticky like /tmp) is left as it is.
 */
function privateRootDir(rootDir: string): void {
  const st = lstatSync(rootDir);
  if (!st.isDirectory() || (st.mode & 0o077) === 0 || (st.mode & 0o1000) !== 0) return;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return;
  chmodSync(rootDir, 0o700);
}

function takeStaged(rootDir: string, path: string, staged: string, me: LockOwner): RootDirLock {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      // link(2) fails with EEXIST like O_EXCL, and the lock appears with its content complete.
      linkSync(staged, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new RootDirUnavailableError(rootDir, err as Error);
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
