// The cluster DNS server with Node's own resolver as the client: a Service's name to its ClusterIP,
// a headless Service's name to its Ready endpoints, a StatefulSet pod's name (an endpoint hostname),
// SRV for a named port, CNAME for ExternalName, NXDOMAIN for an unknown name in the cluster domain,
// a record that follows an Endpoints change, and other names forwarded to the host's resolver.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { test } from 'node:test';
import dnsPacket from 'dns-packet';
import { ObjectStore } from '../../src/agent/object-store.js';
import { ClusterDNS, resolvConfNameservers } from '../../src/dns/server.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';

test('cluster names from Services and Endpoints, other names forwarded', async (t) => {
  // A stand-in for the host's resolver: answers every A question with 192.0.2.7.
  const upstream = createSocket('udp4');
  upstream.on('message', (m, from) => {
    const q = dnsPacket.decode(m);
    const answers = (q.questions ?? []).map((x) => ({ type: 'A' as const, name: x.name, ttl: 60, data: '192.0.2.7' }));
    upstream.send(
      dnsPacket.encode({ type: 'response', id: q.id ?? 0, flags: dnsPacket.RECURSION_AVAILABLE, questions: q.questions ?? [], answers }),
      from.port,
      from.address,
    );
  });
  await new Promise<void>((resolve) => upstream.bind(0, '127.0.0.1', resolve));
  t.after(() => upstream.close());

  const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
  const web = (await objects.create('Service', {
    metadata: { name: 'web', namespace: 'shop' },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] },
  })) as { spec: { clusterIP: string } };
  await objects.create('Service', {
    metadata: { name: 'db', namespace: 'shop' },
    spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] },
  });
  await objects.create('Service', { metadata: { name: 'ext', namespace: 'shop' }, spec: { type: 'ExternalName', externalName: 'example.org' } });
  await objects.create('Endpoints', {
    metadata: { name: 'db', namespace: 'shop' },
    subsets: [
      {
        addresses: [
          { ip: '10.85.0.4', hostname: 'db-0' },
          { ip: '10.85.0.5', hostname: 'db-1' },
        ],
        notReadyAddresses: [{ ip: '10.85.0.6', hostname: 'db-2' }],
        ports: [{ name: 'pg', port: 5432 }],
      },
    ],
  });

  const dns = new ClusterDNS({
    objects,
    logger: streamLogger(process.stderr, 'error'),
    clock: new RealClock(),
    upstreams: [`127.0.0.1:${upstream.address().port}`],
  });
  const at = await dns.listen('127.0.0.1', 0);
  t.after(() => dns.close());
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${at.port}`]);

  assert.deepEqual(await resolver.resolve4('web.shop.svc.cluster.local'), [web.spec.clusterIP]);
  assert.deepEqual((await resolver.resolve4('db.shop.svc.cluster.local')).sort(), ['10.85.0.4', '10.85.0.5'], 'Ready endpoints only');
  assert.deepEqual(await resolver.resolve4('db-1.db.shop.svc.cluster.local'), ['10.85.0.5']);
  assert.deepEqual(await resolver.resolveSrv('_http._tcp.web.shop.svc.cluster.local'), [
    { name: 'web.shop.svc.cluster.local', port: 80, priority: 0, weight: 100 },
  ]);
  assert.deepEqual((await resolver.resolveSrv('_pg._tcp.db.shop.svc.cluster.local')).map((r) => r.name).sort(), [
    'db-0.db.shop.svc.cluster.local',
    'db-1.db.shop.svc.cluster.local',
  ]);
  assert.deepEqual(await resolver.resolveCname('ext.shop.svc.cluster.local'), ['example.org']);
  await assert.rejects(resolver.resolve4('nope.shop.svc.cluster.local'), { code: 'ENOTFOUND' });
  await assert.rejects(resolver.resolve4('db-2.db.shop.svc.cluster.local'), { code: 'ENOTFOUND' }, 'a not-Ready pod has no name');
  assert.deepEqual(await resolver.resolve4('example.com'), ['192.0.2.7'], 'forwarded');

  const ep = objects.get('Endpoints', 'shop', 'db')!;
  await objects.update('Endpoints', { ...ep, subsets: [{ addresses: [{ ip: '10.85.0.6', hostname: 'db-2' }], ports: [{ name: 'pg', port: 5432 }] }] });
  assert.deepEqual(await resolver.resolve4('db.shop.svc.cluster.local'), ['10.85.0.6'], 'follows the Endpoints');
});

test('the nameservers of a resolv.conf', () => {
  assert.deepEqual(resolvConfNameservers('# x\nsearch a\nnameserver 127.0.0.53\nnameserver  10.0.0.1 \noptions edns0\n'), ['127.0.0.53', '10.0.0.1']);
});
