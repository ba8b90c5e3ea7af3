// Lifecycle hook handlers (postStart, preStop) as the kubelet's lifecycle.handlerRunner runs them
// (§11.2): exec through the runtime's ExecSync without a timeout, httpGet with the status code not
// checked, sleep; any other handler fails. A failure is returned as the kubelet's message.

import * as http from 'node:http';
import * as https from 'node:https';
import type { Container, LifecycleHandler, Pod } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RuntimeService } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import { goList, goQuote } from '../util/go-format.js';
import { formatPod, podRef } from './format.js';

/** The Kubernetes minor version podvisor mirrors, as sent in User-Agent headers. */
export const KUBE_VERSION = '1.35';

const MAX_BODY_BYTES = 10 * 1024;

export interface HandlerContext {
  runtime: RuntimeService;
  clock: Clock;
  recorder: EventRecorder;
  pod: Pod;
  container: Container;
  /** Runtime-local id of the container instance the hook belongs to. */
  containerId: string;
  podIP: string;
  /** Aborted when the hook must give up (the container or the pod is going away). */
  signal?: AbortSignal;
}

class AbortedError extends Error {}

/** Resolves p, or rejects with AbortedError once signal aborts. */
export function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(new AbortedError('context canceled'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError('context canceled'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Runs handler; resolves undefined on success, else the kubelet's failure message. Never rejects. */
export async function runLifecycleHandler(ctx: HandlerContext, handler: LifecycleHandler): Promise<string | undefined> {
  const { pod, container } = ctx;
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    let err: string | undefined;
    let output = '';
    try {
      const res = await abortable(ctx.runtime.execSync(ctx.containerId, cmd, 0), ctx.signal);
      output = Buffer.concat([res.stdout, res.stderr]).toString('utf8');
      if (res.exitCode !== 0) {
        err = `command '${cmd.join(' ')}' exited with ${res.exitCode}: ${res.stderr.toString('utf8')}`;
      }
    } catch (e) {
      err = e instanceof Error ? e.message : String(e);
    }
    if (err === undefined) return undefined;
    return `Exec lifecycle hook (${goList(cmd)}) for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))} failed - error: ${err}, message: ${goQuote(output)}`;
  }
  if (handler.httpGet) {
    const err = await runHTTPHandler(ctx, handler.httpGet);
    if (err === undefined) return undefined;
    return `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))} failed - error: ${err}`;
  }
  if (handler.sleep) {
    const seconds = handler.sleep.seconds;
    // A cancellable timer, so an abandoned sleep leaves nothing pending behind.
    let timer: { cancel(): void } | undefined;
    const slept = new Promise<void>((r) => {
      timer = ctx.clock.setTimer(seconds * 1000, r);
    });
    try {
      await abortable(slept, ctx.signal);
      return undefined;
    } catch {
      return `Sleep lifecycle hook (${seconds}) for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))} failed - error: container terminated before sleep hook finished`;
    } finally {
      timer?.cancel();
    }
  }
  return `Cannot run handler: invalid handler: ${describeHandler(handler)}`;
}

// Go's %v of the generated *v1.LifecycleHandler, enough to name what was given.
function describeHandler(h: LifecycleHandler): string {
  const port = (p: number | string) => (typeof p === 'number' ? `{0 ${p} }` : `{1 0 ${p}}`);
  const tcp = h.tcpSocket ? `&TCPSocketAction{Port:${port(h.tcpSocket.port)},Host:${h.tcpSocket.host ?? ''},}` : 'nil';
  return `&LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:${tcp},Sleep:nil,}`;
}

/** Resolves a numeric or named container port (§5.2). */
export function resolveContainerPort(port: number | string, container: Container): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new Error(`strconv.Atoi: parsing ${goQuote(port)}: invalid syntax`);
  }
  if (n > 0 && n < 65536) return n;
  throw new Error(`invalid port number: ${n}`);
}

type HTTPGet = NonNullable<LifecycleHandler['httpGet']>;

async function runHTTPHandler(ctx: HandlerContext, action: HTTPGet): Promise<string | undefined> {
  let host = action.host ?? '';
  if (!host) {
    if (!ctx.podIP) return `failed to find networking container: no pod IP`;
    host = ctx.podIP;
  }
  let port: number;
  try {
    port = resolveContainerPort(action.port, ctx.container);
  } catch (e) {
    return (e as Error).message;
  }
  const scheme = (action.scheme ?? 'HTTP').toLowerCase();
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const path = action.path ?? '';
  const url = `${scheme}://${hostPort}${path.startsWith('/') || path === '' ? path : `/${path}`}`;
  const headers: Record<string, string[]> = {};
  for (const h of action.httpHeaders ?? []) {
    const key = canonicalHeader(h.name);
    (headers[key] ??= []).push(h.value);
  }
  if (!headers['User-Agent']) headers['User-Agent'] = [`kube-lifecycle/${KUBE_VERSION}`];
  if (!headers['Accept']) headers['Accept'] = ['*/*'];
  const err = await doRequest(url, headers, ctx.signal);
  if (err === undefined) return undefined;
  if (scheme === 'https' && err.httpResponseToHTTPS) {
    delete headers['Authorization'];
    const retry = await doRequest(`http://${hostPort}${url.slice(`https://${hostPort}`.length)}`, headers, ctx.signal);
    if (retry === undefined) {
      ctx.recorder.event(
        podRef(ctx.pod),
        'Warning',
        'LifecycleHTTPFallback',
        `request to HTTPS lifecycle hook ${hostPort} got HTTP response, retry with HTTP succeeded`,
      );
      return undefined;
    }
  }
  return err.message;
}

function canonicalHeader(name: string): string {
  return name
    .split('-')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1).toLowerCase() : p))
    .join('-');
}

interface RequestError {
  message: string;
  httpResponseToHTTPS: boolean;
}

function doRequest(url: string, headers: Record<string, string[]>, signal?: AbortSignal): Promise<RequestError | undefined> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const outHeaders: Record<string, string | string[]> = {};
    let hostHeader: string | undefined;
    for (const [k, v] of Object.entries(headers)) {
      if (k === 'Host') hostHeader = v[0];
      else if (v.some((x) => x !== '')) outHeaders[k] = v.filter((x) => x !== '');
    }
    if (hostHeader) outHeaders['Host'] = hostHeader;
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method: 'GET', headers: outHeaders, agent: false, rejectUnauthorized: false, signal } as https.RequestOptions, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_BODY_BYTES) res.destroy();
      });
      res.on('close', () => resolve(undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      const wrongVersion = /wrong version number|packet length too long|EPROTO/i.test(`${e.code ?? ''} ${e.message}`);
      resolve({ message: goHTTPError(u, e, wrongVersion), httpResponseToHTTPS: wrongVersion });
    });
    req.end();
  });
}

// Renders a Node request error as Go's net/http client reports it.
function goHTTPError(u: URL, e: NodeJS.ErrnoException, httpResponseToHTTPS: boolean): string {
  const target = `Get ${goQuote(u.toString())}`;
  const addr = u.host;
  if (httpResponseToHTTPS) return `${target}: http: server gave HTTP response to HTTPS client`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `${target}: dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `${target}: dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `${target}: dial tcp ${addr}: connect: network is unreachable`;
    case 'ENOTFOUND':
      return `${target}: dial tcp: lookup ${u.hostname}: no such host`;
    case 'ECONNRESET':
      return `${target}: read tcp ${addr}: read: connection reset by peer`;
    case 'ABORT_ERR':
      return `${target}: context canceled`;
    default:
      return `${target}: ${e.message}`;
  }
}
