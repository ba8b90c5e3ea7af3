// The grpc probe (§5.6): one grpc.health.v1.Health/Check over plaintext HTTP/2, as the kubelet's
// prober makes it: a blocking dial retried until the deadline, the call under the same deadline,
// then the connection closed at once, and the kubelet's outcome messages.
//
// Why not @grpc/grpc-js here: a probe must leave no connection behind, and grpc-js cannot promise
// that. A channel closed while its subchannel waits out a reconnect back-off keeps reconnecting, and
// once the server is back it holds an idle HTTP/2 session open for good, so the container's own
// graceful shutdown (which waits for its sessions) hangs until the grace period kills it. The call
// is a single unary request with a one-field message, so it is made here on node:http2, whose
// session this code owns and destroys.

import { STATUS_CODES } from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { dialHost, joinHostPort, type ActionOutcome } from './probe.js';
import { formatGoDuration, goQuote } from '../util/go-format.js';
import { grpcCodeName } from '../util/grpc-codes.js';
import { setLongTimeout, sleepLong } from '../util/timer.js';
import { lengthDelimited } from '../util/protobuf-wire.js';

const CHECK_PATH = '/grpc.health.v1.Health/Check';

/** grpc.health.v1.HealthCheckResponse.ServingStatus, by number. */
const servingStatus = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

const Code = { Unknown: 2, DeadlineExceeded: 4, PermissionDenied: 7, Unimplemented: 12, Internal: 13, Unavailable: 14, Unauthenticated: 16 } as const;

/** grpc-go's code for a non-200 HTTP status without a grpc-status (status.go, HTTPStatusConvTab). */
function codeOfHTTPStatus(status: number): number {
  switch (status) {
    case 400:
      return Code.Internal;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}

/** grpc-go's connection back-off (base 1 s, ×1.6, ±20 % jitter, at most 120 s). */
function backoffMs(retries: number, random: () => number): number {
  const d = Math.min(1000 * 1.6 ** retries, 120_000);
  return d * (1 + 0.2 * (random() * 2 - 1));
}

/** A gRPC message: the uncompressed flag, the length, the bytes. */
function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** HealthCheckRequest{service}: field 1, a string, left out when empty (proto3). */
export function encodeCheckRequest(service: string): Buffer {
  if (service === '') return Buffer.alloc(0);
  const bytes = Buffer.from(service, 'utf8');
  return lengthDelimited(1, bytes);
}

/** HealthCheckResponse.status (field 1, an enum), its name; 0 (UNKNOWN) when absent. Throws on a malformed message. */
export function decodeCheckResponse(msg: Buffer): string {
  let status = 0;
  let i = 0;
  const readVarint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (i >= msg.length) throw new Error('truncated varint');
      const b = msg[i++]!;
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return v;
      mul *= 128;
    }
  };
  while (i < msg.length) {
    const tag = readVarint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0: {
        const v = readVarint();
        if (field === 1) status = v;
        break;
      }
      case 1:
        i += 8;
        break;
      case 2:
        i += readVarint();
        break;
      case 5:
        i += 4;
        break;
      default:
        throw new Error(`unknown wire type ${tag & 7}`);
    }
    if (i > msg.length) throw new Error('truncated field');
  }
  return servingStatus[status] ?? String(status);
}

/** The grpc-timeout header: at most eight digits and a unit, as grpc-go encodes a deadline. */
function grpcTimeout(ms: number): string {
  const units: [string, number][] = [
    ['m', 1],
    ['S', 1000],
    ['M', 60_000],
    ['H', 3_600_000],
  ];
  for (const [unit, size] of units) {
    const n = Math.ceil(ms / size);
    if (n <= 99_999_999) return `${Math.max(n, 1)}${unit}`;
  }
  return '99999999H';
}

