// The service proxy on a real `podvisor agent`: HTTP requests (a new connection each) to a Service's
// ClusterIP spread over its Ready pods, never reach a pod that is not Ready, follow a readiness change
// within the probe period and a second; the NodePort and the LoadBalancer port answer on 127.0.0.1.
// In process: UDP datagrams through a ClusterIP reach an echo endpoint and come back.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { RoundRobin } from '../../src/proxy/balancer.js';
import { ServiceProxy } from '../../src/proxy/service-proxy.js';
import { FakeClock, RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { freePortIn, freePorts } from '../fixtures/ports.js';
import { call } from '../agent/helpers.js';
import { webPod } from './service-pods.js';

let dir: { path: string; remove(): Promise<void> };
let sock: string;
let agent: CliProcess | undefined;

before(async () => {
  dir = await tempDir();
  const root = join(dir.path, 'root');
  sock = join(root, 'podvisor.sock');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
});

after(async () => {
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
  await dir.remove();
});

/** One request on a connection of its own: the body, or the error's code. */
function fetchOnce(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = get({ host, port, path: '/', agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`error:${err.code ?? err.message}`));
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

async function answers(host: string, port: number, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await fetchOnce(host, port));
  return out;
}

test('connections through the ClusterIP spread over Ready pods and follow readiness; NodePort and LoadBalancer answer', async () => {
  const flags = dir.path;
  // Free ports only: another agent on the host may hold the first NodePort of the range, or any fixed port.
  const [svcPort, portA, portB] = await freePorts(3);
  const nodePort = await freePortIn(30000, 32767);
  for (const [name, port] of [
    ['px-a', portA!],
    ['px-b', portB!],
  ] as const) {
    writeFileSync(join(flags, `${name}.ready`), '');
    const r = await call(sock, 'POST', '/api/v1/namespaces/default/pods', webPod(name, port, flags, { app: 'px' }));
    assert.equal(r.status, 201, r.body);
  }
  const r = await call(sock, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'px' },
    spec: { type: 'LoadBalancer', selector: { app: 'px' }, ports: [{ port: svcPort, targetPort: 'http', nodePort }] },
  });
  assert.equal(r.status, 201, r.body);
  const { clusterIP } = r.json().spec as { clusterIP: string };
  assert.deepEqual(r.json().status.loadBalancer.ingress, [{ ip: '127.0.0.1' }]);

  await waitFor(
    'both pods answering through the ClusterIP',
    async () => (await answers(clusterIP, svcPort!, 4)).sort().join() === 'px-a,px-a,px-b,px-b',
    60_000,
  );
  const spread = await answers(clusterIP, svcPort!, 10);
  assert.deepEqual([spread.filter((b) => b === 'px-a').length, spread.filter((b) => b === 'px-b').length], [5, 5], `round robin: ${spread.join(' ')}`);
  assert.deepEqual([...new Set(await answers('127.0.0.1', nodePort, 4))].sort(), ['px-a', 'px-b'], 'the NodePort on 127.0.0.1');
  assert.deepEqual([...new Set(await answers('127.0.0.1', svcPort!, 4))].sort(), ['px-a', 'px-b'], 'the LoadBalancer port on 127.0.0.1');

  // px-b turns unready: within its probe period (1 s) and a second, no new connection reaches it.
  rmSync(join(flags, 'px-b.ready'));
  const t0 = Date.now();
  await waitFor('px-b out of the rotation', async () => (await answers(clusterIP, svcPort!, 2)).every((b) => b === 'px-a'), 2000 + 1000);
  const took = Date.now() - t0;
  assert.ok(took <= 3000, `out of rotation after ${took} ms`);
  assert.deepEqual(new Set(await answers(clusterIP, svcPort!, 6)), new Set(['px-a']));

  // No Ready pod: the connection is closed rather than sent to a pod that is not Ready.
  rmSync(join(flags, 'px-a.ready'));
  await waitFor('no endpoint left', async () => (await fetchOnce(clusterIP, svcPort!)).startsWith('error:'), 5000);
  writeFileSync(join(flags, 'px-b.ready'), '');
  await waitFor('px-b back', async () => (await answers(clusterIP, svcPort!, 2)).every((b) => b === 'px-b'), 5000);
  for (const name of ['px-a', 'px-b']) await call(sock, 'DELETE', `/api/v1/namespaces/default/pods/${name}`);
});

test('UDP through a ClusterIP reaches a Ready endpoint and the reply comes back', async (t) => {
  const echo = createSocket('udp4');
  echo.on('message', (m, from) => echo.send(Buffer.concat([Buffer.from('echo:'), m]), from.port, from.address));
  await new Promise<void>((resolve) => echo.bind(0, '127.0.0.1', resolve));
  t.after(() => echo.close());
  const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
  const proxy = new ServiceProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error') });
  proxy.start();
  t.after(() => proxy.stop());
  const svc = (await objects.create('Service', {
    metadata: { name: 'dns', namespace: 'default' },
    spec: { ports: [{ name: 'dns', port: 18453, protocol: 'UDP' }] },
  })) as { spec: { clusterIP: string } };
  await objects.create('Endpoints', {
    metadata: { name: 'dns', namespace: 'default' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'dns', port: echo.address().port, protocol: 'UDP' }] }],
  });
  await waitFor('the proxy listening on the ClusterIP', () => proxy.listening().includes(`UDP ${svc.spec.clusterIP}:18453`));
  const client = createSocket('udp4');
  t.after(() => client.close());
  const replies: string[] = [];
  client.on('message', (m) => replies.push(m.toString()));
  await waitFor('an echo through the ClusterIP', () => {
    client.send('ping', 18453, svc.spec.clusterIP);
    return replies.includes('echo:ping');
  });
});

test('round robin, and ClientIP affinity until its timeout', async () => {
  const clock = new FakeClock();
  const rr = new RoundRobin(clock);
  const a = { ip: '127.0.0.1', port: 1 };
  const b = { ip: '127.0.0.1', port: 2 };
  rr.setEndpoints([a, b]);
  assert.deepEqual([rr.choose('c1'), rr.choose('c1'), rr.choose('c1')], [a, b, a]);
  assert.equal(rr.choose('c1', [b]), a, 'an endpoint already tried is skipped');
  rr.setAffinity(10);
  const first = rr.choose('c2')!;
  assert.equal(rr.choose('c2'), first);
  await clock.advance(11_000);
  assert.notEqual(rr.choose('c2'), first, 'after the timeout the client chooses again');
  rr.setEndpoints([a]);
  assert.equal(rr.choose('c2'), a, 'affinity to a gone endpoint is dropped');
  rr.setEndpoints([]);
  assert.equal(rr.choose('c3'), undefined);
});
