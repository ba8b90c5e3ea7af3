// Interactive exec for the process runtime: a command started in a container's context (its env,
// working directory, user and groups; its own process group that dies with the container) with its
// stdin, stdout and stderr handed to the caller as streams. A `tty` request runs the command on a
// pseudo-terminal of util-linux's `script` (see onTerminal), resized as the client asks.

import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, readlinkSync } from 'node:fs';
import { exitCodeOf, signalGroup } from './process-group.js';
import { childrenTree } from './proc-tree.js';
import type { ContainerProcessInfo } from '../cri.js';
import type { ExecSession } from '../streams.js';
import { DEFAULT_PATH, hostIdentity, spawnTarget, type HostIdentity } from './identity.js';
import { describeSpawnError } from './start-error.js';
import type { SpawnPlan } from './cgroup-join.js';

export interface ExecStreams {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** A terminal: the command's stdin, stdout and stderr are one pseudo-terminal (stderr is not asked). */
  tty?: boolean;
}

/** The context of a container of this process's runtime, where an exec can be started beside it. */
export interface ContainerProcessContext extends ContainerProcessInfo {
  running: boolean;
  /**
   * How to spawn a command inside the container's cgroup from its first instruction, where the
   * container has one (cgroup-join.ts); throws as spawn would for a command that cannot be run.
   */
  spawnPlan?(file: string, args: string[]): SpawnPlan;
  /**
   * Registers an exec's process group: killed with the container (at once if it is not running).
   * 'before-exec': its command joined the cgroup itself; 'after-spawn' (the default): moved now.
   */
  trackGroup(pgid: number, join?: SpawnPlan['join']): void;
  untrackGroup(pgid: number): void;
}

/** util-linux's `script`, present wherever util-linux is (Debian's essential bsdutils). */
const SCRIPT = '/usr/bin/script';

/**
 * The argv that runs file/args on a pseudo-terminal: `script` opens one, starts the command on it
 * (through `$SHELL -c`, replaced by the command with `exec`), writes its own stdin to the terminal and
 * the terminal's output to its stdout, and exits with the command's code (-e). Node opens no
 * pseudo-terminal without a native module; this needs none. Undefined where `script` is missing.
 */
export function onTerminal(file: string, args: readonly string[], scriptPath = SCRIPT): { file: string; args: string[] } | undefined {
  try {
    accessSync(scriptPath, constants.X_OK);
  } catch {
    return undefined;
  }
  const quoted = [file, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return { file: scriptPath, args: ['-q', '-f', '-e', '-c', `exec ${quoted}`, '/dev/null'] };
}

/** The terminal device (`/dev/pts/N`) the command under `script` (pid) has as its stdin, if any yet. */
function terminalOf(scriptPid: number): string | undefined {
  for (const pid of childrenTree(scriptPid) ?? []) {
    try {
      const dev = readlinkSync(`/proc/${pid}/fd/0`);
      if (dev.startsWith('/dev/pts/')) return dev;
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
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
    const id = {
      home: ctx.env.HOME ?? '/',
      unhonoured: [],
      ...(ctx.uid !== undefined ? { uid: ctx.uid } : {}),
      ...(ctx.gid !== undefined ? { gid: ctx.gid } : {}),
      ...(ctx.groups ? { groups: ctx.groups } : {}),
    };
    target = spawnTarget(cmd[0], cmd.slice(1), id, host, { PATH: DEFAULT_PATH, ...ctx.env }, ctx.cwd);
  } catch (err) {
    return { resize() {}, kill() {}, exit: Promise.reject(new Error(`failed to exec in container: ${(err as Error).message}`)) };
  }
  // In the container's cgroup before the command runs, where it has one: a child it forks and
  // detaches at once (setsid) is the container's all the same. The plan also enters the pod's
  // network namespace where the pod has one.
  let join: SpawnPlan['join'] = 'after-spawn';
  if (ctx.spawnPlan) {
    try {
      const plan = ctx.spawnPlan(cmd[0], cmd.slice(1));
      target = plan;
      join = plan.join;
    } catch (err) {
      // The command cannot be run: the same error as its spawn would have given.
      const exit = describeSpawnError(err as NodeJS.ErrnoException, cmd[0], ctx.cwd).then((m) =>
        Promise.reject(new Error(`failed to exec in container: ${m}`)),
      );
      return { resize() {}, kill() {}, exit };
    }
  }
  // With a terminal, `script` holds its master side: stdin and output are pipes to it either way.
  // `script` itself runs outside the cgroup until it is moved after spawn; the command on the
  // terminal still joins before it runs.
  const terminal = streams.tty ? onTerminal(target.file, target.args) : undefined;
  if (terminal) join = 'after-spawn';
  const run = terminal ?? target;
  const child = spawn(run.file, run.args, {
    cwd: ctx.cwd,
    env: ctx.env,
    ...(target.uid !== undefined ? { uid: target.uid } : {}),
    ...(target.gid !== undefined ? { gid: target.gid } : {}),
    detached: true,
    // `script` reads its stdin until the command ends: without one it gets an empty pipe.
    stdio: [streams.stdin || terminal ? 'pipe' : 'ignore', streams.stdout ? 'pipe' : 'ignore', streams.stderr && !terminal ? 'pipe' : 'ignore'],
  });
  if (terminal && !streams.stdin) child.stdin?.end();
  const pgid = child.pid;
  if (pgid !== undefined) ctx.trackGroup(pgid, join);
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
  let ended = false;
  exit.then(
    () => (ended = true),
    () => (ended = true),
  );
  // The size goes to the terminal once the command has it as its stdin (a resize can come first).
  let wanted: { width: number; height: number } | undefined;
  let applying = false;
  const applySize = (tries: number): void => {
    if (!wanted || ended || child.pid === undefined) {
      applying = false;
      return;
    }
    const dev = terminalOf(child.pid);
    if (!dev) {
      if (tries > 0) setTimeout(() => applySize(tries - 1), 25).unref();
      else applying = false;
      return;
    }
    const { width, height } = wanted;
    wanted = undefined;
    // stty sets the size and the kernel signals the terminal's foreground group (SIGWINCH).
    execFile('stty', ['-F', dev, 'cols', String(width), 'rows', String(height)], () => applySize(0));
  };
  return {
    ...(child.stdin && streams.stdin ? { stdin: child.stdin } : {}),
    ...(child.stdout ? { stdout: child.stdout } : {}),
    ...(child.stderr ? { stderr: child.stderr } : {}),
    resize(width: number, height: number) {
      if (!terminal || !(width > 0 && height > 0)) return;
      wanted = { width, height };
      if (applying) return;
      applying = true;
      applySize(40);
    },
    exit,
    kill: () => {
      if (pgid !== undefined) signalGroup(pgid, 'SIGKILL');
    },
  };
}
