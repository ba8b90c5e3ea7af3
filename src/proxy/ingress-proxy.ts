// The ingress controller of the agent: the HTTP(S) reverse proxy that serves the Ingresses of
// podvisor's IngressClass (controller podvisor.io/ingress-controller), as ingress-nginx serves its
// class's. It keeps the built-in IngressClass `podvisor` (the default when no other class is), watches
// IngressClasses, Ingresses, Services, EndpointSlices and Secrets, routes each request by host and path
// (ingress-routes.ts) to a Ready endpoint of the backend Service's port, round robin as the service
// proxy balances (balancer.ts), and writes each served Ingress's status.loadBalancer (the address it
// listens on, with the ports when they are not 80 and 443). HTTP on one port; HTTPS on another with the
// certificate of the Secret the Ingress's tls entry names for the host asked by SNI, HTTP/1.1 and
// HTTP/2 (ALPN). No Ready endpoint: 503 with the reason; no rule for the host: 404.
// Ingresses of another class (spec.ingressClassName, or the kubernetes.io/ingress.class annotation)
// are left alone. Upstream counterpart: an ingress controller (kubernetes/ingress-nginx).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, type SecureContext } from 'node:tls';
import { defaultIngressClassAnnotation, ingressClassAnnotation, type Ingress, type IngressClass } from '../api/validation/networking.js';
import type { ServiceLike } from '../api/validation/service.js';
import type { KubeObject, ObjectsBackend, Storage, Watch, WatchEvent } from '../kubeapi/backend.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { RoundRobin } from './balancer.js';
import { backendEndpoints, backendName, serviceNameLabel, type EndpointSliceLike } from './ingress-backends.js';
import { Forwarder, replyRaw, replyText, streamHighWaterMark, type ForwardContext } from './ingress-forward.js';
import { IngressRouteTable, requestHost, type RouteBackend } from './ingress-routes.js';

/** The controller podvisor's IngressClass names. */
export const ingressControllerName = 'podvisor.io/ingress-controller';
/** The built-in IngressClass. */
export const builtinIngressClass = 'podvisor';

export interface IngressProxyDeps {
  objects: ObjectsBackend;
  clock: Clock;
  logger: Logger;
  /** Where it listens (default 127.0.0.1). */
  address?: string;
  /** HTTP ports to try in order (0: a free port); default [0]. */
  httpPorts?: readonly number[];
  /** HTTPS ports to try in order; default [0]. */
  httpsPorts?: readonly number[];
  /** Where what a served Ingress asks and the proxy cannot do is told, as Warning events on it. */
  recorder?: EventRecorder;
}

/** Where the proxy listens, once started. */
export interface IngressListening {
  address: string;
  httpPort: number;
  httpsPort: number;
}

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const backendKey = (b: RouteBackend) => `${b.namespace}/${b.service}:${b.port}`;

/** The class an Ingress asks for: spec.ingressClassName, else the kubernetes.io/ingress.class annotation. */
export function ingressClassOf(ing: Ingress): string | undefined {
  return ing.spec?.ingressClassName ?? ing.metadata?.annotations?.[ingressClassAnnotation] ?? undefined;
}

/** The status.loadBalancer.ingress an Ingress served at where is given. */
export function loadBalancerIngress(where: IngressListening): Array<{ ip: string; ports?: Array<{ port: number; protocol: string }> }> {
  if (where.httpPort === 80 && where.httpsPort === 443) return [{ ip: where.address }];
  return [
    {
      ip: where.address,
      ports: [
        { port: where.httpPort, protocol: 'TCP' },
        { port: where.httpsPort, protocol: 'TCP' },
      ],
    },
  ];
}

export class IngressProxy {
  private readonly classes = new Map<string, IngressClass & KubeObject>();
  private readonly ingresses = new Map<string, Ingress & KubeObject>();
  private readonly services = new Map<string, ServiceLike & KubeObject>();
  /** EndpointSlices by the `ns/service` they belong to, then by slice name. */
  private readonly slices = new Map<string, Map<string, EndpointSliceLike>>();
  private readonly balancers = new Map<string, RoundRobin>();
  /** Why a backend has no endpoint (the 503 body), by backendKey. */
  private readonly unavailable = new Map<string, string>();
  private readonly contexts = new Map<string, SecureContext>();
  private readonly watches: Watch[] = [];
  private readonly forwarder = new Forwarder();
  private table = new IngressRouteTable([]);
  private http?: Server;
  private https?: Http2SecureServer;
  private where?: IngressListening;
  private syncQueued = false;
  private readonly sockets = new Set<Duplex>();
  private readonly onChangeListeners: Array<() => void> = [];
  /** `uid/generation` of the served Ingresses already judged for what the proxy cannot do. */
  private readonly judged = new Set<string>();

