// How commands reach the agent of a root dir: HTTP over its unix socket, starting the agent on demand
// (detached, its output appended to `<root>/agent.log`) when none runs there. A connect that fails
// while a live agent holds the root dir's lock (it is starting and not listening yet, or its listen
// backlog is full: EAGAIN) is tried again until it goes through or the agent is gone, within
// agentConnectPatienceMs (longer for an agent still starting): nothing was sent, so the retry is safe
// for every request.

import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { request, type IncomingMessage, type RequestOptions } from 'node:http';
import { join } from 'node:path';
import { LOCK_FILE, lockOwner } from '../runtime/root-lock.js';
import { builtin } from '../util/builtins.js';
import { podvisorExecutable } from './executable.js';
import { warningTexts } from '../kubeapi/warnings.js';
import { sleepLong } from '../util/timer.js';

export const SOCKET_NAME = 'podvisor.sock';
export const AGENT_LOG = 'agent.log';

export interface AgentReply {
  status: number;
  body: string;
  /** The texts of the reply's Warning headers (kubectl prints each as `Warning: <text>`). */
  warnings?: string[];
  json<T = unknown>(): T;
}

/** No agent answers on the root dir's socket. */
export class NoAgentError extends Error {
  constructor(
    readonly rootDir: string,
    message = `no podvisor agent runs for root dir ${rootDir} (start one with "podvisor agent --root-dir ${rootDir}" or "podvisor up -d")`,
  ) {
    super(message);
    this.name = 'NoAgentError';
  }
}

/** The agent closed the connection before it answered (it exited or was killed mid-request). */
export class AgentGoneError extends Error {
  constructor(
    readonly rootDir: string,
    cause: string,
  ) {
    super(
      `the podvisor agent of root dir ${rootDir} stopped before it answered (${cause}); what it was asked may be half done: check with "podvisor agent status --root-dir ${rootDir}"`,
    );
    this.name = 'AgentGoneError';
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || (err as Error).message === 'socket hang up';
}

/** err as AgentGoneError when it says the agent closed the connection mid-reply (a stream it cut). */
export function agentGone(rootDir: string, err: unknown): unknown {
  return isGone(err) ? new AgentGoneError(rootDir, (err as NodeJS.ErrnoException).code ?? (err as Error).message) : err;
}

/** The agent's unix socket in a root dir. */
export const socketOf = (rootDir: string) => join(rootDir, SOCKET_NAME);

/** A connect that reached no listener: nothing of the request was sent. */
function isConnectFailure(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK' || code === 'EAGAIN';
}

/** How long a command waits for the socket of an agent that holds the root dir but does not accept (a burst of clients, a busy agent). */
export const agentConnectPatienceMs = 60_000;

/**
 * How long after taking the root dir an agent may still be starting (the runtime service started,
 * restored pods' first statuses, a loaded host): a command waits for such an agent's socket
 * meanwhile, however long it has waited itself.
 */
export const agentStartBudgetMs = 120_000;

/** After this long without a connection, the command says on stderr what it waits for (once). */
const sayWaitingAfterMs = 1_000;

/** A live agent holds the root dir but accepted no connection in time (see agentStream). */
export class AgentNotAnsweringError extends NoAgentError {
  constructor(rootDir: string, pid: number, cause: string, waitedMs: number) {
    super(
      rootDir,
      `the podvisor agent of root dir ${rootDir} (pid ${pid}) accepted no connection in ${Math.round(waitedMs / 1000)}s (${cause}); see ${join(rootDir, AGENT_LOG)}`,
    );
    this.name = 'AgentNotAnsweringError';
  }
}

/** When the root dir's lock was taken (its file's mtime), 0 when unknown. */
function lockTakenAt(rootDir: string): number {
  try {
    return statSync(join(rootDir, LOCK_FILE)).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * The response itself, for streams (logs -f). A failed connect is tried again while a live agent
 * holds the root dir's lock, for agentConnectPatienceMs, and as long as that agent may still be
 * starting (agentStartBudgetMs since it took the lock); rejects with NoAgentError when none does
 * (AgentNotAnsweringError when it never accepted).
 */
export async function agentStream(
  rootDir: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<IncomingMessage> {
  const since = Date.now();
  const deadline = since + agentConnectPatienceMs;
  let said = false;
  for (let attempt = 0; ; attempt++) {
    try {
      return await requestOnce(rootDir, method, path, body, headers);
    } catch (err) {
      if (!isConnectFailure(err)) throw err;
      const owner = lockOwner(rootDir);
      if (owner?.command !== 'agent') throw new NoAgentError(rootDir);
      if (Date.now() >= Math.max(deadline, lockTakenAt(rootDir) + agentStartBudgetMs))
        throw new AgentNotAnsweringError(rootDir, owner.pid, (err as NodeJS.ErrnoException).code ?? (err as Error).message, Date.now() - since);
      if (!said && Date.now() - since >= sayWaitingAfterMs) {
        said = true;
        process.stderr.write(
          `waiting for the podvisor agent of root dir ${rootDir} (pid ${owner.pid}) to accept connections; see ${join(rootDir, AGENT_LOG)}\n`,
        );
      }
      // 10 ms doubling to 200 ms, spread so that a burst of clients does not come back at once.
      const step = Math.min(200, 10 * 2 ** Math.min(attempt, 5));
      await sleepLong(step / 2 + Math.random() * step);
    }
  }
}

function requestOnce(rootDir: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: socketOf(rootDir),
        // No TLS on a unix socket: without a server name Node's agent works one out from the Host
        // header, and its IP check compiles the IPv6 pattern: 15–30 ms of a client command's start under load.
        servername: '',
        method,
        path,
        agent: false,
        headers: { ...(data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}), ...headers },
      } as RequestOptions,
      resolve,
    );
    req.on('error', (err) =>
      reject(isConnectFailure(err) ? err : isGone(err) ? new AgentGoneError(rootDir, (err as NodeJS.ErrnoException).code ?? err.message) : err),
    );
    if (data) req.write(data);
    req.end();
  });
}

