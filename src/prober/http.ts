// The httpGet probe (§5.4), written against node:http/node:https to behave as the kubelet's Go client:
// a fresh connection per request (no keep-alive, no proxy, no compression, TLS unverified), Go's
// header rules and error texts, same-hostname redirects followed up to 10, one deadline for the
// whole exchange, and a body read up to 10 KiB. Each connection ends as the kubelet's (SO_LINGER 1 s):
// with a FIN once the response is read. The request says `Connection: close`, so a server closes its
// end first and keeps the TIME_WAIT state on its own port; the prober's ephemeral ports stay free.

import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Container, HTTPGetAction } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { dialErrorText, dialHost, ioErrorText, joinHostPort, MAX_PROBE_OUTPUT_BYTES, resolveContainerPort, type ActionOutcome } from './probe.js';
import { closeGracefully } from './tcp.js';
import { goQuote } from '../util/go-format.js';

/** A built probe request, as the kubelet's NewRequestForHTTPGetAction builds it. */
export interface HTTPProbeRequest {
  scheme: 'http' | 'https';
  /** URL hostname, without brackets; may be empty (no pod IP). */
  hostname: string;
  port: number;
  /** Escaped path as the URL prints it ('' when the spec path is empty). */
  path: string;
  /** Raw query, without '?'. */
  query: string;
  /** Canonical header name → values, in the order given. */
  headers: Map<string, string[]>;
}

const MAX_REDIRECTS = 10;
const EMPTY_HOST = 'empty-host.invalid';
const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);
/** Go's default response header limit (MaxResponseHeaderBytes). */
const MAX_HEADER_BYTES = 10 << 20;

/** Builds the request for an httpGet action; throws (a probe error) when the port cannot be resolved. */
export function newRequestForHTTPGetAction(action: HTTPGetAction, container: Container, podIP: string, userAgent: string): HTTPProbeRequest {
  const scheme = (action.scheme ?? '').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port as number | string, container);
  const headers = new Map<string, string[]>();
  for (const h of action.httpHeaders ?? []) {
    const name = canonicalHeaderKey(h.name);
    const values = headers.get(name);
    if (values) values.push(h.value);
    else headers.set(name, [h.value]);
  }
  if (!headers.has('User-Agent')) headers.set('User-Agent', [userAgent]);
  if (!headers.has('Accept')) headers.set('Accept', ['*/*']);
  else if (headers.get('Accept')![0] === '') headers.delete('Accept');
  const { path, query } = splitPath(action.path ?? '');
  return { scheme: scheme === 'https' ? 'https' : 'http', hostname: host, port, path, query, headers };
}

/** Go's textproto.CanonicalMIMEHeaderKey. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  let upper = true;
  let out = '';
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch.toLowerCase();
    upper = ch === '-';
  }
  return out;
}

/** Splits and escapes a spec path as Go's url.Parse + URL.EscapedPath would. */
function splitPath(raw: string): { path: string; query: string } {
  const noFragment = raw.split('#', 1)[0]!;
  const q = noFragment.indexOf('?');
  let path = q >= 0 ? noFragment.slice(0, q) : noFragment;
  const query = q >= 0 ? noFragment.slice(q + 1) : '';
  if (path !== '' && !path.startsWith('/')) path = '/' + path;
  const validEscapes = !/%(?![0-9A-Fa-f]{2})/.test(path);
  path = escapeChars(validEscapes ? path : path.replace(/%/g, '%25'));
  return { path, query: escapeChars(query) };
}

