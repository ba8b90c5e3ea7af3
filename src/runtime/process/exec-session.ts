// Interactive exec for the process runtime: a command started in a container's context (its env,
// working directory, user and groups; its own process group that dies with the container) with its
// stdin, stdout and stderr handed to the caller as streams. There is no pseudo-terminal: a `tty` request runs the
// command on pipes, and resize does nothing.

import { spawn } from 'node:child_process';
import { exitCodeOf, signalGroup } from './process-group.js';
import type { ContainerProcessContext } from '../cri.js';
import type { ExecSession } from '../streams.js';
import { DEFAULT_PATH, hostIdentity, spawnTarget, type HostIdentity } from './identity.js';
import { describeSpawnError } from './start-error.js';

export interface ExecStreams {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export function startExecSession(ctx: ContainerProcessContext, cmd: string[], streams: ExecStreams, host: HostIdentity = hostIdentity()): ExecSession {
  if (!ctx.running) {
    return { resize() {}, kill() {}, exit: Promise.reject(new Error('container not running')) };
  }
  if (cmd.length === 0 || !cmd[0]) {
    return { resize() {}, kill() {}, exit: Promise.reject(new Error('failed to exec in container: exec: no command specified')) };
  }
  let target: ReturnType<typeof spawnTarget>;
  try {
    const id = { home: ctx.env.HOME ?? '/', unhonoured: [], ...(ctx.uid !== undefined ? { uid: ctx.uid } : {}), ...(ctx.gid !== undefined ? { gid: ctx.gid } : {}), ...(ctx.groups ? { groups: ctx.groups } : {}) };
    target = spawnTarget(cmd[0], cmd.slice(1), id, host, { PATH: DEFAULT_PATH, ...ctx.env }, ctx.cwd);
  } catch (err) {
    return { resize() {}, kill() {}, exit: Promise.reject(new Error(`failed to exec in container: ${(err as Error).message}`)) };
  }
  const child = spawn(target.file, target.args, {
    cwd: ctx.cwd,
    env: ctx.env,
    ...(target.uid !== undefined ? { uid: target.uid } : {}),
    ...(target.gid !== undefined ? { gid: target.gid } : {}),
    detached: true,
    stdio: [streams.stdin ? 'pipe' : 'ignore', streams.stdout ? 'pipe' : 'ignore', streams.stderr ? 'pipe' : 'ignore'],
  });
  const pgid = child.pid;
  if (pgid !== undefined) ctx.trackGroup(pgid);
  const exit = new Promise<number>((resolve, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (pgid !== undefined) return; // a failed kill; the exit still follows
      describeSpawnError(err, cmd[0]!, ctx.cwd).then((m) => reject(new Error(`failed to exec in container: ${m}`)), reject);
    });
    child.once('exit', (code, signal) => {
      if (pgid !== undefined) {
        // Nothing the command left behind outlives it.
        signalGroup(pgid, 'SIGKILL');
        ctx.untrackGroup(pgid);
      }
      resolve(exitCodeOf(code, signal));
    });
  });
  child.stdin?.on('error', () => {});
  return {
    ...(child.stdin ? { stdin: child.stdin } : {}),
    ...(child.stdout ? { stdout: child.stdout } : {}),
    ...(child.stderr ? { stderr: child.stderr } : {}),
    resize() {},
    exit,
    kill: () => {
      if (pgid !== undefined) signalGroup(pgid, 'SIGKILL');
    },
  };
}
