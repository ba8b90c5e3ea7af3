// The resolv.conf of a pod as the kubelet's GetPodDNS writes it once the cluster DNS is served:
// ClusterFirst gets the cluster DNS, the `<ns>.svc.<domain> svc.<domain> <domain>` search path
// before the host's and ndots:5; ClusterFirst on the host's network and Default keep the host's;
// ClusterFirstWithHostNet gets the cluster DNS; spec.dnsConfig is appended; without a cluster DNS
// ClusterFirst falls back to the host's (MissingClusterDNS).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { podDNSConfig } from '../../src/kuberuntime/linux-config.js';

const host = 'nameserver 192.0.2.53\nsearch corp.example lab.example\noptions rotate timeout:2\n';
const cluster = { servers: ['10.96.0.10'], domain: 'cluster.local' };
const pod = (spec: Partial<NonNullable<Pod['spec']>>, namespace = 'shop'): Pod => ({ metadata: { name: 'p', namespace }, spec: { containers: [], ...spec } });

test('ClusterFirst: the cluster DNS, the kubelet search path before the host search, ndots:5', () => {
  assert.deepEqual(podDNSConfig(pod({ dnsPolicy: 'ClusterFirst' }), host, cluster), {
    config: {
      servers: ['10.96.0.10'],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
      options: ['ndots:5'],
    },
    missingClusterDNS: false,
  });
});

test('host network: ClusterFirst keeps the host resolvers, ClusterFirstWithHostNet gets the cluster DNS', () => {
  assert.deepEqual(podDNSConfig(pod({ hostNetwork: true }), host, cluster).config.servers, ['192.0.2.53']);
  assert.deepEqual(podDNSConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), host, cluster).config.servers, ['10.96.0.10']);
  assert.deepEqual(podDNSConfig(pod({ dnsPolicy: 'Default' }), host, cluster).config.servers, ['192.0.2.53']);
});

test('spec.dnsConfig is appended to the cluster DNS; without one, ClusterFirst falls back with MissingClusterDNS', () => {
  const withExtra = pod({
    dnsConfig: { nameservers: ['192.0.2.99'], searches: ['extra.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
  });
  assert.deepEqual(podDNSConfig(withExtra, host, cluster).config, {
    servers: ['10.96.0.10', '192.0.2.99'],
    searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example', 'extra.example'],
    options: ['ndots:2', 'edns0'],
  });
  const fallback = podDNSConfig(pod({}, 'default'), host);
  assert.equal(fallback.missingClusterDNS, true);
  assert.deepEqual(fallback.config.servers, ['192.0.2.53']);
});
