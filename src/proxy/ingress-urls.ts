// Where an Ingress can be reached from the host, as URLs: for each rule's host (wildcard hosts left
// out: no one name stands for them) and path, on the ingress proxy's address and ports; https where a
// tls entry covers the host; the port left out when it is 80 (http) or 443 (https). A rule without a
// host, or a defaultBackend alone, is reached at the proxy's address.

import type { Ingress } from '../api/validation/networking.js';
import { hostMatches } from './ingress-routes.js';

export interface IngressAddress {
  address: string;
  httpPort: number;
  httpsPort: number;
}

/** The Services an Ingress sends requests to (`name`, in its namespace). */
export function ingressServices(ing: Ingress): string[] {
  const out = new Set<string>();
  if (ing.spec?.defaultBackend?.service?.name) out.add(ing.spec.defaultBackend.service.name);
  for (const r of ing.spec?.rules ?? []) for (const p of r.http?.paths ?? []) if (p.backend?.service?.name) out.add(p.backend.service.name);
  return [...out];
}

/** The URLs of an Ingress, in the order of its rules. */
export function ingressURLs(ing: Ingress, at: IngressAddress): string[] {
  const tls = ing.spec?.tls ?? [];
  const secure = (host: string) => tls.some((t) => (t.hosts?.length ? t.hosts.some((h) => hostMatches(h.toLowerCase(), host)) : !!host));
  const url = (host: string, path: string) => {
    const https = host !== '' && secure(host);
    const port = https ? at.httpsPort : at.httpPort;
    const dflt = https ? 443 : 80;
    return `${https ? 'https' : 'http'}://${host || at.address}${port === dflt ? '' : `:${port}`}${path}`;
  };
  const out: string[] = [];
  const add = (u: string) => {
    if (!out.includes(u)) out.push(u);
  };
  for (const r of ing.spec?.rules ?? []) {
    const host = (r.host ?? '').toLowerCase();
    if (host.startsWith('*.')) continue;
    const paths = r.http?.paths ?? [];
    if (!paths.length) add(url(host, '/'));
    for (const p of paths) add(url(host, p.path || '/'));
  }
  if (!out.length && ing.spec?.defaultBackend) add(url('', '/'));
  return out;
}
