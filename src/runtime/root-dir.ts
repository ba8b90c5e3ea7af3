// Where podvisor keeps its state: the root dir (as the kubelet's --root-dir) and the per-pod
// directories under it. Every path built from pod data goes through pathUnder, which refuses
// anything that would leave the root dir, and every directory and file is created with an explicit
// mode, whatever the umask, and without following a symlink planted beneath the root dir.

import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { lstat, open, rm, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Modes of what podvisor creates. */
export const modes = {
  /** The root dir and every private directory beneath it: the owner only. */
  private: 0o700,
  /**
   * The pod log tree (`pods/`, `pods/<ns>_<name>_<uid>/`, `<container>/`): the kubelet creates
   * /var/log/pods and its directories 0755 so node log collectors running as another user can list
   * them. Kept here for the same layout; under a 0700 root dir only its owner reaches them.
   */
  logDir: 0o755,
  /** Container log files, as the CRI runtimes write them (containerd, CRI-O): 0640. */
  logFile: 0o640,
  /** State files (checkpoints, locks, tokens): the owner only. */
  stateFile: 0o600,
} as const;

/** A path that would leave the root dir, or pass through a symlink beneath it. */
export class UnsafePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafePathError';
  }
}

/** Linux NAME_MAX: the longest file name a path component may have, in bytes. */
export const maxComponentBytes = 255;

/** Why s cannot be one path component, or undefined when it can. */
export function pathComponentProblem(s: string): string | undefined {
  if (s === '') return 'must be non-empty';
  if (s === '.' || s === '..') return `must not be '${s}'`;
  if (s.includes('/')) return "must not contain '/'";
  if (s.includes('\0')) return 'must not contain a NUL byte';
  if (Buffer.byteLength(s) > maxComponentBytes) return `must be no more than ${maxComponentBytes} bytes`;
  return undefined;
}

/**
 * join(rootDir, ...components), refusing any component that is not a single path component and
 * any result that does not stay strictly under rootDir. The one place pod data becomes a path.
 */
export function pathUnder(rootDir: string, ...components: string[]): string {
  for (const c of components) {
    const problem = pathComponentProblem(c);
    if (problem) throw new UnsafePathError(`refusing path component ${JSON.stringify(c)} under ${rootDir}: ${problem}`);
  }
  const root = resolve(rootDir);
  const out = resolve(root, ...components);
  assertUnder(root, out);
  return out;
}

/** Throws unless path lies strictly beneath rootDir (both resolved lexically). */
export function assertUnder(rootDir: string, path: string): void {
  const rel = relative(resolve(rootDir), resolve(path));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new UnsafePathError(`refusing path ${JSON.stringify(path)}: not under the root dir ${rootDir}`);
  }
}

/**
 * `/var/lib/podvisor` for root (uid 0); otherwise `$XDG_STATE_HOME/podvisor`, falling back to
 * `~/.local/state/podvisor` as the XDG base-directory spec says. An explicit `--root-dir` wins
 * over both and is applied by the caller.
 */
export function defaultRootDir(env: NodeJS.ProcessEnv = process.env, uid: number | undefined = process.getuid?.()): string {
  if (uid === 0) return '/var/lib/podvisor';
  const xdg = env.XDG_STATE_HOME;
  // The spec says a relative XDG path is invalid and must be ignored.
  if (xdg && xdg.startsWith('/')) return join(xdg, 'podvisor');
  const home = env.HOME || homedir();
  return join(home, '.local', 'state', 'podvisor');
}

/** A pod's sandbox directory, the default working directory of its containers. */
export function sandboxDir(rootDir: string, podUid: string): string {
  return pathUnder(rootDir, 'sandboxes', podUid);
}

/** A pod's log directory, laid out as the kubelet's `/var/log/pods/<ns>_<name>_<uid>`. */
export function podLogDir(rootDir: string, namespace: string, name: string, podUid: string): string {
  for (const [what, v] of [
    ['namespace', namespace],
    ['name', name],
    ['uid', podUid],
  ] as const) {
    const problem = pathComponentProblem(v);
    if (problem) throw new UnsafePathError(`refusing pod ${what} ${JSON.stringify(v)} in a log path: ${problem}`);
  }
  return pathUnder(rootDir, 'pods', `${namespace}_${name}_${podUid}`);
}

/** A container's log path relative to its pod log directory: `<container>/<restartCount>.log`. */
export function containerLogPath(containerName: string, restartCount: number): string {
  const problem = pathComponentProblem(containerName);
  if (problem) throw new UnsafePathError(`refusing container name ${JSON.stringify(containerName)} in a log path: ${problem}`);
  if (!Number.isSafeInteger(restartCount) || restartCount < 0) throw new UnsafePathError(`refusing restart count ${restartCount} in a log path`);
  return join(containerName, `${restartCount}.log`);
}

