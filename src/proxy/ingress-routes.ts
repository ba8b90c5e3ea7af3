// The route table of the ingress proxy: from the Ingresses of podvisor's IngressClass, which Service
// port answers a request by its host and path, as the Ingress API specifies matching
// (k8s.io/api/networking/v1 types.go HTTPIngressPath, IngressRule.Host; the conformance of
// ingress controllers): a rule's host matches exactly, or as `*.` wildcard standing for exactly one
// DNS label; the most specific host wins (exact, then wildcard, then rules without a host), then within
// it the longest path, Exact before Prefix of the same length, Prefix matched element by element
// (`/foo` matches `/foo`, `/foo/` and `/foo/bar`, not `/foobar`), ImplementationSpecific as Prefix.
// Nothing matching: the defaultBackend, else 404. TLS: the Secret of the tls entry naming the host.

import type { Ingress, IngressBackend } from '../api/validation/networking.js';

/** A Service port an Ingress sends requests to. */
export interface RouteBackend {
  namespace: string;
  service: string;
  /** The Service port, by number or by name (ServiceBackendPort). */
  port: number | string;
  /** `ns/name` of the Ingress that routes here. */
  ingress: string;
}

export type PathMatch = 'Exact' | 'Prefix';

interface PathRoute {
  match: PathMatch;
  /** The path as written, trailing slash removed (Prefix); `/` stays `/`. */
  path: string;
  /** Its elements (Prefix). */
  elements: string[];
  backend: RouteBackend;
  /** Order of appearance (the oldest Ingress first): ties go to the first. */
  order: number;
}

/** What a host is routed by. */
interface HostRoutes {
  paths: PathRoute[];
}

/** A TLS entry: the hosts it names (none: every host) and its Secret. */
export interface TlsRoute {
  hosts: string[];
  namespace: string;
  secretName: string;
}

const elementsOf = (path: string) => path.split('/').filter((e) => e !== '');

/** Whether a request path matches a route path by the Ingress's element-wise Prefix rule. */
export function prefixMatches(routeElements: readonly string[], requestPath: string): boolean {
  const req = elementsOf(requestPath);
  if (routeElements.length > req.length) return false;
  return routeElements.every((e, i) => req[i] === e);
}

/** Whether a host matches a rule's host: exactly, or `*.rest` with exactly one label before rest. */
export function hostMatches(ruleHost: string, host: string): boolean {
  if (!ruleHost.startsWith('*.')) return ruleHost === host;
  const rest = ruleHost.slice(1);
  if (!host.endsWith(rest)) return false;
  const label = host.slice(0, host.length - rest.length);
  return label.length > 0 && !label.includes('.');
}

/** The host of a Host header or :authority, lower case, without the port; IPv6 brackets kept off. */
export function requestHost(authority: string | undefined): string {
  const a = (authority ?? '').trim().toLowerCase();
  if (a.startsWith('[')) return a.slice(1, a.indexOf(']') > 0 ? a.indexOf(']') : undefined);
  const colon = a.lastIndexOf(':');
  return (colon >= 0 ? a.slice(0, colon) : a).replace(/\.$/, '');
}

function backendOf(b: IngressBackend | undefined, namespace: string, ingress: string): RouteBackend | undefined {
  const svc = b?.service;
  if (!svc?.name) return undefined;
  const port = svc.port?.name ? svc.port.name : (svc.port?.number ?? 0);
  return { namespace, service: svc.name, port, ingress };
}

/** The result of routing a request. */
export type RouteResult = { backend: RouteBackend } | { notFound: true };

export class IngressRouteTable {
  private readonly exact = new Map<string, HostRoutes>();
  private readonly wildcard = new Map<string, HostRoutes>();
  private readonly anyHost: HostRoutes = { paths: [] };
  private defaultBackend: RouteBackend | undefined;
  readonly tls: TlsRoute[] = [];

