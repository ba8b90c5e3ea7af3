// Where a Service can be reached from the host, as `minikube service --url` lists it: for each port
// the LoadBalancer ingress, the NodePorts on their addresses and the ClusterIP, as URLs (http for TCP,
// https for a port named https or numbered 443, udp:// for UDP). ServiceURLWatch tells once a Service
// has Ready endpoints (and again each time it has them after having none).

import type { ServiceLike } from '../api/validation/service.js';
import type { KubeObject, ObjectsBackend, Watch, WatchEvent } from '../kubeapi/backend.js';

export interface EndpointsLike {
  subsets?: Array<{ addresses?: unknown[] }>;
}

function scheme(p: { name?: string; port: number; protocol?: string }): string {
  if ((p.protocol ?? 'TCP') === 'UDP') return 'udp';
  if ((p.protocol ?? 'TCP') === 'SCTP') return 'sctp';
  return p.name === 'https' || p.port === 443 ? 'https' : 'http';
}

/** Which kind of address a Service URL is on: the LoadBalancer ingress, a NodePort, or the ClusterIP. */
export type ServiceAddressKind = 'LoadBalancer' | 'NodePort' | 'ClusterIP';

/** One URL of a Service with the kind of address it is on. */
export interface ServiceAddress {
  url: string;
  via: ServiceAddressKind;
}

/** The addresses of a Service's ports, reachable first; none for a headless or ExternalName Service. */
export function serviceAddresses(svc: ServiceLike, nodePortAddresses: readonly string[]): ServiceAddress[] {
  const spec = svc.spec ?? {};
  if (spec.type === 'ExternalName' || !spec.clusterIP || spec.clusterIP === 'None') return [];
  const out: ServiceAddress[] = [];
  const seen = new Set<string>();
  const add = (via: ServiceAddressKind, url: string) => {
    if (seen.has(url)) return;
    seen.add(url);
    out.push({ url, via });
  };
  for (const p of spec.ports ?? []) {
    const s = scheme(p);
    const url = (host: string, port: number) => `${s}://${host}:${port}`;
    if (spec.type === 'LoadBalancer')
      for (const i of svc.status?.loadBalancer?.ingress ?? []) if (i.ip || i.hostname) add('LoadBalancer', url(i.ip ?? i.hostname!, p.port));
    if (p.nodePort && (spec.type === 'NodePort' || spec.type === 'LoadBalancer')) for (const a of nodePortAddresses) add('NodePort', url(a, p.nodePort));
    add('ClusterIP', url(spec.clusterIP, p.port));
  }
  return out;
}

/** The URLs of a Service's ports, reachable first; none for a headless or ExternalName Service. */
export function serviceURLs(svc: ServiceLike, nodePortAddresses: readonly string[]): string[] {
  return serviceAddresses(svc, nodePortAddresses).map((a) => a.url);
}

/** How many Ready addresses an Endpoints object holds. */
export const readyCount = (ep: EndpointsLike | undefined) => (ep?.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0), 0);

/** Calls onReachable(namespace, name, urls) when a Service goes from no Ready endpoint to some. */
export class ServiceURLWatch {
  private readonly services = new Map<string, ServiceLike & KubeObject>();
  private readonly ready = new Map<string, number>();
  private readonly told = new Set<string>();
  private readonly watches: Watch[] = [];

  constructor(
    private readonly objects: ObjectsBackend,
    private readonly nodePortAddresses: readonly string[],
    private readonly onReachable: (namespace: string, name: string, urls: string[]) => void,
  ) {}

  start(): void {
    const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    const svcs = this.objects.storage('Service');
    const eps = this.objects.storage('Endpoints');
    if (!svcs?.watch || !eps?.watch) return;
    this.watches.push(
      svcs.watch('', (ev: WatchEvent<KubeObject>) => {
        const k = keyOf(ev.object);
        if (ev.type === 'DELETED') this.services.delete(k);
        else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.services.set(k, ev.object as ServiceLike & KubeObject);
        this.check(k);
      }),
      eps.watch('', (ev: WatchEvent<KubeObject>) => {
        const k = keyOf(ev.object);
        this.ready.set(k, ev.type === 'DELETED' ? 0 : readyCount(ev.object as EndpointsLike));
        this.check(k);
      }),
    );
  }

  stop(): void {
    for (const w of this.watches.splice(0)) w.stop();
  }

  private check(key: string): void {
    const svc = this.services.get(key);
    if (!svc || !(this.ready.get(key) ?? 0)) {
      this.told.delete(key);
      return;
    }
    if (this.told.has(key)) return;
    const urls = serviceURLs(svc, this.nodePortAddresses);
    if (!urls.length) return;
    this.told.add(key);
    this.onReachable(svc.metadata?.namespace ?? '', svc.metadata?.name ?? '', urls);
  }
}