  constructor(private readonly deps: IngressProxyDeps) {}

  /** Creates the built-in class when missing, opens the listeners and follows the objects. */
  async start(): Promise<IngressListening> {
    await this.ensureBuiltinClass();
    const address = this.deps.address ?? '127.0.0.1';
    this.http = createServer({ keepAlive: true, noDelay: true, highWaterMark: streamHighWaterMark } as object, (req, res) => this.handle(req, res, 'http'));
    this.https = createSecureServer(
      { allowHTTP1: true, SNICallback: (name, cb) => this.sni(name, cb) },
      (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => this.handle(req, res, 'https'),
    );
    for (const server of [this.http, this.https] as Array<Server | Http2SecureServer>) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
      server.on('connection', (s: Socket) => {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
      });
    }
    const httpPort = await listenFirst(this.http, address, this.deps.httpPorts ?? [0], this.deps.logger, 'HTTP');
    const httpsPort = await listenFirst(this.https, address, this.deps.httpsPorts ?? [0], this.deps.logger, 'HTTPS');
    this.where = { address, httpPort, httpsPort };
    const storage = (kind: string): Storage => {
      const s = this.deps.objects.storage(kind);
      if (!s?.watch) throw new Error(`ingress proxy: the object store does not keep ${kind}`);
      return s;
    };
    const follow = <T extends KubeObject>(kind: string, map: (ev: WatchEvent<T>) => void) =>
      this.watches.push(
        storage(kind).watch!('', (ev) => {
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return;
          map(ev as WatchEvent<T>);
          this.queueSync();
        }),
      );
    const keep =
      <T extends KubeObject>(m: Map<string, T>) =>
      (ev: WatchEvent<T>) => {
        if (ev.type === 'DELETED') m.delete(keyOf(ev.object));
        else m.set(keyOf(ev.object), ev.object);
      };
    follow('IngressClass', keep(this.classes));
    follow('Ingress', keep(this.ingresses));
    follow('Service', keep(this.services));
    follow<EndpointSliceLike & KubeObject>('EndpointSlice', (ev) => {
      const svc = ev.object.metadata?.labels?.[serviceNameLabel];
      if (!svc) return;
      const k = `${ev.object.metadata?.namespace ?? ''}/${svc}`;
      let m = this.slices.get(k);
      if (!m) this.slices.set(k, (m = new Map()));
      if (ev.type === 'DELETED') m.delete(ev.object.metadata?.name ?? '');
      else m.set(ev.object.metadata?.name ?? '', ev.object);
    });
    follow('Secret', (ev) => {
      for (const k of [...this.contexts.keys()]) if (k.startsWith(`${keyOf(ev.object)}@`)) this.contexts.delete(k);
    });
    this.sync();
    this.deps.logger.info('Ingress proxy listening', { http: `${address}:${httpPort}`, https: `${address}:${httpsPort}`, class: builtinIngressClass });
    return this.where;
  }

  stop(): void {
    for (const w of this.watches.splice(0)) w.stop();
    this.http?.close();
    this.https?.close();
    for (const s of this.sockets) s.destroy();
    this.forwarder.close();
  }

  /** Where it listens (undefined before start). */
  listening(): IngressListening | undefined {
    return this.where;
  }

  /** Calls fn after each change of the routes or of the backends' endpoints. */
  onChange(fn: () => void): void {
    this.onChangeListeners.push(fn);
  }

  /** The Ingresses served now (of podvisor's class). */
  served(): Array<Ingress & KubeObject> {
    return [...this.ingresses.values()].filter((i) => this.isOurs(i));
  }

  /** Why a backend has no Ready endpoint, undefined when it has some. */
  backendProblem(b: RouteBackend): string | undefined {
    return this.unavailable.get(backendKey(b));
  }

