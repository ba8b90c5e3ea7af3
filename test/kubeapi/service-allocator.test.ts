// The NodePort allocator on one host: a port it chooses is random, from the range's upper band first
// (as the apiserver's), and never one another process of the host holds for the Service's protocol
// where NodePorts listen (a real process holding a real port here); a nodePort the user names that
// another process holds is accepted, with a warning naming the port, the holder and the fix.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { nodePortStaticBand, ServiceAllocator, defaultServiceNetwork, type AllocatedService } from '../../src/kubeapi/service-allocator.js';
import { portsHeldAt } from '../../src/util/host-sockets.js';

/** A process of its own holding a TCP port the kernel chose (listening) and UDP on the same number when it can; resolves to the port. */
async function holder(): Promise<{ child: ChildProcess; port: number; udp: boolean }> {
  const script = `
    const net = require('net'), dgram = require('dgram');
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      const u = dgram.createSocket('udp4');
      u.once('error', () => console.log(port + ' tcp'));
      u.bind(port, '127.0.0.1', () => console.log(port + ' udp'));
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', () => reject(new Error(`the holder exited: ${out}`)));
  });
  const [port, proto] = line.split(' ');
  return { child, port: Number(port), udp: proto === 'udp' };
}

const nodePortService = (name: string, protocol: string, nodePort?: number): AllocatedService => ({
  metadata: { namespace: 'default', name },
  spec: { type: 'NodePort', ports: [{ port: 80, protocol, ...(nodePort ? { nodePort } : {}) }] },
});

test("the apiserver's bands: the lower min(max(16, size/32), 128) ports are handed out last", () => {
  assert.equal(nodePortStaticBand(2768), 86);
  assert.equal(nodePortStaticBand(16), 0);
  assert.equal(nodePortStaticBand(100), 16);
  assert.equal(nodePortStaticBand(10000), 128);
  // Random from the upper band: 30086..32767 for the default range.
  const draws = [0, 0.5, 0.999999];
  const alloc = new ServiceAllocator(defaultServiceNetwork(), { random: () => draws.shift() ?? 0 });
  const chosen = ['a', 'b', 'c'].map((n) => {
    const svc = nodePortService(n, 'TCP');
    assert.deepEqual(alloc.allocate(svc, undefined, []), []);
    return svc.spec!.ports![0]!.nodePort!;
  });
  assert.deepEqual(chosen, [30086, 30086 + Math.floor(0.5 * 2682), 32767]);
});

test('a NodePort another process holds is never chosen (for the protocol it holds); named by the user, it is a warning with the holder', async (t) => {
  const h = await holder();
  t.after(() => h.child.kill('SIGKILL'));
  // A range of three ports starting at the held one, the draw always its first port.
  const network = { ...defaultServiceNetwork(), nodePortBase: h.port, nodePortSize: 3 };
  const alloc = new ServiceAllocator(network, { hostPorts: portsHeldAt(['127.0.0.1']), random: () => 0 });

  const tcp = nodePortService('tcp', 'TCP');
  assert.deepEqual(alloc.allocate(tcp, undefined, []), []);
  const got = tcp.spec!.ports![0]!.nodePort!;
  assert.notEqual(got, h.port, 'the held TCP port is skipped');
  assert.ok(got > h.port && got < h.port + 3);
  assert.deepEqual(alloc.nodePortWarnings(tcp), [], 'a chosen port is free');

  if (h.udp) {
    const udp = nodePortService('udp', 'UDP');
    assert.deepEqual(alloc.allocate(udp, undefined, []), []);
    assert.notEqual(udp.spec!.ports![0]!.nodePort, h.port, 'the held UDP port is skipped');
  }

  // Named by the user: stored as asked (the API server knows nothing of the host), with a warning.
  const named = nodePortService('named', 'TCP', h.port);
  assert.deepEqual(alloc.allocate(named, undefined, []), []);
  const [warning] = alloc.nodePortWarnings(named);
  assert.match(
    warning!,
    new RegExp(`^spec\\.ports\\[0\\]\\.nodePort: port ${h.port}/TCP is held by another process on this host \\(pid ${h.child.pid} \\(".*"\\)\\): `),
  );
  assert.match(warning!, /choose another nodePort, or leave it out to have a free one chosen$/);

  // A port this process holds itself (as the agent's own proxy holds its NodePorts) is not another's.
  const mine = createServer();
  await new Promise<void>((resolve) => mine.listen(0, '127.0.0.1', resolve));
  t.after(() => mine.close());
  const held = portsHeldAt(['127.0.0.1']).heldByOthers();
  assert.ok(held.has(`TCP/${h.port}`));
  assert.ok(!held.has(`TCP/${(mine.address() as AddressInfo).port}`));
});
