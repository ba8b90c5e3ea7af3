// The cluster DNS records of the stored Services and Endpoints, as CoreDNS's kubernetes plugin
// answers them (the DNS specification for Services and Pods): <svc>.<ns>.svc.<domain> A to the
// ClusterIP, or to the Ready endpoints of a headless Service; CNAME for ExternalName; SRV
// _<port>._<proto>.<svc>.<ns>.svc.<domain> for named ports; <hostname>.<svc>.<ns>.svc.<domain> for
// the endpoints with a hostname (StatefulSet pods). IPv4 only: AAAA of a known name is empty.

import type { Answer } from 'dns-packet';
import type { ServiceLike } from '../api/validation/service.js';

export interface EndpointsView {
  subsets?: Array<{
    addresses?: Array<{ ip: string; hostname?: string }>;
    ports?: Array<{ name?: string; port: number; protocol?: string }>;
  }>;
}

/** What the records are computed from. */
export interface ClusterView {
  service(namespace: string, name: string): ServiceLike | undefined;
  endpoints(namespace: string, name: string): EndpointsView | undefined;
}

export type Lookup = { rcode: 'NOERROR' | 'NXDOMAIN'; answers: Answer[] } | undefined;

/** The TTL CoreDNS's kubernetes plugin gives (5 s). */
const ttl = 5;

/** The answers for a question in the cluster domain; undefined for a name outside it (to forward). */
export function clusterRecords(view: ClusterView, domain: string, name: string, type: string): Lookup {
  const lower = name.toLowerCase().replace(/\.$/, '');
  const suffix = `.svc.${domain}`;
  if (lower !== domain && !lower.endsWith(`.${domain}`)) return undefined;
  const nx: Lookup = { rcode: 'NXDOMAIN', answers: [] };
  if (!lower.endsWith(suffix)) return nx;
  const labels = lower.slice(0, -suffix.length).split('.');
  // <svc>.<ns> | <host>.<svc>.<ns> | _<port>._<proto>.<svc>.<ns>
  if (labels.length === 2) return serviceRecords(view, name, labels[0]!, labels[1]!, type);
  if (labels.length === 3) return hostRecords(view, name, labels[0]!, labels[1]!, labels[2]!, type);
  if (labels.length === 4 && labels[0]!.startsWith('_') && labels[1]!.startsWith('_'))
    return srvRecords(view, domain, name, labels[0]!.slice(1), labels[1]!.slice(1), labels[2]!, labels[3]!, type);
  return nx;
}

const readyAddresses = (ep: EndpointsView | undefined) => (ep?.subsets ?? []).flatMap((s) => s.addresses ?? []);
const a = (name: string, ip: string): Answer => ({ type: 'A', name, ttl, data: ip });

function serviceRecords(view: ClusterView, name: string, svcName: string, ns: string, type: string): Lookup {
  const svc = view.service(ns, svcName);
  if (!svc) return { rcode: 'NXDOMAIN', answers: [] };
  if (svc.spec?.type === 'ExternalName') return { rcode: 'NOERROR', answers: [{ type: 'CNAME', name, ttl, data: svc.spec.externalName ?? '' }] };
  if (type !== 'A') return { rcode: 'NOERROR', answers: [] };
  if (svc.spec?.clusterIP && svc.spec.clusterIP !== 'None') return { rcode: 'NOERROR', answers: [a(name, svc.spec.clusterIP)] };
  const ips = [...new Set(readyAddresses(view.endpoints(ns, svcName)).map((x) => x.ip))];
  return { rcode: 'NOERROR', answers: ips.map((ip) => a(name, ip)) };
}

function hostRecords(view: ClusterView, name: string, host: string, svcName: string, ns: string, type: string): Lookup {
  if (!view.service(ns, svcName)) return { rcode: 'NXDOMAIN', answers: [] };
  const addr = readyAddresses(view.endpoints(ns, svcName)).find((x) => x.hostname === host || x.ip.replace(/\./g, '-') === host);
  if (!addr) return { rcode: 'NXDOMAIN', answers: [] };
  return { rcode: 'NOERROR', answers: type === 'A' ? [a(name, addr.ip)] : [] };
}

function srvRecords(view: ClusterView, domain: string, name: string, port: string, proto: string, svcName: string, ns: string, type: string): Lookup {
  const svc = view.service(ns, svcName);
  const sp = svc?.spec?.ports?.find((p) => p.name === port && (p.protocol ?? 'TCP').toLowerCase() === proto);
  if (!svc || !sp) return { rcode: 'NXDOMAIN', answers: [] };
  if (type !== 'SRV') return { rcode: 'NOERROR', answers: [] };
  const base = `${svcName}.${ns}.svc.${domain}`;
  if (svc.spec?.clusterIP && svc.spec.clusterIP !== 'None')
    return { rcode: 'NOERROR', answers: [{ type: 'SRV', name, ttl, data: { priority: 0, weight: 100, port: sp.port, target: base } }] };
  const answers: Answer[] = [];
  for (const s of view.endpoints(ns, svcName)?.subsets ?? []) {
    const p = s.ports?.find((x) => (x.name ?? '') === port);
    if (!p) continue;
    for (const addr of s.addresses ?? []) {
      const target = `${addr.hostname ?? addr.ip.replace(/\./g, '-')}.${base}`;
      answers.push({ type: 'SRV', name, ttl, data: { priority: 0, weight: 100, port: p.port, target } });
    }
  }
  return { rcode: 'NOERROR', answers };
}
