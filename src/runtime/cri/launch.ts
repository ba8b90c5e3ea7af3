// Connecting to a CRI endpoint, starting the runtime service first when nothing answers there (the
// process runtime's `podvisor runtime serve`): detached in its own session, its log in a file, so it
// outlives whoever started it.

import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../util/logger.js';
import { CriRuntimeClient, isUnavailable } from './client.js';

export interface LaunchOptions {
  endpoint: string;
  logger: Logger;
  /** argv that starts a service listening on the endpoint; without it nothing is started. */
  command?: string[];
  /** Where the started service writes its log (appended, 0600). */
  logFile?: string;
  /** How long to wait for a started service to answer (default 30 s). */
  startTimeoutMs?: number;
  /** The client generates its message codecs ahead of its first calls (CriClientOptions.warmCodecs). */
  warmCodecs?: boolean;
}

export interface LaunchedRuntime {
  client: CriRuntimeClient;
  /** The pid of the service this call started; undefined when one was already serving. */
  startedPid?: number;
}

/** A client on the endpoint that knows the runtime (identify()), once it answers; starts the service when nothing does. */
export async function connectOrLaunch(opts: LaunchOptions): Promise<LaunchedRuntime> {
  const client = new CriRuntimeClient({ endpoint: opts.endpoint, logger: opts.logger, ...(opts.warmCodecs ? { warmCodecs: true } : {}) });
  const ready = async () => {
    try {
      await client.identify();
      return true;
    } catch (err) {
      if (isUnavailable(err)) return false;
      await client.close();
      throw err;
    }
  };
  if (await ready()) return { client };
  if (!opts.command) {
    await client.close();
    throw new Error(`no container runtime answers on ${opts.endpoint}`);
  }

  const [file, ...args] = opts.command;
  const logFd = opts.logFile ? openSync(opts.logFile, 'a', 0o600) : undefined;
  let exited: { code: number | null } | undefined;
  const child = spawn(file!, args, { detached: true, stdio: ['ignore', logFd ?? 'ignore', logFd ?? 'ignore'] });
  if (logFd !== undefined) closeSync(logFd);
  child.once('exit', (code) => (exited = { code }));
  child.once('error', () => (exited = { code: null }));
  child.unref();

  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    if (await ready()) return { client, ...(exited ? {} : { startedPid: child.pid }) };
    // Exit 3: another service took the root dir first (a concurrent start); it will answer.
    if ((exited && exited.code !== 3) || Date.now() > deadline) {
      await client.close();
      const tail = opts.logFile ? lastLines(opts.logFile, 5) : '';
      throw new Error(`the runtime service did not start on ${opts.endpoint}${exited ? ` (exit code ${String(exited.code)})` : ''}${tail ? `: ${tail}` : ''}`);
    }
    await sleep(delay);
  }
}

function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-n).join(' | ');
  } catch {
    return '';
  }
}
