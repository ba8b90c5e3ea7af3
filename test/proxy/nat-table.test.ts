// The service proxy's iptables mode on the real kernel (as root, where iptables is; skipped
// elsewhere): connections from the host to a ClusterIP port reach the Ready endpoints directly (the
// endpoint sees the client's own port, not the proxy's), spread over them and follow readiness;
// stopping removes the chains (the agent's own chains: nat-pods.test.ts). The rules' text and the
// flag's check run everywhere.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, parseIpv4Range, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { natRestoreInput } from '../../src/proxy/nat-rules.js';
import { ServiceProxy } from '../../src/proxy/service-proxy.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

function iptablesWorks(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('iptables', ['-w', '-t', 'nat', '-S', 'OUTPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('the DNAT rules spread a port over its endpoints, mark what pods send for masquerade, and keep loopback endpoints to the host', () => {
  const text = natRestoreInput('CH', [
    {
      clusterIP: '127.99.0.5',
      port: 80,
      protocol: 'TCP',
      endpoints: [
        { ip: '127.0.0.1', port: 8001 },
        { ip: '127.0.0.1', port: 8002 },
        { ip: '127.0.0.1', port: 8003 },
      ],
    },
    { clusterIP: '127.99.0.6', port: 80, protocol: 'TCP', endpoints: [{ ip: '10.88.0.4', port: 80 }] },
    { clusterIP: '10.96.0.7', port: 443, protocol: 'TCP', endpoints: [{ ip: '10.88.0.4', port: 8443 }] },
    { clusterIP: '10.96.0.8', port: 443, protocol: 'TCP', endpoints: [] },
    { clusterIP: '10.96.0.9', port: 53, protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: 5353 }] },
  ]);
  assert.deepEqual(text.split('\n'), [
    '*nat',
    ':CH - [0:0]',
    ':CH-POST - [0:0]',
    '-A CH -d 127.99.0.5/32 -p tcp -m tcp --dport 80 -m statistic --mode random --probability 0.3333333333 -j DNAT --to-destination 127.0.0.1:8001',
    '-A CH -d 127.99.0.5/32 -p tcp -m tcp --dport 80 -m statistic --mode random --probability 0.5000000000 -j DNAT --to-destination 127.0.0.1:8002',
    '-A CH -d 127.99.0.5/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 127.0.0.1:8003',
    '-A CH -d 10.96.0.7/32 -p tcp -m tcp --dport 443 ! -s 127.0.0.0/8 -j MARK --set-xmark 0x4000/0x4000',
    '-A CH -d 10.96.0.7/32 -p tcp -m tcp --dport 443 -j DNAT --to-destination 10.88.0.4:8443',
    '-A CH -d 10.96.0.9/32 -p tcp -m tcp --dport 53 -m addrtype --src-type LOCAL -j DNAT --to-destination 127.0.0.1:5353',
    '-A CH-POST -m mark --mark 0x4000/0x4000 -j MASQUERADE',
    'COMMIT',
    '',
  ]);
});

/** An endpoint answering each connection with its name and the port the connection came from. */
async function namedEndpoint(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((c) => c.end(`${name} ${c.remotePort}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** One connection: the endpoint's answer, and whether it saw the client's own port (no proxy between). */
function ask(host: string, port: number): Promise<{ name: string; direct: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port }, () => {
      let text = '';
      s.setEncoding('utf8');
      s.on('data', (t: string) => (text += t));
      s.on('end', () => {
        const [name, seen] = text.split(' ');
        resolve({ name: name!, direct: Number(seen) === s.localPort });
      });
    });
    s.once('error', reject);
  });
}

test(
  'iptables mode: host connections to a ClusterIP are DNATed to Ready endpoints; stop removes the chain',
  { skip: !iptablesWorks() && 'needs root and iptables' },
  async (t) => {
    const a = await namedEndpoint('a');
    const b = await namedEndpoint('b');
    t.after(() => a.server.close());
    t.after(() => b.server.close());
    // A range and a chain of this test's own: other agents on the host use the default ones.
    const network = { ...defaultServiceNetwork(), clusterIPRange: parseIpv4Range(`127.231.${process.pid % 250}.0/24`) };
    const chain = `PODVISOR-TEST-${process.pid}`;
    const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(network))] });
    const proxy = new ServiceProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error'), mode: 'iptables', natChain: chain });
    proxy.start();
    t.after(() => proxy.stop());
    const svc = (await objects.create('Service', { metadata: { name: 'nat', namespace: 'default' }, spec: { ports: [{ port: 18460 }] } })) as {
      spec: { clusterIP: string };
    };
    const endpoints = (ready: Array<{ port: number }>, notReady: Array<{ port: number }>) =>
      [...ready.map((e) => ({ ready: true, e })), ...notReady.map((e) => ({ ready: false, e }))].map(({ ready, e }) => ({
        [ready ? 'addresses' : 'notReadyAddresses']: [{ ip: '127.0.0.1' }],
        ports: [{ port: e.port }],
      }));
    await objects.create('Endpoints', { metadata: { name: 'nat', namespace: 'default' }, subsets: endpoints([a, b], []) });
    await proxy.natSettled();
    assert.ok(proxy.natActive(), 'the iptables mode is on');

    const seen = new Set<string>();
    await waitFor('both endpoints reached through the ClusterIP', async () => {
      const r = await ask(svc.spec.clusterIP, 18460);
      assert.ok(r.direct, 'the endpoint saw the client itself: the kernel, not the proxy, forwarded it');
      seen.add(r.name);
      return seen.size === 2;
    });

    const old = objects.get('Endpoints', 'default', 'nat')!;
    await objects.update('Endpoints', { metadata: old.metadata, subsets: endpoints([a], [b]) });
    await waitFor('b out of the rules', async () => {
      await proxy.natSettled();
      return !execFileSync('iptables', ['-w', '-t', 'nat', '-S', chain], { encoding: 'utf8' }).includes(`:${b.port}`);
    });
    for (let i = 0; i < 10; i++) assert.deepEqual(await ask(svc.spec.clusterIP, 18460), { name: 'a', direct: true }, 'only the Ready endpoint');

    proxy.stop();
    const rules = execFileSync('iptables', ['-w', '-t', 'nat', '-S'], { encoding: 'utf8' });
    assert.ok(!rules.includes(chain), `the chain and its jump are gone:\n${rules}`);
  },
);

test('podvisor agent --proxy-mode takes userspace or iptables; another value is a usage error', async () => {
  const dir = await tempDir();
  try {
    const r = await runCli(['agent', '--root-dir', join(dir.path, 'root'), '--proxy-mode=kernel']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /invalid argument "kernel" for "--proxy-mode" flag: must be userspace or iptables/);
  } finally {
    await dir.remove();
  }
});
