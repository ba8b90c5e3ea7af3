// exec, attach and port-forward over SPDY/3.1 (kubectl before 1.30 speaks nothing else): the 101
// answer with the negotiated X-Stream-Protocol-Version, then the client's streams by `streamtype`.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { StreamOptions } from '../kubeapi/backend.js';
import type { ExecSession } from '../runtime/streams.js';
import { exitStatus } from '../runtime/streams.js';
import { applyResize, outcome } from './remotecommand.js';
import { SpdySession, type SpdyStream } from '../spdy/framer.js';

export const spdyExecProtocols = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
export const portForwardProtocol = 'portforward.k8s.io';

/** The first protocol of the client's list we speak (kubectl lists its preference first). */
export function negotiate(req: IncomingMessage, supported: readonly string[]): string | undefined {
  const offered = String(req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const raw = req.headersDistinct?.['x-stream-protocol-version'] ?? [];
  for (const r of raw) for (const s of r.split(',')) if (!offered.includes(s.trim())) offered.push(s.trim());
  return offered.find((p) => supported.includes(p));
}

export function switchToSpdy(socket: Duplex, protocol: string): void {
  socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' + `X-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
}

const STREAM_WAIT_MS = 30_000;

/** Runs one exec/attach over a SPDY session: waits for the expected streams, pumps, reports. */
export function spdyExec(socket: Duplex, head: Buffer, protocol: string, opts: StreamOptions, start: () => Promise<ExecSession>): void {
  const session = new SpdySession(socket, head);
  const want = new Set(['error']);
  if (opts.stdin) want.add('stdin');
  if (opts.stdout) want.add('stdout');
  if (opts.stderr && !opts.tty) want.add('stderr');
  if (opts.tty && protocol !== 'channel.k8s.io' && protocol !== 'v2.channel.k8s.io') want.add('resize');
  const streams = new Map<string, SpdyStream>();
  let started = false;
  const timer = setTimeout(() => session.close(), STREAM_WAIT_MS);

  session.on('stream', (s: SpdyStream) => {
    const type = s.headers['streamtype'] ?? '';
    s.reply();
    streams.set(type, s);
    if (!started && [...want].every((t) => streams.has(t))) {
      started = true;
      clearTimeout(timer);
      void run();
    }
  });
  session.on('close', () => clearTimeout(timer));

  async function run(): Promise<void> {
    const errStream = streams.get('error')!;
    let exec: ExecSession;
    try {
      exec = await start();
    } catch (err) {
      errStream.end(JSON.stringify(exitStatus(err instanceof Error ? err : new Error(String(err)), opts.command)));
      await session.end();
      return;
    }
    session.on('close', () => exec.kill());
    const stdin = streams.get('stdin');
    if (stdin && exec.stdin) stdin.pipe(exec.stdin);
    else stdin?.resume();
    streams.get('resize')?.on('data', (d: Buffer) => applyResize(exec, d.toString('utf8')));
    const outs: Promise<void>[] = [];
    const pump = (from: NodeJS.ReadableStream | undefined, to: SpdyStream | undefined) => {
      if (!to) {
        from?.resume();
        return;
      }
      if (!from) {
        to.end();
        return;
      }
      outs.push(
        new Promise((resolve) => {
          from.on('end', resolve);
          from.on('error', resolve);
          from.on('close', resolve);
        }),
      );
      from.pipe(to);
    };
    pump(exec.stdout, streams.get('stdout'));
    pump(exec.stderr, streams.get('stderr'));
    const result = await outcome(exec);
    await Promise.all(outs);
    await Promise.all([
      ...['stdout', 'stderr']
        .map((t) => streams.get(t))
        .filter((s) => s && !s.writableEnded)
        .map((s) => new Promise((r) => s!.end(r))),
    ]);
    const status = exitStatus(result, opts.command);
    // v3/v4 write the Status as JSON; older versions only a failure's message.
    if (protocol === 'v4.channel.k8s.io' || protocol === 'v3.channel.k8s.io') {
      errStream.write(JSON.stringify(status));
    } else if ((status as { status: string }).status !== 'Success') {
      errStream.write(String((status as { message?: string }).message ?? ''));
    }
    await new Promise((r) => errStream.end(r));
    await session.end();
  }
}

/** Port-forward over SPDY: each (error, data) stream pair with a `requestid` is one connection to `port`. */
export function spdyPortForward(socket: Duplex, head: Buffer, dial: (port: number) => Promise<Duplex>): void {
  const session = new SpdySession(socket, head);
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  session.on('stream', (s: SpdyStream) => {
    s.reply();
    const id = s.headers['requestid'] ?? String(s.id);
    const type = s.headers['streamtype'];
    const pair = pairs.get(id) ?? {};
    if (type === 'error') pair.error = s;
    else if (type === 'data') pair.data = s;
    else {
      s.reset();
      return;
    }
    pairs.set(id, pair);
    if (pair.error) pair.error.resume();
    if (pair.data && pair.error) {
      pairs.delete(id);
      void connectPair(pair.data, pair.error, Number(s.headers['port']));
    }
  });

  async function connectPair(data: SpdyStream, error: SpdyStream, port: number): Promise<void> {
    let conn: Duplex;
    try {
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid port "${String(port)}"`);
      conn = await dial(port);
    } catch (err) {
      error.end(`error forwarding port ${port}: ${(err as Error).message}`);
      data.end();
      return;
    }
    conn.on('error', (err) => {
      if (!error.writableEnded) error.end(`error forwarding port ${port}: ${err.message}`);
      data.end();
    });
    data.on('error', () => conn.destroy());
    data.pipe(conn);
    conn.pipe(data);
    data.on('close', () => conn.destroy());
  }
}