export async function agentRequest(rootDir: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AgentReply> {
  const res = await agentStream(rootDir, method, path, body, headers);
  const chunks: Buffer[] = [];
  try {
    for await (const c of res) chunks.push(c as Buffer);
  } catch (err) {
    throw isGone(err) ? new AgentGoneError(rootDir, (err as NodeJS.ErrnoException).code ?? (err as Error).message) : err;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return { status: res.statusCode ?? 0, body: text, warnings: warningTexts(res.headers.warning), json: <T>() => JSON.parse(text) as T };
}

/** The Status message of a failed reply (its body when not a Status). */
export function replyMessage(r: AgentReply): { reason: string; message: string } {
  try {
    const s = r.json<{ kind?: string; reason?: string; message?: string }>();
    if (s.kind === 'Status') return { reason: s.reason ?? 'Unknown', message: s.message ?? '' };
  } catch {
    // not JSON
  }
  return { reason: 'Unknown', message: r.body.trim() || `HTTP ${r.status}` };
}

export async function agentRunning(rootDir: string): Promise<boolean> {
  try {
    return (await agentRequest(rootDir, 'GET', '/healthz')).status === 200;
  } catch {
    return false;
  }
}

/**
 * Makes sure an agent serves rootDir: when none answers, starts `podvisor agent --root-dir DIR
 * [agentArgs]` detached with its output in `<root>/agent.log`, and waits until it answers.
 */
export async function ensureAgent(rootDir: string, agentArgs: string[], timeoutMs = 30_000): Promise<{ started: boolean; pid?: number }> {
  if (await agentRunning(rootDir)) return { started: false };
  const owner = lockOwner(rootDir);
  if (owner && owner.command !== 'agent') {
    throw new Error(`root dir ${rootDir} is in use by "podvisor ${owner.command}" (pid ${owner.pid}); stop it or pass another --root-dir`);
  }
  let pid: number | undefined;
  let exited: string | undefined;
  if (!owner) {
    mkdirSync(rootDir, { recursive: true, mode: 0o700 });
    const logPath = join(rootDir, AGENT_LOG);
    const fd = openSync(logPath, 'a', 0o600);
    try {
      const main = podvisorExecutable();
      // Loaded here: the commands that only talk to a running agent never need child_process.
      const child = builtin('node:child_process').spawn(process.execPath, [main, 'agent', '--root-dir', rootDir, ...agentArgs], {
        detached: true,
        stdio: ['ignore', fd, fd],
        cwd: rootDir,
      });
      pid = child.pid;
      child.once('exit', (code) => (exited = `the agent exited with status ${code ?? 'unknown'}`));
      child.unref();
    } finally {
      closeSync(fd);
    }
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await agentRunning(rootDir)) return exited ? { started: false } : { started: true, ...(pid !== undefined ? { pid } : {}) };
    // The agent started here lost the root dir to another one started at the same moment (a second
    // `up -d`): that one is the agent to use, and agentRunning waits for its socket.
    if (exited && lockOwner(rootDir)?.command !== 'agent') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  let tail = '';
  try {
    tail = readFileSync(join(rootDir, AGENT_LOG), 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    // no log
  }
  throw new Error(`${exited ?? 'the agent did not answer in time'}; see ${join(rootDir, AGENT_LOG)}${tail ? `:\n${tail}` : ''}`);
}

/**
 * Asks the agent of rootDir to stop (graceful, as SIGTERM) and waits until it has let go of the
 * root dir. Resolves to false when no agent ran there.
 */
export async function stopAgent(rootDir: string, timeoutMs = 60_000): Promise<boolean> {
  let reply: AgentReply;
  try {
    reply = await agentRequest(rootDir, 'POST', '/podvisor/v1/stop');
  } catch (err) {
    if (err instanceof NoAgentError) return false;
    throw err;
  }
  if (reply.status !== 202) throw new Error(`the agent refused to stop: ${replyMessage(reply).message}`);
  const deadline = Date.now() + timeoutMs;
  while (lockOwner(rootDir)?.command === 'agent') {
    if (Date.now() > deadline) throw new Error(`the agent for ${rootDir} still runs after ${Math.round(timeoutMs / 1000)}s; see ${join(rootDir, AGENT_LOG)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}
