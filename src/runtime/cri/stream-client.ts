// The client side of a container runtime's streaming server, as the kubelet reaches it: the URL a CRI
// Exec or Attach answered, upgraded to SPDY/3.1 with remotecommand's streams (error, stdin, stdout,
// stderr, resize), handed over as an exec session; the exit code comes from the error stream's Status.
//
// SPDY rather than WebSocket: containerd's streaming server (k8s.io/kubelet/pkg/cri/streaming) accepts
// WebSocket only up to v4.channel.k8s.io, which cannot close stdin on its own; SPDY half-closes it.

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SpdySession, type SpdyStream } from '../../spdy/framer.js';
import type { ExecSession } from '../streams.js';
import { UNIX_STREAM_SCHEME } from './stream-server.js';

export interface RuntimeStreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** remotecommand versions offered, most preferred first. */
const PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const CONNECT_TIMEOUT_MS = 30_000;
const MAX_ERROR_BODY = 64 * 1024;

/** Upgrades a POST to the streaming URL; resolves with the socket and the negotiated protocol. */
function upgrade(url: string): Promise<{ socket: Duplex; head: Buffer; protocol: string }> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== UNIX_STREAM_SCHEME)
    return Promise.reject(new Error(`unsupported streaming URL ${JSON.stringify(url)}`));
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  // A server on a unix socket: the socket's path is the URL's host.
  const target =
    u.protocol === UNIX_STREAM_SCHEME
      ? { socketPath: decodeURIComponent(u.host), path: `${u.pathname}${u.search}` }
      : { protocol: u.protocol, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: `${u.pathname}${u.search}` };
  return new Promise((resolve, reject) => {
    const req = request({
      ...target,
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': PROTOCOLS },
      // A runtime's streaming server on TLS uses its own self-signed certificate.
      ...(u.protocol === 'https:' ? { rejectUnauthorized: false } : {}),
      timeout: CONNECT_TIMEOUT_MS,
    });
    req.on('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => {
      (socket as Socket).setTimeout(0);
      const protocol = String(res.headers['x-stream-protocol-version'] ?? '');
      resolve({ socket, head, protocol });
    });
    req.on('response', (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (body.length < MAX_ERROR_BODY) body += d;
      });
      res.on('end', () => reject(new Error(`unable to upgrade connection: ${body.trim() || `${res.statusCode} ${res.statusMessage ?? ''}`.trim()}`)));
    });
    req.on('timeout', () => req.destroy(new Error(`unable to upgrade connection: timed out connecting to ${decodeURIComponent(u.host)}`)));
    req.on('error', reject);
    req.end();
  });
}

/** The exit code in the error stream's content: a v4 Status, or (older versions) a failure's message. */
export function exitFromErrorStream(text: string, protocol: string): number | Error {
  const body = text.trim();
  if (!body) return 0;
  if (protocol !== 'v4.channel.k8s.io') return new Error(body);
  let status: { status?: string; reason?: string; message?: string; details?: { causes?: Array<{ reason?: string; type?: string; message?: string }> } };
  try {
    status = JSON.parse(body) as typeof status;
  } catch {
    return new Error(body);
  }
  if (status.status === 'Success') return 0;
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => (c.reason ?? c.type) === 'ExitCode');
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return code;
  }
  return new Error(status.message || body);
}

/**
 * Connects to an exec or attach URL of a runtime's streaming server. Stdin, stdout and stderr are
 * the streams asked for (stderr never with a tty, as the runtime merges it into the terminal).
 */
export async function connectRuntimeStream(url: string, opts: RuntimeStreamOptions): Promise<ExecSession> {
  const { socket, head, protocol } = await upgrade(url);
  const session = new SpdySession(socket, head, true);
  const open = (type: string) => session.openStream({ streamtype: type });
  // The order of kubectl's client: error first, then the data streams, then resize.
  const error = open('error');
  const stdin = opts.stdin ? open('stdin') : undefined;
  const stdout = opts.stdout ? open('stdout') : undefined;
  const stderr = opts.stderr && !opts.tty ? open('stderr') : undefined;
  const resize = opts.tty && protocol !== 'channel.k8s.io' && protocol !== 'v2.channel.k8s.io' ? open('resize') : undefined;
  resize?.resume();

  const exit = new Promise<number>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const r = exitFromErrorStream(Buffer.concat(chunks).toString('utf8'), protocol);
      session.close();
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    error.on('data', (d: Buffer) => chunks.push(d));
    // The server ends the session after the Status; the output streams have ended by then.
    error.on('end', () => void outputsEnded([stdout, stderr]).then(finish));
    error.on('close', () => void outputsEnded([stdout, stderr]).then(finish));
  });
  exit.catch(() => {});

  return {
    ...(stdin ? { stdin } : {}),
    ...(stdout ? { stdout } : {}),
    ...(stderr ? { stderr } : {}),
    resize(width: number, height: number) {
      if (resize && !resize.writableEnded) resize.write(`${JSON.stringify({ Width: width, Height: height })}\n`);
    },
    exit,
    kill: () => session.close(),
  };
}

/** Resolves once each stream has delivered its end (or is gone). */
function outputsEnded(streams: Array<SpdyStream | undefined>): Promise<void> {
  return Promise.all(
    streams.map((s) =>
      !s || s.readableEnded || s.destroyed
        ? undefined
        : new Promise<void>((r) => {
            s.once('end', r);
            s.once('close', r);
          }),
    ),
  ).then(() => undefined);
}
