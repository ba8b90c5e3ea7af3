// The service proxy of the agent (the role kube-proxy plays, in its userspace mode): it watches the
// stored Services and Endpoints and, for every port of a Service with a ClusterIP, listens on
// <clusterIP>:<port>, on each NodePort address for NodePorts, and on the LoadBalancer address for
// LoadBalancer Services, forwarding each connection (TCP) or flow (UDP) to a Ready endpoint, round
// robin. No root is needed: the default ClusterIP range lies inside 127.0.0.0/8, which Linux routes
// to the loopback as a whole. Upstream: pkg/proxy/userspace (proxier.go, roundrobin.go). In the
// iptables mode (opt-in, as root) the kernel also DNATs TCP connections from the host and from pods
// to a ClusterIP port straight to a Ready endpoint (nat-table.ts, as pkg/proxy/iptables); the
// listeners stay, for NodePorts, LoadBalancer addresses, UDP, ClientIP affinity and the ports the
// kernel path cannot take. A NodePort or LoadBalancer port it cannot take is skipped and told as a
// Warning event on the Service (kube-proxy's words), with the process holding it when it can be seen.

import type { ServiceLike, ServicePortLike } from '../api/validation/service.js';
import type { KubeObject, ObjectsBackend, Storage, Watch, WatchEvent } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { RoundRobin, type Endpoint } from './balancer.js';
import type { NatServicePort } from './nat-rules.js';
import { NatTable } from './nat-table.js';
import { TcpListener } from './tcp-listener.js';
import { UdpListener } from './udp-listener.js';
import type { EventRecorder } from '../events/recorder.js';
import { describeHolder, heldByOthers } from '../util/host-sockets.js';

export interface ServiceProxyDeps {
  objects: ObjectsBackend;
  clock: Clock;
  logger: Logger;
  /** Where NodePorts listen (default 127.0.0.1). */
  nodePortAddresses?: readonly string[];
  /** userspace (default): every connection through the agent; iptables: ClusterIP ports DNATed by the kernel too. */
  mode?: ProxyMode;
  /** The nat chain of the iptables mode (default PODVISOR-SERVICES). */
  natChain?: string;
  /** Where a NodePort or LoadBalancer port the proxy cannot take is told, as a Warning event on its Service. */
  recorder?: EventRecorder;
  /** Where TCP connections dial an endpoint the agent cannot reach directly (pods under RootlessKit's port driver). */
  podAddress?: (host: string, port: number) => Promise<{ host: string; port: number }>;
}

export const proxyModes = ['userspace', 'iptables'] as const;
export type ProxyMode = (typeof proxyModes)[number];

interface EndpointsObject extends KubeObject {
  subsets?: Array<{ addresses?: Array<{ ip: string }>; ports?: Array<{ name?: string; port: number; protocol?: string }> }>;
}

/** A listener the proxy could not open. */
export interface ListenFailure {
  /** `PROTO address:port`. */
  address: string;
  ip: string;
  /** `ns/name` of the Service. */
  service: string;
  /** The errno code (EADDRINUSE: another process holds it; EADDRNOTAVAIL: not an address of this host; EACCES: below 1024). */
  code: string;
  message: string;
}

interface Listening {
  /** The service port it serves (`ns/name:port/protocol`). */
  portKey: string;
  listener: TcpListener | UdpListener;
}

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const portKeyOf = (svcKey: string, p: ServicePortLike) => `${svcKey}:${p.port}/${p.protocol ?? 'TCP'}`;

/** What a listen address of a service port is (kube-proxy's localPort description: `nodePort for ns/name:port`). */
export type ListenRole = 'clusterIP' | 'externalIP' | 'nodePort' | 'loadBalancer';

/** The addresses a service port listens on: protocol, address, port and what it is. */
export function serviceListenAddresses(
  svc: ServiceLike,
  p: ServicePortLike,
  nodePortAddresses: readonly string[],
): Array<[string, string, number, ListenRole]> {
  const spec = svc.spec ?? {};
  const proto = p.protocol ?? 'TCP';
  if (spec.type === 'ExternalName' || !spec.clusterIP || spec.clusterIP === 'None') return [];
  const out: Array<[string, string, number, ListenRole]> = [[proto, spec.clusterIP, p.port, 'clusterIP']];
  for (const ip of spec.externalIPs ?? []) out.push([proto, ip, p.port, 'externalIP']);
  if (p.nodePort && (spec.type === 'NodePort' || spec.type === 'LoadBalancer')) for (const a of nodePortAddresses) out.push([proto, a, p.nodePort, 'nodePort']);
  if (spec.type === 'LoadBalancer') for (const i of svc.status?.loadBalancer?.ingress ?? []) if (i.ip) out.push([proto, i.ip, p.port, 'loadBalancer']);
  return out;
}

/** One address a service port listens on, with what it is for. */
export interface Wanted {
  portKey: string;
  /** `ns/name:portName` (kube-proxy's ServicePortName). */
  portName: string;
  proto: string;
  ip: string;
  port: number;
  role: ListenRole;
}

