// What the probe kinds share, after the kubelet's pkg/probe: the low-level results, container port
// resolution (§5.2), and error texts shaped like Go's so events read as the kubelet's do.

import type { Container } from '../api/types.js';
import { goQuote } from '../util/go-format.js';

/** Low-level probe results (pkg/probe): `success`, `warning`, `failure`, `unknown`. */
export type ActionResult = 'success' | 'warning' | 'failure' | 'unknown';

/** What one probe action returns: (result, output, error) as in pkg/probe. */
export interface ActionOutcome {
  result: ActionResult;
  output: string;
  error?: Error;
}

/** The most output or body a probe keeps (10 KiB). */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;

/**
 * Resolves an httpGet/tcpSocket port: a number as is; a name looked up in the container's ports,
 * then parsed as a number; the result must be 1..65535. Throws the kubelet's errors.
 */
export function resolveContainerPort(param: number | string | undefined, container: Container): number {
  let port: number;
  if (typeof param === 'number') {
    port = param;
  } else if (typeof param === 'string') {
    const named = (container.ports ?? []).find((p) => p.name === param);
    if (named) {
      port = named.containerPort;
    } else {
      port = goAtoi(param);
    }
  } else {
    throw new Error(`intOrString had no kind: ${JSON.stringify(param)}`);
  }
  if (port > 0 && port < 65536) return port;
  throw new Error(`invalid port number: ${port}`);
}

/** strconv.Atoi, with its error text. */
function goAtoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n > 2 ** 63 - 1 || n < -(2 ** 63)) {
    throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: value out of range`);
  }
  return n;
}

/** net.JoinHostPort: IPv6 hosts bracketed. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Where a probe connects: an empty host (no pod IP) dials the local host, as Go's ":port" does. */
export function dialHost(host: string): string {
  return host === '' ? '127.0.0.1' : host;
}

const errnoTexts: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ETIMEDOUT: 'connection timed out',
  EADDRNOTAVAIL: 'cannot assign requested address',
  EADDRINUSE: 'address already in use',
  EPIPE: 'broken pipe',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EINVAL: 'invalid argument',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in system',
  ENOBUFS: 'no buffer space available',
};

interface SystemError extends Error {
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
  hostname?: string;
  errors?: unknown[];
}

/** The most telling error of a connect failure (Node reports an AggregateError after trying several addresses). */
function primaryError(err: unknown): SystemError {
  const e = err as SystemError;
  if (e && Array.isArray(e.errors) && e.errors.length > 0) return e.errors[e.errors.length - 1] as SystemError;
  return e;
}

/**
 * The text Go's net.Dial gives for a connect failure: `dial tcp 10.0.0.5:81: connect: connection refused`,
 * `dial tcp: lookup nosuch: no such host`.
 */
export function dialErrorText(err: unknown, fallbackAddr: string): string {
  const e = primaryError(err);
  const code = e?.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_NODATA') {
    return `dial tcp: lookup ${e.hostname ?? fallbackAddr}: no such host`;
  }
  if (code === 'EAI_AGAIN') return `dial tcp: lookup ${e.hostname ?? fallbackAddr}: server misbehaving`;
  const addr = e?.address !== undefined && e.port !== undefined ? joinHostPort(e.address, e.port) : fallbackAddr;
  const text = errnoTexts[code];
  if (text) return `dial tcp ${addr}: ${e.syscall ?? 'connect'}: ${text}`;
  return `dial tcp ${addr}: ${e?.message ?? String(err)}`;
}

/** The text of a read/write failure on an open connection: `read tcp a->b: read: connection reset by peer`. */
export function ioErrorText(err: unknown, local: string, remote: string): string {
  const e = primaryError(err);
  const code = e?.code ?? '';
  const text = errnoTexts[code];
  if (code === 'EPIPE') return `write tcp ${local}->${remote}: write: ${text}`;
  if (text) return `read tcp ${local}->${remote}: read: ${text}`;
  return e?.message ?? String(err);
}
