// Who a container's processes run as and the environment the runtime adds: runAsUser, runAsGroup and
// supplementalGroups applied at spawn when the agent is root (else refused with a warning), HOME from
// the user's passwd entry, and the default PATH when the container sets none.

import { accessSync, closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { LinuxContainerSecurityContext } from '../cri.js';

/** containerd's default PATH, used when the container's env sets none (there is no image config to give one). */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A passwd(5) entry, as runc reads the container's /etc/passwd (here the host's). */
export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export function parsePasswd(text: string): PasswdEntry[] {
  const out: PasswdEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 7 || line.startsWith('#')) continue;
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    if (!Number.isInteger(uid) || !Number.isInteger(gid)) continue;
    out.push({ name: f[0]!, uid, gid, home: f[5]! });
  }
  return out;
}

export function readPasswd(path = '/etc/passwd'): PasswdEntry[] {
  try {
    return parsePasswd(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/** The agent's own credentials, and what it may change (injected in tests). */
export interface HostIdentity {
  uid: number;
  gid: number;
  /** setpriv(1), needed to set supplementary groups (Node's spawn clears them); undefined when absent. */
  setpriv?: string;
  /**
   * The shell through which a process joins its cgroup before its program runs (cgroup-join.ts):
   * dash where installed (it exports nothing of its own but PWD), else /bin/sh; undefined when absent.
   */
  shell?: string;
}

/** Where setpriv(1) is installed; undefined when it is not. */
export function findSetpriv(): string | undefined {
  return ['/usr/bin/setpriv', '/bin/setpriv'].find(isExecutable);
}

export function hostIdentity(): HostIdentity {
  const setpriv = findSetpriv();
  const shell = ['/bin/dash', '/usr/bin/dash', '/bin/sh'].find(isExecutable);
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, ...(setpriv ? { setpriv } : {}), ...(shell ? { shell } : {}) };
}

/** How one container's processes are spawned. */
export interface ProcessIdentity {
  /** Set only when different from the agent's own (spawn's uid/gid). */
  uid?: number;
  gid?: number;
  /** Supplementary groups, applied through setpriv. */
  groups?: number[];
  /** The effective user's home (passwd), `/` when it has no entry: the HOME the runtime adds. */
  home: string;
  /** Fields that cannot be honoured here, each with why (a Warning event at start). */
  unhonoured: Array<{ field: string; why: string }>;
}

/**
 * The identity for a container's security context. As root every field is applied; otherwise a
 * field that asks for another user or group than the agent's is listed as unhonoured (the container
 * runs as the agent's user, and says so) rather than silently ignored.
 */
export function resolveIdentity(sc: LinuxContainerSecurityContext | undefined, host: HostIdentity, passwd: PasswdEntry[]): ProcessIdentity {
  const root = host.uid === 0;
  const unhonoured: ProcessIdentity['unhonoured'] = [];
  const wantUid = sc?.runAsUser;
  const entryOf = (uid: number) => passwd.find((p) => p.uid === uid);
  const effectiveUid = root && wantUid !== undefined ? wantUid : host.uid;
  // As runc: without runAsGroup the primary group is the user's passwd group (0 when unknown).
  const wantGid = sc?.runAsGroup ?? (wantUid !== undefined ? (entryOf(wantUid)?.gid ?? 0) : undefined);
  const groups = sc?.supplementalGroups ?? [];
  const id: ProcessIdentity = { home: entryOf(effectiveUid)?.home || '/', unhonoured };
  if (root) {
    if (wantUid !== undefined && wantUid !== host.uid) id.uid = wantUid;
    if (wantGid !== undefined && wantGid !== host.gid) id.gid = wantGid;
    if (groups.length > 0) {
      if (host.setpriv) id.groups = [...groups];
      else unhonoured.push({ field: 'supplementalGroups', why: 'setpriv(1) is not installed' });
    }
    return id;
  }
  const why = 'podvisor is not running as root';
  if (wantUid !== undefined && wantUid !== host.uid) unhonoured.push({ field: 'runAsUser', why });
  if (sc?.runAsGroup !== undefined && sc.runAsGroup !== host.gid) unhonoured.push({ field: 'runAsGroup', why });
  if (groups.length > 0) unhonoured.push({ field: 'supplementalGroups', why });
  return id;
}

/** What to spawn: the command itself, or setpriv running it when supplementary groups are set. */
export function spawnTarget(
  file: string,
  args: string[],
  id: ProcessIdentity,
  host: HostIdentity,
  env: NodeJS.ProcessEnv,
  cwd: string,
): { file: string; args: string[]; uid?: number; gid?: number } {
  if (id.groups && host.setpriv) {
    // Resolved here, so a missing command is the runtime's start error and not setpriv's exit 127.
    const resolved = lookPath(file, env.PATH ?? DEFAULT_PATH, cwd);
    const uid = id.uid ?? host.uid;
    const gid = id.gid ?? host.gid;
    return { file: host.setpriv, args: [`--reuid=${uid}`, `--regid=${gid}`, `--groups=${id.groups.join(',')}`, '--', resolved, ...args] };
  }
  return { file, args, ...(id.uid !== undefined ? { uid: id.uid } : {}), ...(id.gid !== undefined ? { gid: id.gid } : {}) };
}

/**
 * Throws ENOEXEC, as execve(2) fails, for a file that is neither an ELF binary nor a `#!` script:
 * execvp(3) (and libuv after it) would run it through /bin/sh, where runc reports "exec format
 * error". A file that cannot be read here is left to the exec.
 */
export function assertExecFormat(path: string): void {
  let head: Buffer;
  try {
    const fd = openSync(path, 'r');
    try {
      head = Buffer.alloc(4);
      head = head.subarray(0, readSync(fd, head, 0, 4, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return;
  }
  if (head.subarray(0, 2).toString('latin1') === '#!' || head.toString('latin1') === '\x7fELF') return;
  throw Object.assign(new Error(`spawn ${path} ENOEXEC`), { code: 'ENOEXEC', errno: 'ENOEXEC', syscall: `spawn ${path}`, path });
}

/** exec.LookPath: a name with a slash is used as it is; else the first executable file on PATH. */
export function lookPath(file: string, path: string, cwd: string): string {
  if (file.includes('/')) return file.startsWith('/') ? file : join(cwd, file);
  for (const dir of path.split(delimiter)) {
    const candidate = join(dir || '.', file);
    if (isExecutable(candidate)) return candidate.startsWith('/') ? candidate : join(cwd, candidate);
  }
  throw Object.assign(new Error(`${file}: executable file not found in $PATH`), { code: 'ENOENT' });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
