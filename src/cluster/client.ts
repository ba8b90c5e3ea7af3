// The node's API-server client: JSON requests over HTTPS with the kubeconfig's CA and bearer token or
// client certificate (one keep-alive agent), API Status errors as typed errors, and the raw
// chunked-NDJSON watch stream that the reflector decodes.

import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ClientRequest } from 'node:http';
import type { ClusterCredentials } from './kubeconfig.js';

/** A failed call the API server answered with a Status (or at least an HTTP error code). */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiStatusError';
  }
}

/** True for failures worth retrying later: no answer at all, 429, or a 5xx. */
export function isRetriable(err: unknown): boolean {
  if (err instanceof ApiStatusError) return err.code === 429 || err.code >= 500;
  return true;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiStatusError && err.code === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiStatusError && err.code === 409;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default application/json; patches name their kind (merge-patch+json, strategic-merge-patch+json). */
  contentType?: string;
  /** Default 30 s. */
  timeoutMs?: number;
}

export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** The counts of requests made, by verb, for measurement. */
export type RequestCounts = Record<string, number>;

export interface ApiClientOptions {
  /** Sent as User-Agent, e.g. `podvisor/0.1.0 (linux/amd64) node/podvisor-node`. */
  userAgent?: string;
}

export function encodeQuery(query: RequestOptions['query']): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

export class ApiClient {
  readonly server: URL;
  readonly counts: RequestCounts = {};
  private readonly creds: ClusterCredentials;
  private readonly agent: HttpsAgent | HttpAgent;
  private readonly userAgent: string;
  private readonly open = new Set<ClientRequest>();
  private closed = false;

  constructor(creds: ClusterCredentials, opts: ApiClientOptions = {}) {
    this.creds = creds;
    this.server = new URL(creds.server);
    this.userAgent = opts.userAgent ?? 'podvisor';
    const common = { keepAlive: true, maxSockets: 32 };
    this.agent =
      this.server.protocol === 'https:'
        ? new HttpsAgent({
            ...common,
            ...(creds.ca ? { ca: creds.ca } : {}),
            ...(creds.cert && creds.key ? { cert: creds.cert, key: creds.key } : {}),
            ...(creds.tlsServerName ? { servername: creds.tlsServerName } : {}),
            rejectUnauthorized: !creds.insecureSkipTLSVerify,
          })
        : new HttpAgent(common);
  }

  /** GET/POST/PUT/PATCH/DELETE a path; resolves to the decoded JSON body, rejects with ApiStatusError or a network error. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    const body = await readBody(res);
    const code = res.statusCode ?? 0;
    if (code >= 200 && code < 300) return (body.length ? JSON.parse(body.toString('utf8')) : undefined) as T;
    throw statusError(code, body);
  }

  /**
   * Opens a watch: resolves with the response once the server answered 200 (its body is the NDJSON
   * stream), rejects as request does. abort() closes it.
   */
  async openStream(path: string, query: RequestOptions['query'], timeoutMs: number): Promise<{ res: IncomingMessage; abort: () => void }> {
    let req!: ClientRequest;
    const res = await this.send('GET', path, { query, timeoutMs }, (r) => (req = r));
    const code = res.statusCode ?? 0;
    if (code !== 200) throw statusError(code, await readBody(res));
    return { res, abort: () => req.destroy() };
  }

  /** Closes idle connections and aborts every open request. */
  close(): void {
    this.closed = true;
    for (const r of this.open) r.destroy();
    this.agent.destroy();
  }

  private send(method: string, path: string, opts: RequestOptions, onRequest?: (r: ClientRequest) => void): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(new Error('API client closed'));
    this.counts[method] = (this.counts[method] ?? 0) + 1;
    const body = opts.body === undefined ? undefined : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent };
    if (this.creds.token) headers.Authorization = `Bearer ${this.creds.token}`;
    if (body) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const doRequest = this.server.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = opts.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const req = doRequest(
        {
          protocol: this.server.protocol,
          hostname: this.server.hostname,
          port: this.server.port,
          method,
          path: `${this.server.pathname.replace(/\/$/, '')}${path}${encodeQuery(opts.query)}`,
          headers,
          agent: this.agent,
        },
        (res) => {
          res.once('close', () => this.open.delete(req));
          resolve(res);
        },
      );
      this.open.add(req);
      onRequest?.(req);
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => {
        this.open.delete(req);
        reject(err);
      });
      req.end(body);
    });
  }
}

function readBody(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.once('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.once('aborted', () => reject(new Error('response aborted')));
  });
}

function statusError(code: number, body: Buffer): ApiStatusError {
  const text = body.toString('utf8');
  try {
    const s = JSON.parse(text) as Record<string, unknown>;
    if (s && s.kind === 'Status') return new ApiStatusError(code, String(s.reason ?? ''), String(s.message ?? `HTTP ${code}`), s);
  } catch {
    // not a Status: fall through
  }
  return new ApiStatusError(code, '', `HTTP ${code}: ${text.slice(0, 200).trim()}`);
}

/** Exponential back-off for retries: 0.8 s doubling to a cap (30 s), reset on success. */
export class RetryBackoff {
  private current = 0;
  constructor(
    private readonly initialMs = 800,
    private readonly maxMs = 30_000,
  ) {}
  next(): number {
    this.current = this.current === 0 ? this.initialMs : Math.min(this.maxMs, this.current * 2);
    return this.current;
  }
  reset(): void {
    this.current = 0;
  }
}

/** `namespace/name`, the key objects are stored under. */
export function objectKey(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** The API path of a pod (or one of its subresources). */
export function podPath(namespace: string, name: string, sub?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
}