/** Components of path below rootDir (path must be under it). */
function componentsBelow(rootDir: string, path: string): string[] {
  assertUnder(rootDir, path);
  return relative(resolve(rootDir), resolve(path)).split(sep);
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Throws when an existing component of path below rootDir (the last one included when checkLast) is a symlink. */
async function refuseSymlinks(rootDir: string, path: string, checkLast: boolean): Promise<void> {
  const parts = componentsBelow(rootDir, path);
  let cur = resolve(rootDir);
  for (let i = 0; i < parts.length; i++) {
    cur = join(cur, parts[i]!);
    if (i === parts.length - 1 && !checkLast) return;
    try {
      const st = await lstat(cur);
      if (st.isSymbolicLink()) throw new UnsafePathError(`refusing to follow the symlink ${cur} under the root dir`);
      if (i < parts.length - 1 && !st.isDirectory()) throw new UnsafePathError(`refusing path ${path}: ${cur} is not a directory`);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
  }
}

/**
 * Creates path (a directory under rootDir) and its missing parents below rootDir, each with mode
 * whatever the umask, refusing symlinks on the way; the root dir itself is made 0700 when this call
 * creates it. Synchronous: it runs on a container's start path, where a few local mkdir and lstat
 * calls cost less than their thread-pool round trips (each a wait of milliseconds on a loaded host).
 */
export function ensureDirUnderSync(rootDir: string, path: string, mode: number): void {
  const root = resolve(rootDir);
  const first = mkdirSync(root, { recursive: true, mode: modes.private });
  if (first !== undefined) chmodCreatedSync(first, root, modes.private);
  let cur = root;
  for (const part of componentsBelow(rootDir, path)) {
    cur = join(cur, part);
    try {
      mkdirSync(cur, { mode });
      chmodSync(cur, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = lstatSync(cur);
      if (st.isSymbolicLink()) throw new UnsafePathError(`refusing to follow the symlink ${cur} under the root dir`);
      if (!st.isDirectory()) throw new UnsafePathError(`refusing path ${path}: ${cur} is not a directory`);
    }
  }
}

/** chmod every directory from first (the first one mkdir created) down to last: mkdir's mode is masked by the umask. */
function chmodCreatedSync(first: string, last: string, mode: number): void {
  let cur = first;
  chmodSync(cur, mode);
  const rel = relative(first, last);
  if (rel === '') return;
  for (const part of rel.split(sep)) {
    cur = join(cur, part);
    chmodSync(cur, mode);
  }
}

/**
 * Creates (or empties) a regular file under rootDir with mode whatever the umask, its directories
 * made as ensureDirUnderSync makes them; neither the file nor a directory on the way may be a
 * symlink, and a FIFO in its place is refused rather than waited on. Synchronous, as ensureDirUnderSync.
 */
export function createFileUnderSync(rootDir: string, path: string, dirMode: number, mode: number): void {
  ensureDirUnderSync(rootDir, dirname(path), dirMode);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  let fd: number;
  try {
    fd = openSync(path, flags, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnsafePathError(`refusing to follow the symlink ${path}`);
    if (code === 'ENXIO') throw new UnsafePathError(`refusing ${path}: not a regular file`);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new UnsafePathError(`refusing ${path}: not a regular file`);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes path (under rootDir) and everything beneath it. A symlink on the way to it is refused; a
 * symlink inside it is removed, never followed (fs.rm unlinks links); a missing path is no error.
 */
export async function removeUnder(rootDir: string, path: string): Promise<void> {
  await refuseSymlinks(rootDir, path, false);
  await rm(path, { recursive: true, force: true });
}

/**
 * Opens a log file under rootDir for appending, created with mode whatever the umask; neither the
 * file nor any directory on the way beneath rootDir may be a symlink (O_NOFOLLOW and lstat).
 */
export async function openLogFileUnder(rootDir: string, path: string, mode: number = modes.logFile): Promise<FileHandle> {
  await refuseSymlinks(rootDir, path, false);
  return openNoFollow(path, mode);
}

/** open(path, append|create|O_NOFOLLOW, mode), then fchmod so the umask cannot loosen or tighten it. */
export async function openNoFollow(path: string, mode: number = modes.logFile): Promise<FileHandle> {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
  let fh: FileHandle;
  try {
    fh = await open(path, flags, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafePathError(`refusing to follow the symlink ${path}`);
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new UnsafePathError(`refusing ${path}: not a regular file`);
    if ((st.mode & 0o777) !== mode) await fh.chmod(mode);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}

/**
 * Opens a regular file under rootDir for reading. A symlink (the file or a directory on the way
 * beneath rootDir), a FIFO or a device is refused, without blocking on it.
 */
export async function openReadUnder(rootDir: string, path: string): Promise<FileHandle> {
  await refuseSymlinks(rootDir, path, false);
  return openRefusing(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
}

async function openRefusing(path: string, flags: number, mode?: number): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(path, flags, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnsafePathError(`refusing to follow the symlink ${path}`);
    if (code === 'ENXIO') throw new UnsafePathError(`refusing ${path}: not a regular file`);
    throw err;
  }
  try {
    if (!(await fh.stat()).isFile()) throw new UnsafePathError(`refusing ${path}: not a regular file`);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}
