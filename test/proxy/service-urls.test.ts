// Where a Service is reachable, told once it has Ready endpoints: a LoadBalancer's ingress, its
// NodePort on the NodePort addresses and its ClusterIP as URLs (https for a port named https, udp://
// for UDP); nothing while no endpoint is Ready, nothing again while it stays reachable, again after
// it had none; none for a headless Service.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { serviceURLs, ServiceURLWatch } from '../../src/proxy/service-urls.js';
import { waitFor } from '../fixtures/wait.js';

test('URLs of a Service once it has Ready endpoints, told again only after it had none', async (t) => {
  const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
  const told: string[][] = [];
  const watch = new ServiceURLWatch(objects, ['127.0.0.1', '192.0.2.2'], (ns, name, urls) => told.push([`${ns}/${name}`, ...urls]));
  watch.start();
  t.after(() => watch.stop());
  const svc = (await objects.create('Service', {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      type: 'LoadBalancer',
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 8080, targetPort: 80 },
        { name: 'https', port: 8443, targetPort: 443 },
      ],
    },
  })) as { spec: { clusterIP: string; ports: Array<{ nodePort: number }> } };
  const endpoints = (ready: boolean) => ({
    metadata: { name: 'web', namespace: 'shop' },
    subsets: [{ [ready ? 'addresses' : 'notReadyAddresses']: [{ ip: '10.85.0.4' }], ports: [{ name: 'http', port: 80 }] }],
  });
  await objects.create('Endpoints', endpoints(false));
  assert.deepEqual(told, []);
  await objects.update('Endpoints', endpoints(true));
  await waitFor('the URLs told', () => told.length === 1, 5000);
  const [np1, np2] = svc.spec.ports.map((p) => p.nodePort);
  const ip = svc.spec.clusterIP;
  assert.deepEqual(told[0], [
    'shop/web',
    'http://127.0.0.1:8080',
    `http://127.0.0.1:${np1}`,
    `http://192.0.2.2:${np1}`,
    `http://${ip}:8080`,
    'https://127.0.0.1:8443',
    `https://127.0.0.1:${np2}`,
    `https://192.0.2.2:${np2}`,
    `https://${ip}:8443`,
  ]);
  await objects.update('Endpoints', { ...endpoints(true), metadata: { ...endpoints(true).metadata, labels: { x: 'y' } } });
  await objects.update('Endpoints', endpoints(false));
  assert.equal(told.length, 1);
  await objects.update('Endpoints', endpoints(true));
  await waitFor('the URLs told again', () => told.length === 2, 5000);

  assert.deepEqual(serviceURLs({ spec: { clusterIP: 'None', ports: [{ port: 80 }] } }, ['127.0.0.1']), []);
  assert.deepEqual(serviceURLs({ spec: { clusterIP: '127.99.0.5', ports: [{ port: 53, protocol: 'UDP' }] } }, ['127.0.0.1']), ['udp://127.99.0.5:53']);
});
