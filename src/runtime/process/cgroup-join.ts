// Starting a process inside its container's cgroup, as runc does: the spawned shell writes itself
// into the cgroup (`echo 0 > cgroup.procs`) and then execs the program, so nothing it forks ever
// exists outside the cgroup; setpriv(1) takes on a user change that must follow the move. The shell
// is dash where installed: it adds nothing to the environment but PWD, which is put back.

import { statSync, type Stats } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import type { HostIdentity, ProcessIdentity } from './identity.js';

/** What to spawn and how the process comes into its containment. */
export interface SpawnPlan {
  file: string;
  args: string[];
  uid?: number;
  gid?: number;
  /**
   * 'before-exec': the process joins its cgroup before the program runs; 'after-spawn': the
   * runtime moves it (and what it forked meanwhile) once spawn returns.
   */
  join: 'before-exec' | 'after-spawn';
}

/**
 * The plan that runs `target` inside the cgroup whose cgroup.procs files are given: `sh -c` joins,
 * then execs the target (through setpriv when the target changes user, which must happen after the
 * move: only root may write cgroup.procs). Undefined when that is not possible here (no shell, or
 * a user change without setpriv): the caller moves the process after spawn.
 */
export function joinBeforeExec(
  target: { file: string; args: string[]; uid?: number; gid?: number },
  procsFiles: readonly string[],
  env: NodeJS.ProcessEnv,
  host: HostIdentity,
): SpawnPlan | undefined {
  if (!host.shell) return undefined;
  let program = [target.file, ...target.args];
  if (target.uid !== undefined || target.gid !== undefined) {
    if (!host.setpriv) return undefined;
    // As spawn's uid/gid: real and effective ids set, supplementary groups cleared.
    program = [host.setpriv, `--reuid=${target.uid ?? host.uid}`, `--regid=${target.gid ?? host.gid}`, '--clear-groups', '--', ...program];
  }
  // The paths are the runtime's own (a hierarchy, `podvisor` and hex ids); quoted all the same. A
  // failed write (a cgroup removed meanwhile) leaves the process outside, as a failed move would.
  const writes = procsFiles.map((f) => `echo 0 >${shellQuote(f)}`).join('; ');
  // The shell sets PWD for itself: the program gets the container's env as it is, PWD included or not.
  const pwd = env.PWD === undefined ? 'unset PWD' : `PWD=${shellQuote(env.PWD)}; export PWD`;
  const script = `{ ${writes}; } 2>/dev/null; ${pwd}; exec "$@"`;
  return { file: host.shell, args: ['-c', script, 'sh', ...program], join: 'before-exec' };
}

/**
 * Fails as spawning `file` directly would (ENOENT, EACCES), so a command the shell would fail to
 * exec is reported with the runtime's own start error: a name without a slash is looked up on
 * PATH as execvp does (a match that is not executable makes EACCES unless a later one is), a path
 * is taken relative to cwd.
 */
export function checkCommand(file: string, path: string, cwd: string, id: ProcessIdentity, host: HostIdentity): void {
  const uid = id.uid ?? host.uid;
  const gids = [id.gid ?? host.gid, ...(id.groups ?? [])];
  const candidates = file.includes('/') ? [resolve(cwd, file)] : path.split(delimiter).map((d) => resolve(cwd, d || '.', file));
  let denied = false;
  for (const candidate of candidates) {
    let st: Stats;
    try {
      st = statSync(candidate);
    } catch {
      continue;
    }
    if (st.isFile() && executableBy(st, uid, gids)) return;
    denied = true;
  }
  const code = denied ? 'EACCES' : 'ENOENT';
  throw Object.assign(new Error(`spawn ${file} ${code}`), { code, errno: code, syscall: `spawn ${file}`, path: file });
}

function executableBy(st: Stats, uid: number, gids: number[]): boolean {
  if (uid === 0) return (st.mode & 0o111) !== 0;
  if (st.uid === uid) return (st.mode & 0o100) !== 0;
  if (gids.includes(st.gid)) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