  /** The IngressClass `podvisor`, default unless another class is, created at first start. */
  private async ensureBuiltinClass(): Promise<void> {
    const store = this.deps.objects.storage('IngressClass');
    if (!store?.create || store.get('', builtinIngressClass)) return;
    const otherDefault = store.list().items.some((c) => c.metadata?.annotations?.[defaultIngressClassAnnotation] === 'true');
    const obj = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: {
        name: builtinIngressClass,
        labels: { 'app.kubernetes.io/managed-by': 'podvisor' },
        ...(otherDefault ? {} : { annotations: { [defaultIngressClassAnnotation]: 'true' } }),
      },
      spec: { controller: ingressControllerName },
    };
    await store.create(obj as KubeObject, {}).catch((err: Error) => this.deps.logger.warn('Could not create the IngressClass podvisor', { err: err.message }));
  }

  /** Whether an Ingress is of a class whose controller is this one (no class: when such a class is the default). */
  private isOurs(ing: Ingress): boolean {
    const name = ingressClassOf(ing);
    if (name === undefined) {
      return [...this.classes.values()].some(
        (c) => c.spec?.controller === ingressControllerName && c.metadata?.annotations?.[defaultIngressClassAnnotation] === 'true',
      );
    }
    return this.classes.get(`/${name}`)?.spec?.controller === ingressControllerName;
  }

  private queueSync(): void {
    if (this.syncQueued) return;
    this.syncQueued = true;
    setImmediate(() => {
      this.syncQueued = false;
      this.sync();
    });
  }

  private sync(): void {
    const served = this.served();
    this.table = new IngressRouteTable(served);
    const used = new Set<string>();
    this.unavailable.clear();
    for (const b of this.table.backends()) {
      const k = backendKey(b);
      if (used.has(k)) continue;
      used.add(k);
      const svcKey = `${b.namespace}/${b.service}`;
      const found = backendEndpoints(b, this.services.get(svcKey), [...(this.slices.get(svcKey)?.values() ?? [])]);
      let rr = this.balancers.get(k);
      if (!rr) this.balancers.set(k, (rr = new RoundRobin(this.deps.clock)));
      if ('reason' in found) {
        rr.setEndpoints([]);
        this.unavailable.set(k, found.reason);
      } else rr.setEndpoints(found.endpoints);
    }
    for (const k of [...this.balancers.keys()]) if (!used.has(k)) this.balancers.delete(k);
    void this.writeStatuses(served);
    const judging = new Set(served.map((i) => `${i.metadata?.uid ?? ''}/${i.metadata?.generation ?? 0}`));
    for (const k of this.judged) if (!judging.has(k)) this.judged.delete(k);
    for (const ing of served) this.warnUnsupported(ing);
    for (const fn of this.onChangeListeners) fn();
  }

  /** A Warning event, once per generation, for what a served Ingress asks and the proxy cannot do. */
  private warnUnsupported(ing: Ingress & KubeObject): void {
    const m = ing.metadata ?? {};
    const key = `${m.uid ?? ''}/${m.generation ?? 0}`;
    if (!this.deps.recorder || this.judged.has(key)) return;
    this.judged.add(key);
    const problems = unsupportedParts(ing);
    if (!problems.length) return;
    this.deps.recorder.event(
      {
        kind: 'Ingress',
        apiVersion: 'networking.k8s.io/v1',
        namespace: m.namespace ?? 'default',
        name: m.name ?? '',
        uid: m.uid ?? '',
        resourceVersion: m.resourceVersion ?? '',
      },
      'Warning',
      'Unsupported',
      `${problems.join('; ')}: the podvisor ingress proxy sends requests to Service backends only; those requests are answered 404 (or go to the defaultBackend)`,
    );
  }

  private async writeStatuses(served: ReadonlyArray<Ingress & KubeObject>): Promise<void> {
    const store = this.deps.objects.storage('Ingress');
    if (!this.where || !store?.updateStatus) return;
    const want = loadBalancerIngress(this.where);
    for (const ing of served) {
      if (JSON.stringify(ing.status?.loadBalancer?.ingress ?? []) === JSON.stringify(want)) continue;
      const next = { ...ing, status: { ...ing.status, loadBalancer: { ingress: want } } };
      await store.updateStatus(next as KubeObject, {}).catch((err: Error) => {
        if (!/conflict|not found/i.test(err.message)) this.deps.logger.warn('Could not write the Ingress status', { ingress: keyOf(ing), err: err.message });
      });
    }
  }

  /** The endpoint for a request, or the answer the proxy gives itself. */
  private pick(authority: string | undefined, path: string, clientIP: string): { endpoint: { ip: string; port: number } } | { code: number; text: string } {
    const host = requestHost(authority);
    const r = this.table.route(host, path);
    if ('notFound' in r) return { code: 404, text: `no ingress rule for host ${JSON.stringify(host)} and path ${JSON.stringify(path.split('?')[0])}` };
    const k = backendKey(r.backend);
    const endpoint = this.balancers.get(k)?.choose(clientIP);
    if (!endpoint) return { code: 503, text: this.unavailable.get(k) ?? `no ready endpoints for service ${backendName(r.backend)}` };
    return { endpoint };
  }

  private context(scheme: 'http' | 'https', socket: { remoteAddress?: string | undefined; localPort?: number | undefined }): ForwardContext {
    return { scheme, port: socket.localPort ?? 0, clientIP: (socket.remoteAddress ?? '').replace(/^::ffff:/, '') };
  }

  private handle(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, scheme: 'http' | 'https'): void {
    const ctx = this.context(scheme, req.socket);
    const authority = (req.headers[':authority'] as string | undefined) ?? req.headers.host;
    const chosen = this.pick(authority, req.url ?? '/', ctx.clientIP);
    if ('code' in chosen) return replyText(res, chosen.code, chosen.text);
    this.forwarder.forward(req, res, chosen.endpoint, ctx);
  }

  private handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const scheme = (socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    const ctx = this.context(scheme, socket as Socket);
    socket.on('error', () => socket.destroy());
    const chosen = this.pick(req.headers.host, req.url ?? '/', ctx.clientIP);
    if ('code' in chosen) return replyRaw(socket, chosen.code, chosen.code === 404 ? 'Not Found' : 'Service Unavailable', chosen.text);
    this.forwarder.upgrade(req, socket, head, chosen.endpoint, ctx);
  }

  /** The certificate for an SNI name: the Secret of the tls entry naming the host. */
  private sni(name: string, cb: (err: Error | null, ctx?: SecureContext) => void): void {
    const host = name.toLowerCase();
    const t = this.table.tlsFor(host);
    if (!t) return cb(new Error(`no Ingress tls entry names ${host}`));
    const secret = this.deps.objects.storage('Secret')?.get(t.namespace, t.secretName) as
      (KubeObject & { type?: string; data?: Record<string, string> }) | undefined;
    if (!secret) return cb(new Error(`secret ${t.namespace}/${t.secretName} not found`));
    const key = `${t.namespace}/${t.secretName}@${secret.metadata?.resourceVersion ?? ''}`;
    let ctx = this.contexts.get(key);
    if (!ctx) {
      try {
        const cert = Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64');
        const pkey = Buffer.from(secret.data?.['tls.key'] ?? '', 'base64');
        ctx = createSecureContext({ cert, key: pkey, ALPNProtocols: ['h2', 'http/1.1'] } as object);
        this.contexts.set(key, ctx);
      } catch (err) {
        this.deps.logger.warn('The TLS Secret of an Ingress does not hold a certificate and key', {
          secret: `${t.namespace}/${t.secretName}`,
          err: String(err),
        });
        return cb(err as Error);
      }
    }
    cb(null, ctx);
  }
}

/** The parts of an Ingress the proxy does not serve: backends that are resources, not Services. */
export function unsupportedParts(ing: Ingress): string[] {
  const out: string[] = [];
  const res = (r: { kind?: string; name?: string } | undefined, where: string) => {
    if (r) out.push(`${where}: backend resource ${r.kind ?? ''}/${r.name ?? ''}`);
  };
  res(ing.spec?.defaultBackend?.resource, 'spec.defaultBackend');
  (ing.spec?.rules ?? []).forEach((rule, i) =>
    (rule.http?.paths ?? []).forEach((p, j) => res(p.backend?.resource, `spec.rules[${i}].http.paths[${j}].backend`)),
  );
  return out;
}

/** Listens on the first port of ports that can be taken; the last failure when none can. */
async function listenFirst(server: Server | Http2SecureServer, address: string, ports: readonly number[], logger: Logger, what: string): Promise<number> {
  let last: Error | undefined;
  for (const port of ports) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: address, port, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    } catch (err) {
      last = err as Error;
      if (ports.length > 1) logger.warn(`The ingress proxy cannot listen for ${what} on ${address}:${port}; trying the next port`, { err: last.message });
    }
  }
  throw last ?? new Error('no port to listen on');
}
