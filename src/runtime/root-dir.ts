// Where podvisor keeps its state: the root dir (as the kubelet's --root-dir) and the per-pod
// directories under it — sandbox working directories and the /var/log/pods-style log tree.

import { homedir } from 'node:os';
import { join } from 'node:path';

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
  return join(rootDir, 'sandboxes', podUid);
}

/** A pod's log directory, laid out as the kubelet's `/var/log/pods/<ns>_<name>_<uid>`. */
export function podLogDir(rootDir: string, namespace: string, name: string, podUid: string): string {
  return join(rootDir, 'pods', `${namespace}_${name}_${podUid}`);
}

/** A container's log path relative to its pod log directory: `<container>/<restartCount>.log`. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return join(containerName, `${restartCount}.log`);
}
