// ExecSync for the process runtime: runs a command in a container's context (its env and working
// directory) in its own process group, capturing capped output; kept lean as probes call it often.

import { spawn } from 'node:child_process';
import type { Clock } from '../../util/clock.js';
import type { ExecSyncResult } from '../cri.js';
import { exitCodeOf, signalGroup } from './process-group.js';
import { describeSpawnError } from './start-error.js';

/** Output kept per stream; more is read and discarded so the command never blocks on a pipe. */
export const EXEC_OUTPUT_CAP_BYTES = 16 * 1024;

/** How long to wait for the pipes to close after the command exited (a background child may hold them). */
const PIPE_DRAIN_MS = 1000;

export interface ExecContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** What to spawn for cmd, as whom (the container's identity); cmd as it is when absent. */
  target?: (file: string, args: string[]) => { file: string; args: string[]; uid?: number; gid?: number };
  /**
   * Told about each exec's process group when it starts, and again (groupGone) once nothing of it
   * runs; the container kills every group still tracked when it exits, so no exec outlives it.
   * pipesClosed: its stdout and stderr reached end-of-file, so no process holds them any more.
   */
  started(pgid: number): void;
  groupGone(pgid: number, pipesClosed: boolean): void;
}

class CappedOutput {
  private chunks: Buffer[] = [];
  private size = 0;
  push(chunk: Buffer): void {
    if (this.size >= EXEC_OUTPUT_CAP_BYTES) return;
    const room = EXEC_OUTPUT_CAP_BYTES - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }
  buffer(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
  }
}

/** Runs cmd; rejects only when it cannot be started (as CRI's ExecSync returns an error then). */
export function execInContext(cmd: string[], timeoutSeconds: number, ctx: ExecContext): Promise<ExecSyncResult> {
  return new Promise((resolve, reject) => {
    const failStart = (err: NodeJS.ErrnoException) => {
      describeSpawnError(err, cmd[0] ?? '', ctx.cwd).then((msg) => reject(new Error(`failed to exec in container: ${msg}`)), reject);
    };
    if (cmd.length === 0 || !cmd[0]) {
      reject(new Error('failed to exec in container: exec: no command specified'));
      return;
    }
    let child;
    try {
      const t = ctx.target?.(cmd[0], cmd.slice(1)) ?? { file: cmd[0], args: cmd.slice(1) };
      child = spawn(t.file, t.args, { cwd: ctx.cwd, env: ctx.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], uid: t.uid, gid: t.gid });
    } catch (err) {
      failStart(err as NodeJS.ErrnoException);
      return;
    }
    if (child.pid === undefined) {
      child.once('error', failStart);
      return;
    }
    const pgid = child.pid;
    ctx.started(pgid);
    const stdout = new CappedOutput();
    const stderr = new CappedOutput();
    child.stdout!.on('data', (d: Buffer) => stdout.push(d));
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));
    // After a successful spawn, 'error' only reports a failed kill; the exit still follows.
    child.on('error', () => {});

    let timedOut = false;
    const timer =
      timeoutSeconds > 0
        ? ctx.clock.setTimer(timeoutSeconds * 1000, () => {
            timedOut = true;
            signalGroup(pgid, 'SIGKILL');
          })
        : undefined;

    let exitCode: number | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (pipesClosed: boolean) => {
      if (done || exitCode === undefined) return;
      done = true;
      if (drainTimer) clearTimeout(drainTimer);
      if (!signalGroup(pgid, 0)) ctx.groupGone(pgid, pipesClosed);
      resolve({ exitCode, stdout: stdout.buffer(), stderr: stderr.buffer(), timedOut });
    };
    child.once('exit', (code, signal) => {
      timer?.cancel();
      exitCode = exitCodeOf(code, signal);
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(false);
      }, PIPE_DRAIN_MS);
      drainTimer.unref();
    });
    child.once('close', () => finish(true));
  });
}