/**
 * The Warning event for a NodePort or LoadBalancer port the proxy cannot take: kube-proxy's words
 * for a local port it cannot open (`can't open port …, skipping it`), the service controller's
 * reason for a load balancer it cannot ensure, with who holds the port and the fix.
 */
export function portUnavailableEvent(w: Wanted, why: string): { reason: string; message: string } | undefined {
  const local = `${JSON.stringify(`${w.role} for ${w.portName}`)} (${w.ip}:${w.port}/${w.proto.toLowerCase()})`;
  const fix = `clients of ${w.ip}:${w.port} do not reach this Service`;
  if (w.role === 'nodePort')
    return { reason: 'FailedToOpenNodePort', message: `can't open port ${local}, skipping it: ${why}; ${fix}: choose another nodePort` };
  if (w.role === 'loadBalancer')
    return {
      reason: 'SyncLoadBalancerFailed',
      message: `Error syncing load balancer: failed to ensure load balancer: can't open port ${local}: ${why}; ${fix}: choose another port`,
    };
  return undefined;
}

/** A service port's Ready endpoints: the addresses (never notReadyAddresses) with the port of the same name. */
export function readyEndpoints(ep: EndpointsObject | undefined, p: ServicePortLike): Endpoint[] {
  const out: Endpoint[] = [];
  for (const s of ep?.subsets ?? []) {
    const port = (s.ports ?? []).find((x) => (x.name ?? '') === (p.name ?? '') && (x.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
    if (!port) continue;
    for (const a of s.addresses ?? []) out.push({ ip: a.ip, port: port.port });
  }
  return out;
}

export class ServiceProxy {
  private readonly services = new Map<string, ServiceLike & KubeObject>();
  private readonly endpoints = new Map<string, EndpointsObject>();
  private readonly balancers = new Map<string, RoundRobin>();
  private readonly listeners = new Map<string, Listening>();
  private readonly watches: Watch[] = [];
  private readonly nodePortAddresses: readonly string[];
  private nat: NatTable | undefined;
  private natStarted: Promise<void> = Promise.resolve();
  /** The listens under way, and those that failed (see listensSettled). */
  private readonly opening = new Set<Promise<void>>();
  private readonly failures: ListenFailure[] = [];

  constructor(private readonly deps: ServiceProxyDeps) {
    this.nodePortAddresses = deps.nodePortAddresses ?? ['127.0.0.1'];
  }

  start(): void {
    const storage = (kind: string): Storage => {
      const s = this.deps.objects.storage(kind);
      if (!s?.watch) throw new Error(`service proxy: the object store does not keep ${kind}`);
      return s;
    };
    if (this.deps.mode === 'iptables') {
      const nat = (this.nat = new NatTable(this.deps.logger, this.deps.natChain));
      this.natStarted = nat.start().then(
        () => this.deps.logger.info('Service proxy: ClusterIP ports DNATed by the kernel', { chain: nat.chain }),
        (err: Error) => {
          this.nat = undefined;
          this.deps.logger.warn('Service proxy: the iptables mode is off, every connection goes through the agent', { err: err.message });
        },
      );
    }
    this.watches.push(
      storage('Endpoints').watch!('', (ev) => this.onEndpoints(ev as WatchEvent<EndpointsObject>)),
      storage('Service').watch!('', (ev) => this.onService(ev as WatchEvent<ServiceLike & KubeObject>)),
    );
  }

  stop(): void {
    for (const w of this.watches.splice(0)) w.stop();
    for (const l of this.listeners.values()) l.listener.close();
    this.listeners.clear();
    this.nat?.stop();
    this.nat = undefined;
  }

  /** Settles once the kernel's rules (iptables mode) hold the Services and Endpoints seen so far. */
  async natSettled(): Promise<void> {
    await this.natStarted;
    await this.nat?.settled();
  }

  /** Whether the iptables mode's rules are in place. */
  natActive(): boolean {
    return this.nat !== undefined;
  }

  /**
   * Settles once every listener asked for so far (at start: every stored Service's) is open or has
   * failed; resolves to the failures since start.
   */
  async listensSettled(): Promise<ListenFailure[]> {
    while (this.opening.size > 0) await Promise.all([...this.opening]);
    return [...this.failures];
  }

  /** Where the proxy listens now, as `PROTO address:port` (for status and tests). */
  listening(): string[] {
    return [...this.listeners.keys()];
  }

  private onService(ev: WatchEvent<ServiceLike & KubeObject>): void {
    const k = keyOf(ev.object);
    if (ev.type === 'DELETED') this.services.delete(k);
    else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.services.set(k, ev.object);
    else return;
    this.sync(k);
  }

  private onEndpoints(ev: WatchEvent<EndpointsObject>): void {
    const k = keyOf(ev.object);
    if (ev.type === 'DELETED') this.endpoints.delete(k);
    else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.endpoints.set(k, ev.object);
    else return;
    this.syncEndpoints(k);
  }

  private balancer(portKey: string): RoundRobin {
    let b = this.balancers.get(portKey);
    if (!b) this.balancers.set(portKey, (b = new RoundRobin(this.deps.clock)));
    return b;
  }

  private syncEndpoints(svcKey: string): void {
    const svc = this.services.get(svcKey);
    for (const p of svc?.spec?.ports ?? []) this.balancer(portKeyOf(svcKey, p)).setEndpoints(readyEndpoints(this.endpoints.get(svcKey), p));
    if (this.nat) void this.nat.set(this.natPorts());
  }

  /** The ClusterIP ports the kernel path takes: TCP, without ClientIP affinity, with their Ready endpoints. */
  private natPorts(): NatServicePort[] {
    const out: NatServicePort[] = [];
    for (const [key, svc] of this.services) {
      const spec = svc.spec ?? {};
      if (spec.type === 'ExternalName' || !spec.clusterIP || spec.clusterIP === 'None' || spec.sessionAffinity === 'ClientIP') continue;
      for (const p of spec.ports ?? [])
        if ((p.protocol ?? 'TCP') === 'TCP')
          out.push({ clusterIP: spec.clusterIP, port: p.port, protocol: 'TCP', endpoints: readyEndpoints(this.endpoints.get(key), p) });
    }
    return out;
  }

  private sync(svcKey: string): void {
    const svc = this.services.get(svcKey);
    const wanted = new Map<string, Wanted>();
    for (const p of svc?.spec?.ports ?? []) {
      const portKey = portKeyOf(svcKey, p);
      const portName = p.name ? `${svcKey}:${p.name}` : svcKey;
      const b = this.balancer(portKey);
      b.setAffinity(svc?.spec?.sessionAffinity === 'ClientIP' ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800) : 0);
      for (const [proto, ip, port, role] of serviceListenAddresses(svc!, p, this.nodePortAddresses))
        wanted.set(`${proto} ${ip}:${port}`, { portKey, portName, proto, ip, port, role });
    }
    for (const k of [...this.balancers.keys()]) if (k.startsWith(`${svcKey}:`) && ![...wanted.values()].some((w) => w.portKey === k)) this.balancers.delete(k);
    for (const [addr, l] of [...this.listeners]) {
      if (!l.portKey.startsWith(`${svcKey}:`) || wanted.get(addr)?.portKey === l.portKey) continue;
      l.listener.close();
      this.listeners.delete(addr);
    }
    for (const [addr, w] of wanted) {
      const owner = this.listeners.get(addr);
      if (owner) {
        if (owner.portKey !== w.portKey) {
          this.deps.logger.warn('Service port already served by another service', { address: addr, service: svcKey, owner: owner.portKey });
          this.warnUnavailable(svc!, w, `the port is taken by Service ${owner.portKey.replace(/:\d+\/\w+$/, '')}`);
        }
        continue;
      }
      const pick = () => this.balancer(w.portKey);
      const listener =
        w.proto === 'UDP'
          ? new UdpListener(w.ip, w.port, pick, this.deps.clock)
          : w.proto === 'TCP'
            ? new TcpListener(w.ip, w.port, pick, this.deps.podAddress)
            : undefined;
      if (!listener) continue;
      this.listeners.set(addr, { portKey: w.portKey, listener });
      const opening: Promise<void> = listener.listen().then(
        () => void this.opening.delete(opening),
        (err: NodeJS.ErrnoException) => {
          this.opening.delete(opening);
          if (this.listeners.get(addr)?.listener === listener) this.listeners.delete(addr);
          this.failures.push({ address: addr, ip: w.ip, service: svcKey, code: err.code ?? 'UNKNOWN', message: err.message });
          if (this.failures.length > 100) this.failures.shift();
          this.deps.logger.warn('The service proxy cannot listen', { address: addr, service: svcKey, err: err.message });
          this.warnUnavailable(svc!, w, this.whyNotOpened(w, err));
        },
      );
      this.opening.add(opening);
    }
    this.syncEndpoints(svcKey);
  }

  /** Why a listen failed, with the process holding the address when it can be seen. */
  private whyNotOpened(w: Wanted, err: NodeJS.ErrnoException): string {
    const base = err.message.replace(/^(listen|bind) /, '');
    if (err.code !== 'EADDRINUSE') return base;
    const holder = describeHolder(heldByOthers(w.proto, w.port, [w.ip]));
    return `${base}, held by ${holder ?? 'another process'}`;
  }

  private warnUnavailable(svc: ServiceLike & KubeObject, w: Wanted, why: string): void {
    const ev = portUnavailableEvent(w, why);
    if (!ev || !this.deps.recorder) return;
    const m = svc.metadata ?? {};
    this.deps.recorder.event(
      {
        kind: 'Service',
        apiVersion: 'v1',
        namespace: m.namespace ?? 'default',
        name: m.name ?? '',
        uid: m.uid ?? '',
        resourceVersion: m.resourceVersion ?? '',
      },
      'Warning',
      ev.reason,
      ev.message,
    );
  }
}
