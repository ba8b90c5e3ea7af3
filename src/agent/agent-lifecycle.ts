// The start and the end both agents (standalone and cluster node) share: the root dir's lock taken and
// the runtime connected before anything else (either failing ends the agent with exit 1), and serving
// until SIGTERM/SIGINT.

import { lockRootDir, RootDirLockedError, type RootDirLock } from '../runtime/root-lock.js';
import type { Logger } from '../util/logger.js';

/**
 * Takes the root dir's lock, then connects the runtime. Undefined when another agent holds the dir or
 * the runtime does not connect (said on stderr; the lock is released again); other errors are thrown.
 */
export async function lockAndConnect<T>(rootDir: string, stderr: NodeJS.WritableStream, log: Logger, connect: () => Promise<T>): Promise<{ lock: RootDirLock; connected: T } | undefined> {
  let lock: RootDirLock;
  try {
    lock = lockRootDir(rootDir, 'agent');
  } catch (err) {
    if (err instanceof RootDirLockedError) {
      stderr.write(`error: ${err.message}\n`);
      return undefined;
    }
    throw err;
  }
  try {
    return { lock, connected: await connect() };
  } catch (err) {
    reportFailure(err, 'Could not connect to the container runtime', stderr, log);
    lock.release();
    return undefined;
  }
}

/** Logs what failed and says it on stderr as `error: …`; the agent's exit code (1). */
export function reportFailure(err: unknown, what: string, stderr: NodeJS.WritableStream, log: Logger): number {
  log.error(what, { err: (err as Error).message });
  stderr.write(`error: ${(err as Error).message}\n`);
  return 1;
}

/** Resolves once the signal is aborted (at once without one), logging that serving ends. */
export async function serveUntilAborted(signal: AbortSignal | undefined, log: Logger): Promise<void> {
  if (signal && !signal.aborted) {
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  log.info('Shutting down: no longer serving', { signal: String(signal?.reason ?? 'SIGTERM') });
}
