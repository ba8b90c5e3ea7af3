// ClusterIPs and NodePorts of Services, allocated as the API server's service REST storage does
// (pkg/registry/core/service/ipallocator, portallocator): from --service-cluster-ip-range and the
// NodePort range, a requested value checked for range and conflicts, a free one chosen otherwise.
// What is in use is read from the stored Services themselves (persisted in the root dir with the
// object store), as the apiserver's repair controllers rebuild their bitmaps from the Services.
// A NodePort the allocator chooses is random, as the apiserver's (the upper band of the range first,
// the lower band of min(max(16, size/32), 128) ports kept for ports users choose: its
// randomScanStrategyWithOffset), and on one host it also skips the ports another process holds where
// NodePorts listen (the agent of another root dir, or any server): the node is the whole cluster.

import type { FieldError } from '../api/field-errors.js';
import { invalid } from '../api/field-errors.js';
import { goQuote } from '../util/go-format.js';

/** A []string value as the API server prints it in a field error (`[]string{"10.0.0.1"}`). */
function goStrings(values: readonly string[]): { toString(): string } {
  return { toString: () => `[]string{${values.map(goQuote).join(', ')}}` };
}

/** An IPv4 range in CIDR notation, as numbers. */
export interface Ipv4Range {
  cidr: string;
  /** The network address. */
  base: number;
  /** Addresses in the range. */
  size: number;
}

export interface ServiceNetwork {
  clusterIPRange: Ipv4Range;
  /** The NodePort range (30000-32767 by default, the apiserver's --service-node-port-range). */
  nodePortBase: number;
  nodePortSize: number;
  /** The address LoadBalancer Services are published on (status.loadBalancer.ingress). */
  loadBalancerIP: string;
}

/** Inside 127.0.0.0/8, which Linux routes to the loopback as a whole: the proxy listens there without root. */
export const defaultServiceClusterIPRange = '127.99.0.0/16';

export function parseIpv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Parses an IPv4 CIDR (the prefix 8..30, so the range holds a few services); throws Error with the reason. */
export function parseIpv4Range(cidr: string): Ipv4Range {
  const m = /^([0-9.]+)\/(\d{1,2})$/.exec(cidr);
  const addr = m ? parseIpv4(m[1]!) : undefined;
  const bits = m ? Number(m[2]) : NaN;
  if (addr === undefined || !(bits >= 8 && bits <= 30)) throw new Error('must be an IPv4 CIDR with a prefix length between 8 and 30, e.g. 127.99.0.0/16');
  const size = 2 ** (32 - bits);
  const base = Math.floor(addr / size) * size;
  return { cidr: `${formatIpv4(base)}/${bits}`, base, size };
}

export function defaultServiceNetwork(): ServiceNetwork {
  return { clusterIPRange: parseIpv4Range(defaultServiceClusterIPRange), nodePortBase: 30000, nodePortSize: 2768, loadBalancerIP: '127.0.0.1' };
}

/** The parts of a Service the allocator reads and writes. */
export interface AllocatedService {
  metadata?: { namespace?: string; name?: string };
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: Array<{ port?: number; protocol?: string; nodePort?: number; name?: string }>;
  };
}

/** The ports other processes of the host hold where NodePorts listen (the agent reads /proc/net). */
export interface HostPorts {
  /** A snapshot: `TCP/30000`, `UDP/30001`, … held by another process. */
  heldByOthers(): ReadonlySet<string>;
  /** Who holds `protocol` `port` (`pid 12 ("podvisor agent")`), or undefined when not to be seen. */
  holder(protocol: string, port: number): string | undefined;
}

export interface ServiceAllocatorOptions {
  /** Where the host's own ports are read from (none: only stored Services count). */
  hostPorts?: HostPorts;
  /** A number in [0, 1) (Math.random by default). */
  random?: () => number;
}

/** The lower band of a NodePort range the apiserver hands out last (calculateRangeOffset: min(max(16, size/32), 128)). */
export function nodePortStaticBand(size: number): number {
  if (size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / 32)), 128);
}

