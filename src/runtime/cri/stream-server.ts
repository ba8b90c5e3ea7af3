// A runtime's streaming server, as the CRI has it (the kubelet's pkg/kubelet/cri/streaming and its
// request cache): Exec and Attach answer a single-use URL that expires in a minute, served on a unix
// socket of mode 0600 (or loopback HTTP); the client upgrades it to SPDY/3.1 with remotecommand's
// streams (error, stdin, stdout, stderr, resize) and reads the command's exit in a v4 Status.

import { randomBytes } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { SpdySession, type SpdyStream } from '../../spdy/framer.js';
import type { StreamingRequest } from '../cri.js';
import { exitStatus, type ExecSession } from '../streams.js';

export type StreamRequest = StreamingRequest;

/** What the server runs: a command in a container, or an attach to its output. */
export interface StreamBackend {
  exec(req: StreamRequest): ExecSession | Promise<ExecSession>;
  attach(req: Omit<StreamRequest, 'cmd'>): ExecSession | Promise<ExecSession>;
  /** Whether the container still runs: a URL of one that stopped or was removed is refused. */
  running(containerId: string): boolean;
}

export interface StreamServer {
  /** A one-time URL for an exec (valid for a minute, as the kubelet's request cache). */
  execUrl(req: StreamRequest): string;
  attachUrl(req: Omit<StreamRequest, 'cmd'>): string;
  /** Forgets the URLs not yet used of a container that stopped or was removed. */
  revoke(containerId: string): void;
  close(): Promise<void>;
}

/** Where a streaming server listens: a unix socket (its URLs are `http+unix://<path>/…`) or loopback TCP. */
export type StreamListen = { socketPath: string } | { host: string };

/** The scheme of a streaming URL on a unix socket: the socket's path, escaped, is the URL's host. */
export const UNIX_STREAM_SCHEME = 'http+unix:';

/** How long an answered URL stays usable (the kubelet's streaming cache TTL). */
const TOKEN_TTL_MS = 60_000;
const MAX_PENDING = 1000;
const STREAM_WAIT_MS = 30_000;
const PROTOCOLS = ['v4.channel.k8s.io'];

type Pending = { kind: 'exec'; req: StreamRequest; expires: number } | { kind: 'attach'; req: Omit<StreamRequest, 'cmd'>; expires: number };

function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headersDistinct?.['x-stream-protocol-version'] ?? []).flatMap((v) => v.split(',').map((s) => s.trim()));
}

function refuse(socket: Duplex, code: number, reason: string, message: string): void {
  socket.end(
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
  );
}

/**
 * Serves exec and attach on a unix socket of mode 0600, so only its owner (the runtime's user, as
 * the agent is) can use a URL, or on 127.0.0.1 (a port of the system's choosing) when told a host.
 */
