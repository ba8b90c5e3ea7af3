// The runtime service's spawner: a small long-lived child process (spawner-program.ts) that forks
// and execs containers' main processes, so that a start does not fork the service's own heap (the
// fork's cost grows with the heap, and it blocks the service's event loop until the child execs).
// It plays runc's `init` part: session, cgroup join, stdio, user, exec; and reports exits.

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { Logger } from '../../util/logger.js';
import { SPAWNER_PROGRAM } from './spawner-program.js';

/** One process for the spawner to start. */
export interface SpawnerRequest {
  /** The absolute path exec'd. */
  file: string;
  /** argv, argv[0] included. */
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Opened read-write as its stdout and stderr (the container's output FIFOs). */
  stdout: string;
  stderr: string;
  /** cgroup.procs files the process writes itself into before anything runs. */
  cgroupProcs: readonly string[];
}

/** How a spawned process ended: as ChildProcess's 'exit', or lost with the spawner. */
export type SpawnedExit = { code: number | null; signal: NodeJS.Signals | null } | { lost: true };

export interface SpawnedProcess {
  pid: number;
  /** Settles once the process exited, or the spawner that waits for it is gone. */
  exited: Promise<SpawnedExit>;
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));
const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/**
 * The spawner was lost while it started this process: the process may run (the spawner died after
 * its fork) or not. The caller looks for it by its output (findSpawned), as after a restart.
 */
export class SpawnerLostError extends Error {
  override name = 'SpawnerLostError';
}

/** Where perl is, or undefined: the caller then spawns processes itself. */
export function findPerl(): string | undefined {
  return ['/usr/bin/perl', '/bin/perl'].find((p) => {
    try {
      accessSync(p, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The error spawn() would have thrown for errno n. */
function spawnError(file: string, errno: number): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? 'EIO';
  return Object.assign(new Error(`spawn ${file} ${code}`), { code, errno: -errno, syscall: `spawn ${file}`, path: file });
}

/**
 * Starts processes through one spawner process, started on first use and again after it is lost.
 * Its exits reach each process's `exited`; when the spawner itself is gone (killed, say), the
 * processes it started keep running but can no longer be waited for: they settle as `lost`.
 */
export class ProcessSpawner {
  private child: ChildProcess | undefined;
  private buffered = '';
  private nextId = 0;
  private readonly starting = new Map<string, { file: string; resolve: (p: SpawnedProcess) => void; reject: (err: Error) => void }>();
  private readonly running = new Map<number, (exit: SpawnedExit) => void>();

  constructor(
    private readonly perl: string,
    private readonly logger: Logger,
  ) {}

  /** The spawner's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  spawn(req: SpawnerRequest): Promise<SpawnedProcess> {
    const env = Object.entries(req.env)
      .filter((kv): kv is [string, string] => kv[1] !== undefined)
      .map(([k, v]) => `${k}=${v}`);
    const id = String(this.nextId++);
    const fields = [
      id,
      req.file,
      req.cwd,
      req.uid === undefined ? '' : String(req.uid),
      req.gid === undefined ? '' : String(req.gid),
      req.stdout,
      req.stderr,
      String(req.cgroupProcs.length),
      ...req.cgroupProcs,
      String(req.argv.length),
      ...req.argv,
      ...env,
    ];
    if (fields.some((f) => f.includes('\0'))) {
      return Promise.reject(
        Object.assign(new TypeError('The arguments and environment must be strings without null bytes'), { code: 'ERR_INVALID_ARG_VALUE' }),
      );
    }
    const payload = Buffer.from(fields.join('\0'));
    const child = this.spawnerProcess();
    return new Promise((resolve, reject) => {
      this.starting.set(id, { file: req.argv[0] ?? req.file, resolve, reject });
      child.stdin!.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
    });
  }

  /**
   * Ends the spawner (end of its input); what it started keeps running, and nothing here settles
   * for it any more: the caller has let go of those processes.
   */
  close(): void {
    const child = this.child;
    this.child = undefined;
    for (const [, req] of this.starting) req.reject(new Error(`the process spawner was closed before it started ${req.file}`));
    this.starting.clear();
    this.running.clear();
    child?.stdin?.end();
  }

  private spawnerProcess(): ChildProcess {
    if (this.child) return this.child;
    // Its cwd is / and its stderr a pipe, so it holds no directory or file (a mount stays free).
    const child = spawn(this.perl, ['-e', SPAWNER_PROGRAM], { cwd: '/', stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child = child;
    this.buffered = '';
    child.stdin!.on('error', () => {
      // The spawner is gone: its exit settles what waited on it.
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => this.logger.warn('The process spawner wrote to stderr', { text: text.trimEnd() }));
    child.stdout!.setEncoding('latin1');
    child.stdout!.on('data', (chunk: string) => this.read(chunk));
    // 'close', not 'exit': every line it wrote is read first.
    child.once('close', (code, signal) => this.lost(child, code, signal));
    child.once('error', (err) => {
      this.logger.warn('The process spawner could not run', { err: String(err) });
      this.lost(child, null, null);
    });
    return child;
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const [kind, a, b] = this.buffered.slice(0, nl).split(' ');
      this.buffered = this.buffered.slice(nl + 1);
      if (kind === 'X') this.exited(Number(a), Number(b));
      else if (kind === 'S' || kind === 'F') this.answered(kind, a!, Number(b));
    }
  }

  private answered(kind: 'S' | 'F', id: string, n: number): void {
    const req = this.starting.get(id);
    if (!req) return;
    this.starting.delete(id);
    if (kind === 'F') return req.reject(spawnError(req.file, n));
    // Registered before the answer is handed out: its exit can only come on a later line.
    const exited = new Promise<SpawnedExit>((r) => this.running.set(n, r));
    req.resolve({ pid: n, exited });
  }

  private exited(pid: number, status: number): void {
    const settle = this.running.get(pid);
    if (!settle) return; // a child that failed before its exec
    this.running.delete(pid);
    const signal = status & 0x7f;
    settle(signal === 0 ? { code: (status >> 8) & 0xff, signal: null } : { code: null, signal: SIGNAL_NAMES.get(signal) ?? 'SIGKILL' });
  }

  private lost(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (this.starting.size > 0 || this.running.size > 0) {
      this.logger.warn('The process spawner exited; the processes it started are watched by their pids', {
        code,
        signal,
        running: this.running.size,
      });
    }
    for (const [, req] of this.starting)
      req.reject(new SpawnerLostError(`the process spawner exited (${signal ?? `code ${code}`}) while it started ${req.file}`));
    this.starting.clear();
    for (const [, settle] of this.running) settle({ lost: true });
    this.running.clear();
  }
}