/** grpc-message is percent-encoded (the gRPC HTTP/2 spec); a malformed one is kept as sent. */
function decodeGrpcMessage(raw: string | undefined): string {
  if (!raw) return '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

interface RPCStatus {
  code: number;
  message: string;
  response?: Buffer;
}

class DeadlineExceeded extends Error {}

export class GRPCHealthProber {
  constructor(
    private readonly userAgent: string,
    private readonly random: () => number = Math.random,
  ) {}

  async probe(host: string, service: string, port: number, timeoutSeconds: number): Promise<ActionOutcome> {
    const addr = joinHostPort(host, port);
    const timeout = formatGoDuration(timeoutSeconds * 1000);
    // Network I/O against wall time, not logic under a test clock.
    const deadlineAt = Date.now() + timeoutSeconds * 1000;
    const expired = new AbortController();
    const timer = setLongTimeout(() => expired.abort(), timeoutSeconds * 1000);
    let session: http2.ClientHttp2Session | undefined;
    try {
      try {
        session = await this.dial(dialHost(host), port, addr, expired.signal);
      } catch (err) {
        if (err instanceof DeadlineExceeded) {
          return { result: 'failure', output: `timeout: failed to connect service ${goQuote(addr)} within ${timeout}: context deadline exceeded` };
        }
        return { result: 'failure', output: `error: failed to connect service at ${goQuote(addr)}: ${(err as Error).message}` };
      }
      const st = await this.check(session, addr, service, deadlineAt, expired.signal);
      return outcomeOf(st, timeout);
    } finally {
      timer.cancel();
      session?.destroy();
    }
  }

  /**
   * grpc.DialContext with WithBlock: connect until the HTTP/2 handshake completes (the server's
   * SETTINGS received), retrying failed connects after grpc-go's back-off, until the deadline.
   */
  private async dial(host: string, port: number, addr: string, expired: AbortSignal): Promise<http2.ClientHttp2Session> {
    for (let retries = 0; ; retries++) {
      if (expired.aborted) throw new DeadlineExceeded();
      const attemptStarted = Date.now();
      const session = await connectOnce(host, port, addr, expired);
      if (session) return session;
      const wait = backoffMs(retries, this.random) - (Date.now() - attemptStarted);
      if (wait > 0) await sleepLong(wait, { signal: expired });
    }
  }

  private check(session: http2.ClientHttp2Session, addr: string, service: string, deadlineAt: number, expired: AbortSignal): Promise<RPCStatus> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (st: RPCStatus) => {
        if (settled) return;
        settled = true;
        expired.removeEventListener('abort', onExpired);
        resolve(st);
      };
      const onExpired = () => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        finish({ code: Code.DeadlineExceeded, message: 'context deadline exceeded' });
      };
      const req = session.request({
        ':method': 'POST',
        ':scheme': 'http',
        ':path': CHECK_PATH,
        ':authority': addr,
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': this.userAgent,
        'grpc-timeout': grpcTimeout(Math.max(1, deadlineAt - Date.now())),
      });
      if (expired.aborted) return onExpired();
      expired.addEventListener('abort', onExpired, { once: true });

      let httpStatus = 0;
      let contentType = '';
      let headerStatus: string | undefined;
      let headerMessage: string | undefined;
      const chunks: Buffer[] = [];
      req.on('response', (headers) => {
        httpStatus = Number(headers[':status']);
        contentType = String(headers['content-type'] ?? '');
        // A trailers-only response carries the status in its headers.
        if (headers['grpc-status'] !== undefined) {
          headerStatus = String(headers['grpc-status']);
          headerMessage = headers['grpc-message'] as string | undefined;
        }
      });
      let trailerStatus: string | undefined;
      let trailerMessage: string | undefined;
      req.on('trailers', (trailers) => {
        trailerStatus = trailers['grpc-status'] as string | undefined;
        trailerMessage = trailers['grpc-message'] as string | undefined;
      });
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('error', (err: Error) => finish({ code: Code.Unavailable, message: `error reading from server: ${err.message}` }));
      req.on('close', () => {
        if (httpStatus === 0) {
          finish({ code: Code.Unavailable, message: 'error reading from server: EOF' });
          return;
        }
        const statusText = trailerStatus ?? headerStatus;
        if (statusText === undefined) {
          const problems: string[] = [];
          if (httpStatus !== 200) problems.push(`unexpected HTTP status code received from server: ${httpStatus} (${STATUS_CODES[httpStatus] ?? ''})`);
          if (!/^application\/grpc($|[+;])/.test(contentType)) problems.push(`transport: received unexpected content-type ${goQuote(contentType)}`);
          if (problems.length === 0) problems.push('server closed the stream without sending trailers');
          finish({ code: httpStatus === 200 ? Code.Unknown : codeOfHTTPStatus(httpStatus), message: problems.join('; ') });
          return;
        }
        const code = Number(statusText);
        const message = decodeGrpcMessage(trailerStatus !== undefined ? trailerMessage : headerMessage);
        if (code !== 0) {
          finish({ code: Number.isInteger(code) ? code : Code.Unknown, message });
          return;
        }
        const body = Buffer.concat(chunks);
        if (body.length < 5 || body.length < 5 + body.readUInt32BE(1)) {
          finish({ code: Code.Internal, message: 'cardinality violation: received no response message from non-streaming RPC' });
          return;
        }
        if (body[0] !== 0) {
          finish({ code: Code.Internal, message: 'grpc: compressed message received but no compression was negotiated' });
          return;
        }
        finish({ code: 0, message: '', response: body.subarray(5, 5 + body.readUInt32BE(1)) });
      });
      req.end(frame(encodeCheckRequest(service)));
    });
  }
}

/**
 * One connect and HTTP/2 handshake: the ready session, or undefined when it failed (refused, reset,
 * closed before the server's SETTINGS); DeadlineExceeded once the deadline passes.
 */
function connectOnce(host: string, port: number, addr: string, expired: AbortSignal): Promise<http2.ClientHttp2Session | undefined> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${addr}`, {
      createConnection: () => net.connect({ host, port }),
      settings: { enablePush: false },
    });
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      expired.removeEventListener('abort', onExpired);
      session.off('remoteSettings', onReady);
      if (ok) {
        // Errors after this point end the call, which reports them; the session must not throw.
        resolve(session);
        return;
      }
      session.destroy();
      resolve(undefined);
    };
    const onReady = () => done(true);
    const onExpired = () => {
      if (settled) return;
      settled = true;
      session.destroy();
      reject(new DeadlineExceeded());
    };
    session.on('error', () => done(false));
    session.once('close', () => done(false));
    session.once('remoteSettings', onReady);
    if (expired.aborted) return onExpired();
    expired.addEventListener('abort', onExpired, { once: true });
  });
}

function outcomeOf(st: RPCStatus, timeout: string): ActionOutcome {
  switch (st.code) {
    case 0: {
      let status: string;
      try {
        status = decodeCheckResponse(st.response!);
      } catch (err) {
        return {
          result: 'failure',
          output: `error: health rpc probe failed: rpc error: code = Internal desc = grpc: failed to unmarshal the received message: ${(err as Error).message}`,
        };
      }
      if (status !== 'SERVING') return { result: 'failure', output: `service unhealthy (responded with ${goQuote(status)})` };
      return { result: 'success', output: 'service healthy' };
    }
    case Code.Unimplemented:
      return { result: 'failure', output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${st.message}` };
    case Code.DeadlineExceeded:
      return { result: 'failure', output: `timeout: health rpc did not complete within ${timeout}` };
    default:
      return { result: 'failure', output: `error: health rpc probe failed: rpc error: code = ${grpcCodeName(st.code)} desc = ${st.message}` };
  }
}