export async function startStreamServer(
  backend: StreamBackend,
  opts: { logger: Logger; listen: StreamListen; clock: Pick<Clock, 'now'> },
): Promise<StreamServer> {
  const pending = new Map<string, Pending>();
  const sessions = new Set<SpdySession>();
  const server = createServer((_req, res) => {
    res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('streaming requests need an upgrade to SPDY/3.1');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const m = /^\/(exec|attach)\/([A-Za-z0-9_-]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
    const p = m ? pending.get(m[2]!) : undefined;
    if (!m || !p || p.kind !== m[1] || p.expires < opts.clock.now()) return refuse(socket, 404, 'Not Found', 'unknown or expired streaming request');
    pending.delete(m[2]!);
    if (!backend.running(p.req.containerId)) return refuse(socket, 404, 'Not Found', `container ${p.req.containerId} is no longer running`);
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'spdy/3.1') return refuse(socket, 400, 'Bad Request', 'only SPDY/3.1 streams are served');
    const protocol = offeredProtocols(req).find((v) => PROTOCOLS.includes(v));
    if (!protocol) return refuse(socket, 403, 'Forbidden', `none of the offered stream protocols is supported (${PROTOCOLS.join(', ')})`);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
    const session = new SpdySession(socket, head);
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    const cmd = p.kind === 'exec' ? p.req.cmd : [];
    serveSession(session, p.req, cmd, () => (p.kind === 'exec' ? backend.exec(p.req) : backend.attach(p.req)), opts.logger);
  });
  const base = await listen(server, opts.listen);
  const issue = (p: Pending): string => {
    const now = opts.clock.now();
    for (const [t, q] of pending) if (q.expires < now) pending.delete(t);
    if (pending.size >= MAX_PENDING) throw new Error('too many pending streaming requests');
    const token = randomBytes(12).toString('base64url');
    pending.set(token, p);
    return `${base}/${p.kind}/${token}`;
  };
  return {
    execUrl: (req) => issue({ kind: 'exec', req, expires: opts.clock.now() + TOKEN_TTL_MS }),
    attachUrl: (req) => issue({ kind: 'attach', req, expires: opts.clock.now() + TOKEN_TTL_MS }),
    revoke: (containerId) => {
      for (const [t, q] of pending) if (q.req.containerId === containerId) pending.delete(t);
    },
    close: async () => {
      for (const s of sessions) s.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Listens where told; answers the base of the URLs. A unix socket is made 0600 before its first URL. */
async function listen(server: Server, where: StreamListen): Promise<string> {
  if ('socketPath' in where) rmSync(where.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('socketPath' in where) server.listen(where.socketPath, () => resolve());
    else server.listen(0, where.host, () => resolve());
  });
  if ('socketPath' in where) {
    chmodSync(where.socketPath, 0o600);
    return `${UNIX_STREAM_SCHEME}//${encodeURIComponent(where.socketPath)}`;
  }
  const addr = server.address() as AddressInfo;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

/** Waits for the client's streams, runs the session, reports its end on the error stream. */
function serveSession(
  session: SpdySession,
  req: Omit<StreamRequest, 'cmd'>,
  cmd: string[],
  start: () => ExecSession | Promise<ExecSession>,
  logger: Logger,
): void {
  const want = new Set(['error']);
  if (req.stdin) want.add('stdin');
  if (req.stdout) want.add('stdout');
  if (req.stderr && !req.tty) want.add('stderr');
  if (req.tty) want.add('resize');
  const streams = new Map<string, SpdyStream>();
  let started = false;
  const timer = setTimeout(() => session.close(), STREAM_WAIT_MS);
  session.on('close', () => clearTimeout(timer));
  session.on('stream', (s: SpdyStream) => {
    s.reply();
    streams.set(s.headers['streamtype'] ?? '', s);
    if (!started && [...want].every((t) => streams.has(t))) {
      started = true;
      clearTimeout(timer);
      run().catch((err) => {
        logger.warn('Streaming session failed', { err: String(err) });
        session.close();
      });
    }
  });

  async function run(): Promise<void> {
    const errStream = streams.get('error')!;
    errStream.resume();
    const report = async (result: number | Error) => {
      await new Promise<void>((r) =>
        errStream.end(
          JSON.stringify(exitStatus(result instanceof Error ? new Error(`error executing command in container: ${result.message}`) : result, cmd)),
          () => r(),
        ),
      );
      await session.end();
    };
    let exec: ExecSession;
    try {
      exec = await start();
    } catch (err) {
      await report(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    session.on('close', () => exec.kill());
    const stdin = streams.get('stdin');
    if (stdin && exec.stdin) stdin.pipe(exec.stdin);
    else stdin?.resume();
    streams.get('resize')?.on('data', (d: Buffer) => {
      for (const line of d.toString('utf8').split('\n')) {
        try {
          const size = JSON.parse(line) as { Width?: number; Height?: number };
          if (typeof size.Width === 'number' && typeof size.Height === 'number') exec.resize(size.Width, size.Height);
        } catch {
          // not a whole size message: ignored, as the kubelet does
        }
      }
    });
    const outs = (['stdout', 'stderr'] as const).map((name) => {
      const from = exec[name];
      const to = streams.get(name);
      if (!to) {
        from?.resume();
        return Promise.resolve();
      }
      if (!from) return new Promise<void>((r) => to.end(r));
      return new Promise<void>((resolve) => {
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          to.end(() => resolve());
        };
        from.on('end', finish);
        from.on('close', finish);
        from.on('error', finish);
        from.pipe(to, { end: false });
      });
    });
    let result: number | Error;
    try {
      result = await exec.exit;
    } catch (err) {
      result = err instanceof Error ? err : new Error(String(err));
    }
    await Promise.all(outs);
    await report(result);
  }
}
