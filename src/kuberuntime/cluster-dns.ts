// The cluster DNS a pod with dnsPolicy ClusterFirst (or ClusterFirstWithHostNet on the host's network)
// gets in its resolv.conf, as the kubelet's GetPodDNS builds it (pkg/kubelet/network/dns/dns.go):
// the cluster DNS servers, the search path `<ns>.svc.<domain> svc.<domain> <domain>` before the
// host's, and `options ndots:5` in place of the host's options.

import type { Pod } from '../api/types.js';
import type { DNSConfig } from '../runtime/cri.js';

/** Where the agent's cluster DNS answers pods (the kubelet's --cluster-dns and --cluster-domain). */
export interface ClusterDNSSettings {
  servers: string[];
  domain: string;
}

/** The resolver's limit on search domains the kubelet keeps (MaxDNSSearchPaths). */
const maxSearchPaths = 32;

/** The DNS of a ClusterFirst pod from the host's (parsed) resolv.conf, as GetPodDNS's podDNSCluster case. */
export function clusterFirstDNS(pod: Pod, host: DNSConfig, cluster: ClusterDNSSettings): DNSConfig {
  const ns = pod.metadata?.namespace || 'default';
  const searches = [`${ns}.svc.${cluster.domain}`, `svc.${cluster.domain}`, cluster.domain, ...host.searches];
  return {
    servers: [...cluster.servers],
    searches: [...new Set(searches)].slice(0, maxSearchPaths),
    options: ['ndots:5'],
  };
}
