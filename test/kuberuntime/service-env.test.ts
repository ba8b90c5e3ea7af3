// The kubelet's service-link variables (pkg/kubelet/kubelet_pods.go getServiceEnvVarMap,
// pkg/kubelet/envvars): for the Services of the pod's namespace with a ClusterIP, in the order and
// with the names upstream gives them; enableServiceLinks: false leaves them out (not the API server's
// own `kubernetes` Service, which every pod gets); headless and
// ExternalName Services have none; a container's own variable of the same name wins.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { makeEnvironmentVariables, serviceEnvVars, type ObjectLookup, type ServiceForEnv } from '../../src/kuberuntime/envvars.js';

const services: ServiceForEnv[] = [
  {
    metadata: { name: 'web-app', namespace: 'default' },
    spec: {
      clusterIP: '127.99.0.2',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP' },
        { name: 'dns-udp', port: 53, protocol: 'UDP' },
      ],
    },
  },
  { metadata: { name: 'headless', namespace: 'default' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } },
  { metadata: { name: 'ext', namespace: 'default' }, spec: {} },
  { metadata: { name: 'elsewhere', namespace: 'other' }, spec: { clusterIP: '127.99.0.9', ports: [{ port: 1 }] } },
];

const lookup: ObjectLookup = {
  configMap: () => undefined,
  secret: () => undefined,
  services: (ns) => services.filter((s) => s.metadata?.namespace === ns),
};

const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'x' }], ...spec },
});

test('the service-link variables of the namespace, as FromServices names them', () => {
  assert.deepEqual(Object.fromEntries(serviceEnvVars(pod(), lookup)), {
    WEB_APP_SERVICE_HOST: '127.99.0.2',
    WEB_APP_SERVICE_PORT: '80',
    WEB_APP_SERVICE_PORT_HTTP: '80',
    WEB_APP_SERVICE_PORT_DNS_UDP: '53',
    WEB_APP_PORT: 'tcp://127.99.0.2:80',
    WEB_APP_PORT_80_TCP: 'tcp://127.99.0.2:80',
    WEB_APP_PORT_80_TCP_PROTO: 'tcp',
    WEB_APP_PORT_80_TCP_PORT: '80',
    WEB_APP_PORT_80_TCP_ADDR: '127.99.0.2',
    WEB_APP_PORT_53_UDP: 'udp://127.99.0.2:53',
    WEB_APP_PORT_53_UDP_PROTO: 'udp',
    WEB_APP_PORT_53_UDP_PORT: '53',
    WEB_APP_PORT_53_UDP_ADDR: '127.99.0.2',
  });
  assert.equal(serviceEnvVars(pod({ enableServiceLinks: false }), lookup).size, 0);
  assert.equal(serviceEnvVars(pod(), { configMap: () => undefined, secret: () => undefined }).size, 0, 'a lookup without Services');
});

test("a container's own variable wins, and $(VAR) references may name service variables", () => {
  const p = pod();
  const container = {
    name: 'c',
    image: 'x',
    env: [
      { name: 'WEB_APP_SERVICE_PORT', value: '8080' },
      { name: 'URL', value: 'http://$(WEB_APP_SERVICE_HOST):$(WEB_APP_SERVICE_PORT_HTTP)/' },
    ],
  };
  const env = makeEnvironmentVariables({ pod: p, container, podIP: '127.0.0.1', hostIP: '127.0.0.1', lookup });
  assert.equal(env.get('WEB_APP_SERVICE_PORT'), '8080');
  assert.equal(env.get('URL'), 'http://127.99.0.2:80/');
  assert.equal(env.get('WEB_APP_SERVICE_HOST'), '127.99.0.2');
  assert.deepEqual([...env.keys()].slice(0, 2), ['WEB_APP_SERVICE_PORT', 'URL'], 'the container’s variables first');
});

test('the kubernetes Service of default is in every pod, enableServiceLinks or not, in any namespace', () => {
  const withApi: ServiceForEnv[] = [
    ...services,
    { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.0.0.1', ports: [{ name: 'https', port: 443 }] } },
  ];
  const l: ObjectLookup = { ...lookup, services: (ns) => withApi.filter((s) => s.metadata?.namespace === ns) };
  const apiOnly = serviceEnvVars(pod({ enableServiceLinks: false }), l);
  assert.equal(apiOnly.get('KUBERNETES_SERVICE_HOST'), '10.0.0.1');
  assert.equal(apiOnly.get('KUBERNETES_SERVICE_PORT'), '443');
  assert.equal(apiOnly.get('KUBERNETES_PORT_443_TCP'), 'tcp://10.0.0.1:443');
  assert.equal(apiOnly.has('WEB_APP_SERVICE_HOST'), false);
  const other = serviceEnvVars({ ...pod(), metadata: { name: 'p', namespace: 'other' } }, l);
  assert.equal(other.get('KUBERNETES_SERVICE_HOST'), '10.0.0.1');
  assert.equal(other.get('ELSEWHERE_SERVICE_HOST'), '127.99.0.9');
  assert.equal(other.has('WEB_APP_SERVICE_HOST'), false);
});