  /** The table of these Ingresses, taken oldest first (creationTimestamp, then namespace/name). */
  constructor(ingresses: readonly Ingress[]) {
    const sorted = [...ingresses].sort((a, b) => {
      const ta = a.metadata?.creationTimestamp ?? '';
      const tb = b.metadata?.creationTimestamp ?? '';
      if (ta !== tb) return ta < tb ? -1 : 1;
      const ka = `${a.metadata?.namespace}/${a.metadata?.name}`;
      const kb = `${b.metadata?.namespace}/${b.metadata?.name}`;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
    let order = 0;
    for (const ing of sorted) {
      const ns = ing.metadata?.namespace ?? 'default';
      const key = `${ns}/${ing.metadata?.name ?? ''}`;
      const spec = ing.spec ?? {};
      this.defaultBackend ??= backendOf(spec.defaultBackend, ns, key);
      for (const rule of spec.rules ?? []) {
        const host = (rule.host ?? '').toLowerCase();
        const routes = this.hostRoutes(host);
        for (const p of rule.http?.paths ?? []) {
          const backend = backendOf(p.backend, ns, key);
          if (!backend) continue;
          const match: PathMatch = p.pathType === 'Exact' ? 'Exact' : 'Prefix';
          const raw = p.path || '/';
          const path = match === 'Prefix' && raw.length > 1 ? raw.replace(/\/+$/, '') || '/' : raw;
          routes.paths.push({ match, path, elements: elementsOf(path), backend, order: order++ });
        }
      }
      for (const t of spec.tls ?? [])
        if (t.secretName) this.tls.push({ hosts: (t.hosts ?? []).map((h) => h.toLowerCase()), namespace: ns, secretName: t.secretName });
    }
    for (const r of [...this.exact.values(), ...this.wildcard.values(), this.anyHost])
      r.paths.sort((a, b) => b.path.length - a.path.length || (a.match === b.match ? 0 : a.match === 'Exact' ? -1 : 1) || a.order - b.order);
  }

  private hostRoutes(host: string): HostRoutes {
    if (!host) return this.anyHost;
    const map = host.startsWith('*.') ? this.wildcard : this.exact;
    let r = map.get(host);
    if (!r) map.set(host, (r = { paths: [] }));
    return r;
  }

  /** The host's routes: its exact rules, else the wildcard ones, else those without a host. */
  private routesFor(host: string): HostRoutes | undefined {
    const exact = this.exact.get(host);
    if (exact) return exact;
    const dot = host.indexOf('.');
    if (dot > 0) {
      const wild = this.wildcard.get(`*${host.slice(dot)}`);
      if (wild) return wild;
    }
    return this.anyHost.paths.length ? this.anyHost : undefined;
  }

  /** Where a request for host and path (query string and all) goes. */
  route(host: string, rawPath: string): RouteResult {
    const q = rawPath.search(/[?#]/);
    const path = q >= 0 ? rawPath.slice(0, q) : rawPath;
    const routes = this.routesFor(host);
    for (const r of routes?.paths ?? []) {
      if (r.match === 'Exact' ? r.path === path : prefixMatches(r.elements, path)) return { backend: r.backend };
    }
    return this.defaultBackend ? { backend: this.defaultBackend } : { notFound: true };
  }

  /** Every backend the table names (for announcing and status). */
  backends(): RouteBackend[] {
    const out: RouteBackend[] = [];
    for (const r of [...this.exact.values(), ...this.wildcard.values(), this.anyHost]) for (const p of r.paths) out.push(p.backend);
    if (this.defaultBackend) out.push(this.defaultBackend);
    return out;
  }

  /** The Secret serving a TLS host (SNI): a tls entry naming it (exactly or by wildcard), else one naming no host. */
  tlsFor(host: string): TlsRoute | undefined {
    return this.tls.find((t) => t.hosts.some((h) => hostMatches(h, host))) ?? this.tls.find((t) => t.hosts.length === 0);
  }
}
