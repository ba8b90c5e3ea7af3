// How the ingress proxy passes one request to an endpoint, as a reverse proxy does (ingress-nginx's
// proxy_pass with its default headers): the request's method, path and headers less the hop-by-hop
// ones (RFC 9110 §7.6.1), X-Forwarded-For (the client appended), -Proto, -Host and -Port and
// X-Real-IP; connections to endpoints kept alive between requests; the response streamed back (to an
// HTTP/2 client without HTTP/1's connection headers). An `Upgrade` request (WebSocket and any other)
// is written to the endpoint as it came and both connections are then joined byte for byte.

import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Endpoint } from './balancer.js';

/** Headers that describe one connection, never passed on (with those the Connection header names). */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'upgrade', 'trailer', 'http2-settings', 'host']);

export interface ForwardContext {
  /** http or https: what the client spoke. */
  scheme: 'http' | 'https';
  /** The port the client connected to. */
  port: number;
  clientIP: string;
}

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

/** The headers sent to the endpoint: the client's end-to-end ones, the Host it asked for, and X-Forwarded-*. */
export function forwardedHeaders(headers: IncomingHttpHeaders, ctx: ForwardContext, keepUpgrade: boolean): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(':') || hopByHop.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  const host = (headers[':authority'] as string | undefined) ?? headers.host ?? '';
  out.host = host;
  const prior = headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${ctx.clientIP}` : ctx.clientIP;
  out['x-forwarded-proto'] = ctx.scheme;
  out['x-forwarded-host'] = host;
  out['x-forwarded-port'] = String(ctx.port);
  out['x-real-ip'] = ctx.clientIP;
  if (keepUpgrade && headers.upgrade) {
    out.connection = 'upgrade';
    out.upgrade = headers.upgrade;
  }
  return out;
}

/** The endpoint's response headers an HTTP/1.1 or HTTP/2 client is given. */
function responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !hopByHop.has(k) && !named.has(k)) out[k] = v;
  return out;
}

/** A short plain-text answer of the proxy itself (404, 502, 503). */
export function replyText(res: AnyResponse, code: number, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${text}\n`;
  (res as ServerResponse).writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The read and write buffer size of the proxy's HTTP streams. */
export const streamHighWaterMark = 256 * 1024;

/** Passes requests to endpoints over kept-alive connections. */
export class Forwarder {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });

  close(): void {
    this.agent.destroy();
  }

  /** Sends req to the endpoint and its answer back; 502 when the endpoint cannot be reached. */
  forward(req: AnyRequest, res: AnyResponse, endpoint: Endpoint, ctx: ForwardContext): void {
    const upstream = request({
      host: endpoint.ip,
      port: endpoint.port,
      method: req.method,
      path: req.url,
      headers: forwardedHeaders(req.headers, ctx, false),
      agent: this.agent,
      // Larger reads than the default 16 KB: fewer chunks for large bodies.
      highWaterMark: streamHighWaterMark,
    } as object);
    upstream.setNoDelay(true);
    upstream.on('response', (ur) => {
      const code = ur.statusCode ?? 502;
      // HTTP/2 has no reason phrase.
      if (req.httpVersionMajor === 2) (res as Http2ServerResponse).writeHead(code, responseHeaders(ur.headers));
      else (res as ServerResponse).writeHead(code, ur.statusMessage, responseHeaders(ur.headers));
      ur.pipe(res as NodeJS.WritableStream);
      ur.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => replyText(res, 502, `bad gateway: ${endpoint.ip}:${endpoint.port}: ${err.message}`));
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    (req as NodeJS.ReadableStream).pipe(upstream);
  }

  /** Writes an Upgrade request to the endpoint and joins the two connections. */
  upgrade(req: IncomingMessage, client: Duplex, head: Buffer, endpoint: Endpoint, ctx: ForwardContext): void {
    const upstream: Socket = connect({ host: endpoint.ip, port: endpoint.port, noDelay: true });
    const headers = forwardedHeaders(req.headers, ctx, true);
    let text = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) text += `${k}: ${one}\r\n`;
    text += '\r\n';
    upstream.once('connect', () => {
      upstream.write(text);
      if (head.length) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on('error', (err) => {
      if (upstream.bytesRead === 0 && client.writable) {
        const body = `bad gateway: ${endpoint.ip}:${endpoint.port}: ${err.message}\n`;
        client.end(
          `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      } else client.destroy();
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}

/** A proxy's own answer on an Upgrade connection (404, 503), then the connection closes. */
export function replyRaw(client: Duplex, code: number, reason: string, text: string): void {
  const body = `${text}\n`;
  client.end(
    `HTTP/1.1 ${code} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
