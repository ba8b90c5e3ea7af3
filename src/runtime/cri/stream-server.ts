// A runtime's streaming server, as the CRI has it: Exec and Attach answer a one-time URL on a loopback
// HTTP server; the client upgrades it to SPDY/3.1 with remotecommand's streams (error, stdin, stdout,
// stderr, resize) and reads the command's exit in a v4 Status on the error stream.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../util/logger.js';
import { SpdySession, type SpdyStream } from '../../spdy/framer.js';
import type { StreamingRequest } from '../cri.js';
import { exitStatus, type ExecSession } from '../streams.js';

export type StreamRequest = StreamingRequest;

/** What the server runs: a command in a container, or an attach to its output. */
export interface StreamBackend {
  exec(req: StreamRequest): ExecSession | Promise<ExecSession>;
  attach(req: Omit<StreamRequest, 'cmd'>): ExecSession | Promise<ExecSession>;
}

export interface StreamServer {
  /** A one-time URL for an exec (valid for a minute, as the kubelet's request cache). */
  execUrl(req: StreamRequest): string;
  attachUrl(req: Omit<StreamRequest, 'cmd'>): string;
  close(): Promise<void>;
}

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

/** Serves exec and attach on 127.0.0.1 (a port of the system's choosing). */
export async function startStreamServer(backend: StreamBackend, opts: { logger: Logger; host?: string }): Promise<StreamServer> {
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
    if (!m || !p || p.kind !== m[1] || p.expires < Date.now()) return refuse(socket, 404, 'Not Found', 'unknown or expired streaming request');
    pending.delete(m[2]!);
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const base = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  const issue = (p: Pending): string => {
    const now = Date.now();
    for (const [t, q] of pending) if (q.expires < now) pending.delete(t);
    if (pending.size >= MAX_PENDING) throw new Error('too many pending streaming requests');
    const token = randomBytes(12).toString('base64url');
    pending.set(token, p);
    return `${base}/${p.kind}/${token}`;
  };
  return {
    execUrl: (req) => issue({ kind: 'exec', req, expires: Date.now() + TOKEN_TTL_MS }),
    attachUrl: (req) => issue({ kind: 'attach', req, expires: Date.now() + TOKEN_TTL_MS }),
    close: async () => {
      for (const s of sessions) s.close();
      await new Promise((r) => server.close(r));
    },
  };
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
