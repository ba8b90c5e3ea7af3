// The start and the end both long-lived agents (the standalone agent and the cluster node) share: the
// root dir's lock taken and the runtime connected before anything else (either failing ends the agent
// with exit 1), the serving certificate of their TLS port, and serving until SIGTERM/SIGINT.

import { readFile } from 'node:fs/promises';
import { lockRootDir, RootDirLockedError, RootDirUnavailableError, type RootDirLock } from '../runtime/root-lock.js';
import { ensureServingCert, type ExtraNames } from '../server/pki.js';
import type { Logger } from '../util/logger.js';

/**
 * Takes the root dir's lock, then connects the runtime. Undefined when another agent holds the dir or
 * the runtime does not connect (said on stderr; the lock is released again); other errors are thrown.
 */
export async function lockAndConnect<T>(
  rootDir: string,
  stderr: NodeJS.WritableStream,
  log: Logger,
  connect: () => Promise<T>,
): Promise<{ lock: RootDirLock; connected: T } | undefined> {
  let lock: RootDirLock;
  try {
    lock = lockRootDir(rootDir, 'agent');
  } catch (err) {
    if (err instanceof RootDirLockedError || err instanceof RootDirUnavailableError) {
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

/**
 * The TLS port's certificate and key: the files given (--tls-cert-file, --tls-private-key-file), else
 * one made for host and kept in the root dir's pki, with the CA file that signed it.
 */
export async function servingCert(
  rootDir: string,
  given: { tlsCertFile?: string; tlsPrivateKeyFile?: string },
  host: string,
  nodeName: string,
  extra: ExtraNames = {},
): Promise<{ cert: Buffer; key: Buffer; caFile?: string }> {
  if (given.tlsCertFile && given.tlsPrivateKeyFile) return { cert: await readFile(given.tlsCertFile), key: await readFile(given.tlsPrivateKeyFile) };
  const made = await ensureServingCert(rootDir, host, nodeName, extra);
  return { cert: await readFile(made.certFile), key: await readFile(made.keyFile), caFile: made.caFile };
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
