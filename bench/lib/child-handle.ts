// The bench's side of a measured child process: fork it, wait until it serves, call it, listen to
// its notes, read its memory from /proc, and make sure it is gone afterwards.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BOOTED, STOP, type CallMessage, type ChildMessage } from './protocol.js';
import { readCpu, readMemory, type CpuSample, type MemorySample } from './proc.js';

/** Absolute path of a compiled program under dist/bench/procs/. */
export function procScript(name: string): string {
  return fileURLToPath(new URL(`../procs/${name}.js`, import.meta.url));
}

const TAIL_BYTES = 16 * 1024;

export class ChildHandle {
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private listeners = new Map<string, Array<(data: unknown) => void>>();
  private tail = '';
  private exited: Promise<void>;

  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    proc.on('message', (raw: unknown) => this.dispatch(raw as ChildMessage));
    this.exited = new Promise((resolve) =>
      proc.once('exit', (code, signal) => {
        const err = new Error(`${name} exited (code ${code}, signal ${signal}) before replying${this.tailNote()}`);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** Forks a program from dist/bench/procs and resolves once it is ready for calls. */
  static async start(program: string, opts: { env?: NodeJS.ProcessEnv; bootTimeoutMs?: number } = {}): Promise<ChildHandle> {
    const proc = fork(procScript(program), [], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: [],
      env: { ...process.env, ...opts.env },
    });
    const handle = new ChildHandle(program, proc);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${program} did not start${handle.tailNote()}`)), opts.bootTimeoutMs ?? 30_000);
      handle.onNote(BOOTED, () => {
        clearTimeout(timer);
        resolve();
      });
      void handle.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${program} exited during start-up${handle.tailNote()}`));
      });
    }).catch(async (err) => {
      await handle.kill();
      throw err;
    });
    return handle;
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  call<T>(method: string, params?: unknown, timeoutMs = 120_000): Promise<T> {
    const id = this.nextId++;
    const msg: CallMessage = { kind: 'call', id, method, params };
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}.${method} timed out after ${timeoutMs} ms${this.tailNote()}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      if (!this.proc.connected) {
        this.pending.get(id)!.reject(new Error(`${this.name} is not connected${this.tailNote()}`));
        this.pending.delete(id);
        return;
      }
      this.proc.send(msg);
    });
  }

  onNote(name: string, fn: (data: unknown) => void): void {
    const list = this.listeners.get(name) ?? [];
    list.push(fn);
    this.listeners.set(name, list);
  }

  memory(): MemorySample {
    return readMemory(this.pid);
  }

  cpu(): CpuSample {
    return readCpu(this.pid);
  }

  /** Asks the child to clean up and report; kills it if it does not exit in time. */
  async stop<T>(params?: unknown, timeoutMs = 60_000): Promise<T> {
    try {
      const result = await this.call<T>(STOP, params, timeoutMs);
      await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
      return result;
    } finally {
      await this.kill();
    }
  }

  /** SIGTERM (the child's cleanup path), then SIGKILL if it lingers. */
  async kill(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    const gone = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref())]);
    if (!gone) this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** SIGKILL at once, as a crash would end it. */
  async killHard(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** The last output the child wrote (its log), for error messages. */
  output(): string {
    return this.tail;
  }

  private tailNote(): string {
    const t = this.tail.trim();
    return t ? `\n--- ${this.name} output (tail) ---\n${t.split('\n').slice(-30).join('\n')}` : '';
  }

  private dispatch(m: ChildMessage): void {
    if (!m) return;
    if (m.kind === 'reply') {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`${this.name}: ${m.error}`));
    } else if (m.kind === 'note') {
      for (const fn of this.listeners.get(m.name) ?? []) fn(m.data);
    }
  }
}