function escapeChars(s: string): string {
  return s.replace(/[^\x21-\x7e]|["<>\\^`{|}]/gu, (c) => encodeURIComponent(c));
}

interface Hop {
  scheme: 'http' | 'https';
  hostname: string;
  port: number;
  /** Request target: path (at least '/') plus query. */
  target: string;
  /** The URL as Go prints it in errors and Referer. */
  url: string;
  /** Host header value. */
  host: string;
}

function firstHop(req: HTTPProbeRequest): Hop {
  const hostPort = joinHostPort(req.hostname, req.port);
  const query = req.query ? `?${req.query}` : '';
  const custom = req.headers.get('Host')?.[0] ?? '';
  return {
    scheme: req.scheme,
    hostname: req.hostname,
    port: req.port,
    target: (req.path || '/') + query,
    url: `${req.scheme}://${hostPort}${req.path}${query}`,
    host: custom || hostPort,
  };
}

/** Header lines in Go's order: Host, User-Agent, the rest sorted by name; Node appends Connection: close. */
function headerLines(hop: Hop, headers: Map<string, string[]>): string[] | Error {
  const lines: string[] = ['Host', hop.host];
  const ua = headers.get('User-Agent')?.[0] ?? '';
  if (ua !== '') lines.push('User-Agent', ua.trim());
  const names = [...headers.keys()].filter((n) => !excludedHeaders.has(n)).sort();
  for (const name of names) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return new Error(`net/http: invalid header field name ${goQuote(name)}`);
    for (const v of headers.get(name)!) {
      // eslint-disable-next-line no-control-regex -- the control characters Go's net/http refuses in a header value
      if (/[\x00-\x08\x0a-\x1f\x7f]/.test(v)) return new Error(`net/http: invalid header field value for ${goQuote(name)}`);
      lines.push(name, v.replace(/^[ \t]+|[ \t]+$/g, ''));
    }
  }
  return lines;
}

const excludedHeaders = new Set(['Host', 'User-Agent', 'Content-Length', 'Transfer-Encoding', 'Trailer']);

/** Runs the HTTP probe; never returns an error for HTTP-level problems (they are failures). */
export function doHTTPProbe(req: HTTPProbeRequest, timeoutSeconds: number, clock: Clock): Promise<ActionOutcome> {
  return new HTTPProbeRun(req, timeoutSeconds, clock).run();
}

/** One probe exchange: its hops, its single deadline and the connection to tear down. */
class HTTPProbeRun {
  private hops = 0;
  private done = false;
  private phase: 'headers' | 'body' = 'headers';
  private hop: Hop;
  private headers: Map<string, string[]>;
  private raw: net.Socket | undefined;
  private request: http.ClientRequest | undefined;
  private resolve!: (o: ActionOutcome) => void;
  private timer: { cancel(): void } | undefined;

  constructor(
    private readonly req: HTTPProbeRequest,
    private readonly timeoutSeconds: number,
    private readonly clock: Clock,
  ) {
    this.hop = firstHop(req);
    this.headers = new Map(req.headers);
  }

  run(): Promise<ActionOutcome> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = this.clock.setTimer(this.timeoutSeconds * 1000, () => this.onDeadline());
      this.send();
    });
  }

  private finish(outcome: ActionOutcome): void {
    if (this.done) return;
    this.done = true;
    this.timer?.cancel();
    this.teardown();
    this.resolve(outcome);
  }

  private teardown(): void {
    const raw = this.raw;
    this.raw = undefined;
    if (raw) closeGracefully(raw, this.clock);
    const request = this.request;
    this.request = undefined;
    if (request) {
      request.on('error', () => {});
      // A connected socket closes gracefully above; destroying the request would reset it.
      if (!raw || raw.connecting) request.destroy();
    }
  }

  private fail(text: string): void {
    this.finish({ result: 'failure', output: `Get ${goQuote(this.hop.url)}: ${text}` });
  }

  private onDeadline(): void {
    if (this.phase === 'body') {
      this.finish({
        result: 'failure',
        output: '',
        error: new Error('context deadline exceeded (Client.Timeout or context cancellation while reading body)'),
      });
    } else {
      this.fail('context deadline exceeded (Client.Timeout exceeded while awaiting headers)');
    }
  }

  private send(): void {
    const hop = this.hop;
    const lines = headerLines(hop, this.headers);
    if (lines instanceof Error) {
      this.fail(lines.message);
      return;
    }
    let connected = false;
    let local = '';
    const remote = joinHostPort(hop.hostname, hop.port);
    const host = dialHost(hop.hostname);
    const mod = hop.scheme === 'https' ? https : http;
    const request = mod.request({
      host,
      port: hop.port,
      method: 'GET',
      path: hop.target,
      setHost: false,
      headers: lines,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Our own connection, so the raw TCP socket's close is ours to shape (a TLS socket hides it).
      createConnection: () => {
        const raw = net.connect({ host, port: hop.port, allowHalfOpen: true });
        this.raw = raw;
        raw.once('connect', () => {
          connected = true;
          local = joinHostPort(raw.localAddress ?? '', raw.localPort ?? 0);
        });
        raw.on('error', (err) => {
          if (!connected) this.fail(dialErrorText(err, remote));
        });
        if (hop.scheme === 'http') return raw;
        return tls.connect({
          socket: raw,
          servername: hop.hostname && !net.isIP(hop.hostname) ? hop.hostname : '',
          rejectUnauthorized: false,
          ALPNProtocols: ['http/1.1'],
        });
      },
    });
    this.request = request;
    request.on('response', (res) => this.onResponse(res));
    request.on('error', (err) => {
      if (this.done || this.request !== request) return;
      if (!connected) {
        this.fail(dialErrorText(err, remote));
        return;
      }
      this.fail(transportErrorText(err, local, remote));
    });
    request.end();
  }

  private onResponse(res: IncomingMessage): void {
    if (this.done) return;
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECT_CODES.has(status) && location) {
      let next: URL;
      // WHATWG URLs need a host; an empty one (no pod IP) stands in as a placeholder.
      const base = this.hop.hostname === '' ? this.hop.url.replace('://:', `://${EMPTY_HOST}:`) : this.hop.url;
      try {
        next = new URL(location, base);
      } catch (err) {
        this.fail(`failed to parse Location header ${goQuote(location)}: ${(err as Error).message}`);
        return;
      }
      let nextHostname = next.hostname.replace(/^\[(.*)\]$/, '$1');
      if (nextHostname === EMPTY_HOST) nextHostname = '';
      const nextScheme = next.protocol === 'https:' ? 'https' : next.protocol === 'http:' ? 'http' : undefined;
      if (nextHostname === this.hop.hostname && nextScheme) {
        this.hops++;
        if (this.hops >= MAX_REDIRECTS) {
          this.finish({ result: 'failure', output: `Get ${goQuote(location)}: stopped after 10 redirects` });
          return;
        }
        this.redirect(next, nextScheme, nextHostname, location);
        return;
      }
      if (!nextScheme) {
        this.fail(`unsupported protocol scheme ${goQuote(next.protocol.replace(/:$/, ''))}`);
        return;
      }
      // Another hostname: not followed; the 3xx itself is the answer.
    }
    this.readBody(res, status);
  }

  private redirect(next: URL, scheme: 'http' | 'https', hostname: string, location: string): void {
    const previous = this.hop;
    const port = next.port ? Number(next.port) : scheme === 'https' ? 443 : 80;
    const hostPort = joinHostPort(hostname, port);
    // A custom Host header survives only relative redirects (Go's client).
    const custom = this.req.headers.get('Host')?.[0] ?? '';
    const relative = !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(location);
    const hostHeader = custom && custom !== joinHostPort(this.req.hostname, this.req.port) && relative ? custom : hostPort;
    const headers = new Map(this.req.headers);
    if (!(previous.scheme === 'https' && scheme === 'http')) {
      const explicit = this.req.headers.get('Referer')?.[0] ?? '';
      headers.set('Referer', [explicit || previous.url]);
    }
    this.teardown();
    this.headers = headers;
    this.hop = {
      scheme,
      hostname,
      port,
      target: next.pathname + next.search,
      url: `${scheme}://${hostPort}${next.pathname}${next.search}`,
      host: hostHeader,
    };
    this.send();
  }

  private readBody(res: IncomingMessage, status: number): void {
    this.phase = 'body';
    const chunks: Buffer[] = [];
    let size = 0;
    const complete = () => {
      const body = Buffer.concat(chunks).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
      if (status >= 200 && status < 400) {
        if (status >= 300) this.finish({ result: 'warning', output: `Probe terminated redirects, Response body: ${body}` });
        else this.finish({ result: 'success', output: body });
        return;
      }
      // The body never goes into the failure message.
      this.finish({ result: 'failure', output: `HTTP probe failed with statuscode: ${status}` });
    };
    res.on('data', (chunk: Buffer) => {
      if (this.done) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_PROBE_OUTPUT_BYTES) complete(); // longer bodies are silently truncated
    });
    // Ahead of the client's own end handler, so the outcome is decided before the socket is released.
    res.prependListener('end', () => {
      if (!this.done) complete();
    });
    res.on('aborted', () => {
      if (!this.done) this.finish({ result: 'failure', output: '', error: new Error('unexpected EOF') });
    });
    res.on('error', (err) => {
      if (!this.done) this.finish({ result: 'failure', output: '', error: err });
    });
  }
}

/** Errors after the connection was made, in Go's words where they have an equivalent. */
function transportErrorText(err: unknown, local: string, remote: string): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ECONNRESET' && e.message === 'socket hang up') return 'EOF';
  if (typeof e.code === 'string' && e.code.startsWith('HPE_')) {
    return `net/http: HTTP/1.x transport connection broken: malformed HTTP response (${e.message})`;
  }
  if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return ioErrorText(err, local, remote);
  return e.message;
}