const hostKey = (protocol: string | undefined, port: number) => `${protocol ?? 'TCP'}/${port}`;

const key = (s: AllocatedService) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;
const wantsNodePorts = (s: AllocatedService) => s.spec?.type === 'NodePort' || s.spec?.type === 'LoadBalancer';
const wantsClusterIP = (s: AllocatedService) => s.spec?.type !== 'ExternalName' && s.spec?.clusterIP !== 'None';

/**
 * Allocates per Service. Values chosen but not yet stored (a create awaiting its write) are held
 * per Service name until the store has it, so concurrent creates never get the same value.
 */
export class ServiceAllocator {
  private readonly pending = new Map<string, { ips: number[]; ports: number[] }>();

  constructor(
    readonly network: ServiceNetwork,
    private readonly options: ServiceAllocatorOptions = {},
  ) {}

  /**
   * Warnings for a written Service: each nodePort another process of the host holds (one the user
   * chose; a chosen one is free when chosen), as the API server's warnings on create and update.
   */
  nodePortWarnings(svc: AllocatedService): string[] {
    const host = this.options.hostPorts;
    if (!host || !wantsNodePorts(svc)) return [];
    const held = host.heldByOthers();
    const out: string[] = [];
    (svc.spec?.ports ?? []).forEach((p, i) => {
      if (!p.nodePort || !held.has(hostKey(p.protocol, p.nodePort))) return;
      const who = host.holder(p.protocol ?? 'TCP', p.nodePort);
      out.push(
        `spec.ports[${i}].nodePort: port ${p.nodePort}/${p.protocol ?? 'TCP'} is held by another process on this host${who ? ` (${who})` : ''}: ` +
          `the service proxy cannot listen on it and its clients reach that process instead; choose another nodePort, or leave it out to have a free one chosen`,
      );
    });
    return out;
  }

  /** A free NodePort at random: the upper band first, then the lower (randomScanStrategyWithOffset); undefined when full. */
  private chooseNodePort(protocol: string | undefined, taken: (port: number) => boolean, held: () => ReadonlySet<string>): number | undefined {
    const { nodePortBase: lo, nodePortSize: n } = this.network;
    const offset = nodePortStaticBand(n);
    const random = this.options.random ?? Math.random;
    for (const [from, size] of [
      [lo + offset, n - offset],
      [lo, offset],
    ] as const) {
      const start = Math.floor(random() * size);
      for (let i = 0; i < size; i++) {
        const q = from + ((start + i) % size);
        if (!taken(q) && !held().has(hostKey(protocol, q))) return q;
      }
    }
    return undefined;
  }

  /** The range's first address, the `kubernetes` Service's (the API server's DefaultServiceIPFromCIDR). */
  kubernetesServiceIP(): string {
    return formatIpv4(this.network.clusterIPRange.base + 1);
  }

  /** The first address of the range the DNS service is given by convention (the tenth, as kubeadm's 10.96.0.10). */
  dnsServiceIP(): string {
    return formatIpv4(this.network.clusterIPRange.base + 10);
  }

