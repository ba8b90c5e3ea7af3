// `podvisor agent` as a real process for the scenarios that measure the daemon and its client
// commands: start it on a root dir, call its unix socket, time CLI commands, find the runtime service
// and the containers it leaves behind, and clean everything up.

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockHolder, processState, runtimeStateDir } from '../../src/runtime/process-runtime.js';
import { preciseNow } from './stats.js';

/** The compiled CLI, `podvisor` as `npm install` puts it on PATH. */
export const cliPath = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

export interface SocketReply {
  status: number;
  bytes: number;
  body: string;
  /** ms from sending the request to the last byte of the reply. */
  ms: number;
}

/** One HTTP request over a unix socket (a fresh connection, as the CLI makes). */
export function socketGet(socketPath: string, path: string, method = 'GET', body?: unknown): Promise<SocketReply> {
  return new Promise((resolve, reject) => {
    const t0 = preciseNow();
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath, path, method, agent: false, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, bytes: buf.length, body: buf.toString('utf8'), ms: preciseNow() - t0 });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

export interface CliRun {
  code: number | null;
  wallMs: number;
  stdout: string;
  stderr: string;
}

/** Runs `node ARGS` (the CLI when args start with cliPath) and times it from spawn to exit. */
export function runNode(args: string[], timeoutMs = 600_000, env?: NodeJS.ProcessEnv): Promise<CliRun> {
  return runProgram(process.execPath, args, timeoutMs, env);
}

/** Runs a program (kubectl, pm2) and times it from spawn to exit. */
export function runProgram(file: string, args: string[], timeoutMs = 600_000, env?: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const t0 = preciseNow();
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-64 * 1024)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-64 * 1024)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, wallMs: preciseNow() - t0, stdout, stderr });
    });
  });
}

export const podvisor = (args: string[], timeoutMs?: number) => runNode([cliPath, ...args], timeoutMs);

/** Whether this build has the command (`podvisor NAME --help` exits 0). */
export async function hasCommand(name: string): Promise<boolean> {
  const r = await podvisor([name, '--help'], 30_000);
  return r.code === 0;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A running `podvisor agent --root-dir DIR`, its output in `<DIR>/bench-agent.log`. */
export class AgentProcess {
  private exited: Promise<void>;

  private constructor(
    readonly rootDir: string,
    private readonly proc: ChildProcess,
    /** ms from spawn until /healthz answered 200. */
    readonly readyMs: number,
  ) {
    this.exited = new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', () => r())));
  }

  get socket(): string {
    return join(this.rootDir, 'podvisor.sock');
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  /** An agent process spawned by the caller, for the same stop and cleanup. */
  static wrap(rootDir: string, proc: ChildProcess): AgentProcess {
    return new AgentProcess(rootDir, proc, NaN);
  }

  static async start(rootDir: string, extraArgs: string[] = [], timeoutMs = 60_000): Promise<AgentProcess> {
    const out = openSync(join(rootDir, 'bench-agent.log'), 'a');
    const t0 = preciseNow();
    const proc = spawn(process.execPath, [cliPath, 'agent', '--root-dir', rootDir, ...extraArgs], { stdio: ['ignore', out, out] });
    closeSync(out);
    let gone = false;
    proc.once('exit', () => (gone = true));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (gone) throw new Error(`podvisor agent exited during start-up:\n${tail(join(rootDir, 'bench-agent.log'))}`);
      try {
        const r = await socketGet(join(rootDir, 'podvisor.sock'), '/healthz');
        if (r.status === 200) return new AgentProcess(rootDir, proc, preciseNow() - t0);
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`podvisor agent did not answer /healthz within ${timeoutMs} ms:\n${tail(join(rootDir, 'bench-agent.log'))}`);
      }
      await sleep(20);
    }
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get(path: string): Promise<SocketReply> {
    return socketGet(this.socket, path);
  }

  /** SIGTERM, then SIGKILL if it has not exited within graceMs. */
  async stop(graceMs = 60_000): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    const done = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** kill -9, as a crash. */
  async killHard(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '';
  }
}

/** The pid of the process runtime service of a root dir, when one runs. */
export function runtimeServicePid(rootDir: string): number | undefined {
  return lockHolder(runtimeStateDir(rootDir), (pid, start) => processState(pid, start) === 'running');
}

/** pid → start time (field 22 of /proc/<pid>/stat), so a later kill never hits a recycled pid. */
export type ProcessSet = Map<number, string>;

function statOf(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Every descendant of pid (children, their children, …) with its start time. */
export function descendants(pid: number): ProcessSet {
  const parent = new Map<number, number>();
  const start = new Map<number, string>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const f = statOf(Number(e));
    if (!f) continue;
    parent.set(Number(e), Number(f[1]));
    start.set(Number(e), f[19]!);
  }
  const out: ProcessSet = new Map();
  const queue = [pid];
  while (queue.length) {
    const p = queue.pop()!;
    for (const [c, pp] of parent) {
      if (pp === p && !out.has(c)) {
        out.set(c, start.get(c)!);
        queue.push(c);
      }
    }
  }
  return out;
}

/** SIGKILLs those of set still alive with the same start time. */
export function killSet(set: ProcessSet): number {
  let killed = 0;
  for (const [pid, st] of set) {
    const f = statOf(pid);
    if (!f || f[19] !== st) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

/** Median of values (NaN when empty). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
}

/**
 * Tears down what an agent scenario left: every API pod deleted at once, the agent stopped, the
 * runtime service (if any) stopped, and any process still descending from them killed.
 */
export async function teardownAgent(rootDir: string, agent: AgentProcess | undefined, leftovers: ProcessSet = new Map()): Promise<void> {
  const svc = runtimeServicePid(rootDir);
  const family: ProcessSet = new Map(leftovers);
  if (agent?.alive) for (const [p, s] of descendants(agent.pid)) family.set(p, s);
  if (svc) for (const [p, s] of descendants(svc)) family.set(p, s);
  if (agent?.alive) {
    await podvisor(['down', '--all', '--grace-period', '0', '--timeout', '2m', '--root-dir', rootDir], 180_000).catch(() => undefined);
    await agent.stop();
  }
  if (svc) {
    try {
      process.kill(svc, 'SIGTERM');
    } catch {
      // gone
    }
    for (let i = 0; i < 100 && runtimeServicePid(rootDir); i++) await sleep(100);
  }
  killSet(family);
  if (svc) killSet(new Map([[svc, statOf(svc)?.[19] ?? '']]));
}
