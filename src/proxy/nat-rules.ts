// The kernel path of the service proxy, as kube-proxy's iptables mode writes it
// (pkg/proxy/iptables/proxier.go): one nat chain in which each ClusterIP port DNATs a new
// connection to one of its Ready endpoints, spread by `statistic --mode random` with the
// probabilities 1/n, 1/(n-1), ... 1 so that every endpoint gets an equal share.

import type { Endpoint } from './balancer.js';

export interface NatServicePort {
  clusterIP: string;
  port: number;
  protocol: 'TCP' | 'UDP';
  /** Ready endpoints only. */
  endpoints: readonly Endpoint[];
}

const isLoopback = (ip: string) => ip.startsWith('127.');

/**
 * Whether connections from the host to `p` can be DNATed in the kernel: a ClusterIP on the
 * loopback keeps its 127.x source, which may only go to endpoints on the loopback too (elsewhere
 * the kernel drops it as martian); such ports stay with the userspace listener.
 */
export function hostNatCapable(p: NatServicePort): boolean {
  return p.endpoints.length > 0 && (!isLoopback(p.clusterIP) || p.endpoints.every((e) => isLoopback(e.ip)));
}

/** The `iptables-restore --noflush` input that replaces `chain` (declared, hence flushed) with the DNAT rules of `ports`. */
export function natRestoreInput(chain: string, ports: readonly NatServicePort[]): string {
  const lines = ['*nat', `:${chain} - [0:0]`];
  for (const p of ports) {
    if (!hostNatCapable(p)) continue;
    const proto = p.protocol.toLowerCase();
    const match = `-A ${chain} -d ${p.clusterIP}/32 -p ${proto} -m ${proto} --dport ${p.port}`;
    p.endpoints.forEach((e, i) => {
      const left = p.endpoints.length - i;
      const spread = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : '';
      lines.push(`${match}${spread} -j DNAT --to-destination ${e.ip}:${e.port}`);
    });
  }
  lines.push('COMMIT', '');
  return lines.join('\n');
}
