// The kernel path of the service proxy, as kube-proxy's iptables mode writes it
// (pkg/proxy/iptables/proxier.go): a nat chain in which each ClusterIP port DNATs a new
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

/** The packet mark of connections to masquerade on their way out (kube-proxy's KUBE-MARK-MASQ, 0x4000). */
export const masqueradeMark = '0x4000/0x4000';

/**
 * Whether connections to `p` can be DNATed in the kernel: a ClusterIP on the loopback keeps its
 * 127.x source, which may only go to endpoints on the loopback too (elsewhere the kernel drops it
 * as martian); such ports stay with the userspace listener.
 */
export function natCapable(p: NatServicePort): boolean {
  return p.endpoints.length > 0 && (!isLoopback(p.clusterIP) || p.endpoints.every((e) => isLoopback(e.ip)));
}

/** The `:CHAIN` declarations of the nat table the rules need (declared chains are flushed by a restore). */
export function natChains(chain: string): string[] {
  return [chain, `${chain}-POST`];
}

/**
 * The `iptables-restore --noflush` input that replaces `chain` with the DNAT rules of `ports`, and
 * `chain`-POST with the masquerade of what they marked. The chain is jumped to from OUTPUT (the
 * host's connections) and PREROUTING (pods' connections, e.g. from the CNI bridge). A ClusterIP off
 * the loopback: connections not from the loopback are marked, to leave masqueraded (the endpoint
 * answers the host, which un-NATs the reply; so a pod reaching itself through its Service works);
 * if an endpoint is on the loopback only the host's own connections are DNATed (a pod's packet to
 * 127.0.0.1 would be dropped as martian) and pods keep the userspace listener.
 */
export function natRestoreInput(chain: string, ports: readonly NatServicePort[]): string {
  const lines = ['*nat', ...natChains(chain).map((c) => `:${c} - [0:0]`)];
  for (const p of ports) {
    if (!natCapable(p)) continue;
    const proto = p.protocol.toLowerCase();
    const loopbackIP = isLoopback(p.clusterIP);
    const hostOnly = !loopbackIP && p.endpoints.some((e) => isLoopback(e.ip));
    const match = `-A ${chain} -d ${p.clusterIP}/32 -p ${proto} -m ${proto} --dport ${p.port}${hostOnly ? ' -m addrtype --src-type LOCAL' : ''}`;
    if (!loopbackIP && !hostOnly) lines.push(`${match} ! -s 127.0.0.0/8 -j MARK --set-xmark ${masqueradeMark}`);
    p.endpoints.forEach((e, i) => {
      const left = p.endpoints.length - i;
      const spread = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : '';
      lines.push(`${match}${spread} -j DNAT --to-destination ${e.ip}:${e.port}`);
    });
  }
  lines.push(`-A ${chain}-POST -m mark --mark ${masqueradeMark} -j MASQUERADE`, 'COMMIT', '');
  return lines.join('\n');
}
