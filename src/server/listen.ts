// The agent's listeners around one router: the unix socket `<root>/podvisor.sock` (0600) always, TCP
// with TLS and the bearer token when a port is given, and the unauthenticated read-only port when
// asked for. The access policy of each listener runs before the router.

import { chmod, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { authorize, type AccessPolicy, type TokenAuthenticator } from './access.js';
import { setRequestInfo, type Router } from '../http/router.js';
import { rawStatusResponse, sendStatus } from '../http/status.js';

export const SOCKET_NAME = 'podvisor.sock';

/**
 * The unix socket's listen backlog: connections the kernel holds while the agent is busy, enough for
 * hundreds of commands at once (Linux caps it at net.core.somaxconn; a client that still finds it full
 * gets EAGAIN and tries again, see cli/agent-client.ts).
 */
export const SOCKET_BACKLOG = 4096;

export interface ListenOptions {
  router: Router;
  socketPath: string;
  tcp?: TcpListener;
  /**
   * A second TLS listener for the API's clients inside pods (the `kubernetes` Service's endpoint),
   * on a port of its own; anonymous access is never allowed there.
   */
  inCluster?: Omit<TcpListener, 'anonymous'>;
  readOnly?: { address: string; port: number };
}

export interface TcpListener {
  address: string;
  port: number;
  cert: Buffer;
  key: Buffer;
  token: string;
  anonymous: boolean;
  /** Bearer tokens beside the agent's own (bound service-account tokens). */
  authenticate?: TokenAuthenticator;
}

export interface Listening {
  socketPath: string;
  /** The bound TCP port (when --port 0 asked for an ephemeral one). */
  tcpPort?: number;
  readOnlyPort?: number;
  /** The bound port of the in-cluster listener. */
  inClusterPort?: number;
  close(): Promise<void>;
}

function wire(server: Server, router: Router, policy: AccessPolicy): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const who = authorize(req, policy);
    if ('kind' in who) {
      req.resume();
      sendStatus(res, who);
      return;
    }
    setRequestInfo(req, who);
    void router.dispatch(req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const who = authorize(req, policy);
    if ('kind' in who) {
      socket.end(rawStatusResponse(who));
      return;
    }
    setRequestInfo(req, who);
    router.dispatchUpgrade(req, socket, head);
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  // Long-lived streams (log follow, watch) must not be cut by the default timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
}

function listenOn(server: Server, ...args: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    (server.listen as (...a: unknown[]) => void)(...args, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Starts every listener asked for; on any failure the ones already open are closed again. */
export async function listen(opts: ListenOptions): Promise<Listening> {
  const servers: Server[] = [];
  const out: Listening = {
    socketPath: opts.socketPath,
    close: async () => {
      await Promise.all(servers.map(closeServer));
      await rm(opts.socketPath, { force: true });
    },
  };
  try {
    const unix = createHttpServer();
    wire(unix, opts.router, { kind: 'unix' });
    // A socket left by an agent that died: the root dir lock says no other agent owns it.
    await rm(opts.socketPath, { force: true });
    // Created 0600 from the start (umask), then chmod to be sure whatever the umask was.
    const oldMask = process.umask(0o177);
    try {
      await listenOn(unix, { path: opts.socketPath, backlog: SOCKET_BACKLOG });
    } finally {
      process.umask(oldMask);
    }
    servers.push(unix);
    await chmod(opts.socketPath, 0o600);

    const tlsListener = async (t: TcpListener): Promise<number> => {
      const tls = createHttpsServer({ cert: t.cert, key: t.key, minVersion: 'TLSv1.2' });
      wire(tls as unknown as Server, opts.router, {
        kind: 'tcp',
        token: t.token,
        anonymous: t.anonymous,
        ...(t.authenticate ? { authenticate: t.authenticate } : {}),
      });
      await listenOn(tls as unknown as Server, t.port, t.address);
      servers.push(tls as unknown as Server);
      return (tls.address() as { port: number }).port;
    };
    if (opts.tcp) out.tcpPort = await tlsListener(opts.tcp);
    if (opts.inCluster) out.inClusterPort = await tlsListener({ ...opts.inCluster, anonymous: false });
    if (opts.readOnly) {
      const ro = createHttpServer();
      wire(ro, opts.router, { kind: 'read-only' });
      await listenOn(ro, opts.readOnly.port, opts.readOnly.address);
      servers.push(ro);
      out.readOnlyPort = (ro.address() as { port: number }).port;
    }
  } catch (err) {
    await out.close().catch(() => {});
    throw err;
  }
  return out;
}