  /**
   * Fills in spec.clusterIP(s) and the nodePorts of `svc` (old: its stored version on update, whose
   * values it keeps); stored: the Services in the store. Returns the API server's errors.
   */
  allocate(svc: AllocatedService, old: AllocatedService | undefined, stored: readonly AllocatedService[]): FieldError[] {
    const spec = (svc.spec ??= {});
    const others = stored.filter((s) => key(s) !== key(svc));
    for (const k of [...this.pending.keys()]) if (stored.some((s) => key(s) === k)) this.pending.delete(k);
    const usedIPs = new Set<number>();
    const usedPorts = new Set<number>();
    for (const s of others) {
      const ip = s.spec?.clusterIP ? parseIpv4(s.spec.clusterIP) : undefined;
      if (ip !== undefined) usedIPs.add(ip);
      for (const p of s.spec?.ports ?? []) if (p.nodePort) usedPorts.add(p.nodePort);
    }
    for (const [k, v] of this.pending) {
      if (k === key(svc)) continue;
      v.ips.forEach((i) => usedIPs.add(i));
      v.ports.forEach((p) => usedPorts.add(p));
    }
    const errs: FieldError[] = [];
    const mine = { ips: [] as number[], ports: [] as number[] };

    if (wantsClusterIP(svc)) {
      if (!spec.clusterIP && old?.spec?.clusterIP && old.spec.clusterIP !== 'None') spec.clusterIP = old.spec.clusterIP;
      const { base, size } = this.network.clusterIPRange;
      if (spec.clusterIP) {
        const ip = parseIpv4(spec.clusterIP);
        const unchanged = old?.spec?.clusterIP === spec.clusterIP;
        if (!unchanged) {
          const why =
            ip === undefined
              ? undefined
              : ip <= base || ip >= base + size - 1
                ? `failed to allocate IP ${spec.clusterIP}: the provided IP (${spec.clusterIP}) is not in the valid range. The range of valid IPs is ${this.network.clusterIPRange.cidr}`
                : usedIPs.has(ip)
                  ? `failed to allocate IP ${spec.clusterIP}: provided IP is already allocated`
                  : undefined;
          if (why) errs.push(invalid('spec.clusterIPs', goStrings([spec.clusterIP]), why));
        }
        if (ip !== undefined) mine.ips.push(ip);
      } else {
        // Skip the network address, .1 (the kubernetes Service's by convention) and the DNS address.
        let chosen: number | undefined;
        for (let i = 2; i < size - 1 && chosen === undefined; i++) if (i !== 10 && !usedIPs.has(base + i)) chosen = base + i;
        if (chosen === undefined) errs.push(invalid('spec.clusterIPs', goStrings([]), 'failed to allocate a serviceIP: range is full'));
        else {
          spec.clusterIP = formatIpv4(chosen);
          mine.ips.push(chosen);
        }
      }
      if (spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
    }

    if (wantsNodePorts(svc)) {
      const { nodePortBase: lo, nodePortSize: n } = this.network;
      let snapshot: ReadonlySet<string> | undefined;
      const held = () => (snapshot ??= this.options.hostPorts?.heldByOthers() ?? new Set<string>());
      (spec.ports ?? []).forEach((p, i) => {
        if (!p.nodePort) {
          const was = old?.spec?.ports?.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP') && o.nodePort);
          if (was?.nodePort && !mine.ports.includes(was.nodePort)) p.nodePort = was.nodePort;
        }
        if (p.nodePort) {
          const kept = old?.spec?.ports?.some((o) => o.nodePort === p.nodePort);
          // Ports of one Service that differ only in protocol may share a NodePort.
          const sharedHere = spec.ports!.slice(0, i).some((o) => o.nodePort === p.nodePort && o.protocol !== p.protocol);
          if (!kept && !sharedHere) {
            if (p.nodePort < lo || p.nodePort >= lo + n)
              errs.push(
                invalid(`spec.ports[${i}].nodePort`, p.nodePort, `provided port is not in the valid range. The range of valid ports is ${lo}-${lo + n - 1}`),
              );
            else if (usedPorts.has(p.nodePort)) errs.push(invalid(`spec.ports[${i}].nodePort`, p.nodePort, 'provided port is already allocated'));
          }
          mine.ports.push(p.nodePort);
          return;
        }
        const chosen = this.chooseNodePort(p.protocol, (q) => usedPorts.has(q) || mine.ports.includes(q), held);
        if (chosen === undefined) errs.push(invalid(`spec.ports[${i}].nodePort`, 0, 'range is full'));
        else {
          p.nodePort = chosen;
          mine.ports.push(chosen);
        }
      });
    }
    if (errs.length === 0) this.pending.set(key(svc), mine);
    return errs;
  }

  /** Forgets the values held for a Service that will not be stored (a dry run): they are free again. */
  release(svc: AllocatedService): void {
    this.pending.delete(key(svc));
  }
}
