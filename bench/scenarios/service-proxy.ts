// service-proxy: the userspace service proxy against a direct connection, on one host. An echo
// server is the Service's one Ready endpoint; request/response round trips of SIZE KB on one
// connection give latency p50/p99 through <clusterIP>:<port> and direct (the floor), and a one-way
// stream of 64 MB gives the transfer time (throughput) of each path.

import { connect, createServer, type Socket } from 'node:net';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { ServiceProxy } from '../../src/proxy/service-proxy.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { distribution, preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Scenario } from './types.js';

const streamBytes = 64 * 1024 * 1024;

function dial(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Round-trip times (ms) of `rounds` requests of `size` bytes echoed back in full. */
async function roundTrips(host: string, port: number, size: number, rounds: number): Promise<number[]> {
  const s = await dial(host, port);
  const payload = Buffer.alloc(size, 7);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = preciseNow();
    await new Promise<void>((resolve) => {
      let got = 0;
      const on = (b: Buffer) => {
        got += b.length;
        if (got >= size) {
          s.off('data', on);
          resolve();
        }
      };
      s.on('data', on);
      s.write(payload);
    });
    times.push(preciseNow() - start);
  }
  s.destroy();
  return times;
}

/** Time (ms) to send streamBytes to the sink and have it count them all. */
async function transfer(host: string, port: number, received: () => number, reset: () => void): Promise<number> {
  reset();
  const s = await dial(host, port);
  const chunk = Buffer.alloc(256 * 1024, 1);
  const start = preciseNow();
  for (let sent = 0; sent < streamBytes; sent += chunk.length) if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  while (received() < streamBytes) await new Promise((r) => setImmediate(r));
  const ms = preciseNow() - start;
  s.destroy();
  return ms;
}

export const serviceProxy: Scenario = {
  name: 'service-proxy',
  defaultSizes: [1, 1024],
  sizeIsPods: false,
  async run(sizeKb, ctx): Promise<ScenarioResult> {
    let sunk = 0;
    const echo = createServer({ noDelay: true }, (c) => c.pipe(c));
    const sink = createServer((c) => c.on('data', (b: Buffer) => (sunk += b.length)));
    for (const srv of [echo, sink]) await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    ctx.defer(() => echo.close());
    ctx.defer(() => sink.close());
    const port = (srv: typeof echo) => (srv.address() as { port: number }).port;

    const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
    const proxy = new ServiceProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error') });
    proxy.start();
    ctx.defer(() => proxy.stop());
    const svc = (await objects.create('Service', {
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        ports: [
          { name: 'echo', port: 18900 },
          { name: 'sink', port: 18901 },
        ],
      },
    })) as { spec: { clusterIP: string } };
    await objects.create('Endpoints', {
      metadata: { name: 'bench', namespace: 'default' },
      subsets: [
        {
          addresses: [{ ip: '127.0.0.1' }],
          ports: [
            { name: 'echo', port: port(echo) },
            { name: 'sink', port: port(sink) },
          ],
        },
      ],
    });
    const ip = svc.spec.clusterIP;
    while (proxy.listening().length < 2) await new Promise((r) => setImmediate(r));
    const rounds = sizeKb >= 1024 ? 200 : 2000;
    ctx.log(`service-proxy ${sizeKb} KB: ${rounds} round trips each way, then ${streamBytes >> 20} MB streamed`);
    await roundTrips(ip, 18900, sizeKb * 1024, 50);
    const viaProxy = distribution(await roundTrips(ip, 18900, sizeKb * 1024, rounds));
    const direct = distribution(await roundTrips('127.0.0.1', port(echo), sizeKb * 1024, rounds));
    const reset = () => (sunk = 0);
    const streamProxy = await transfer(ip, 18901, () => sunk, reset);
    const streamDirect = await transfer('127.0.0.1', port(sink), () => sunk, reset);
    return {
      scenario: 'service-proxy',
      size: sizeKb,
      figures: [
        figure('rtt_p50_ms', `${sizeKb} KB round trip p50 (ClusterIP vs direct)`, 'ms', viaProxy.p50, direct.p50),
        figure('rtt_p99_ms', `${sizeKb} KB round trip p99 (ClusterIP vs direct)`, 'ms', viaProxy.p99, direct.p99),
        figure('rtt_p50_added_ms', 'p50 added by the proxy', 'ms', viaProxy.p50 - direct.p50, null, { text: '≤ 0.2 ms', on: 'agent', op: '<=', value: 0.2 }),
        figure('stream_64mb_ms', '64 MB streamed (ClusterIP vs direct)', 'ms', streamProxy, streamDirect, {
          text: '≤ 1.25× floor (≥ 0.8× throughput)',
          on: 'ratio',
          op: '<=',
          value: 1.25,
        }),
      ],
      notes: [
        `throughput ${((streamBytes / 1048576 / streamProxy) * 1000).toFixed(0)} MB/s through the ClusterIP, ${((streamBytes / 1048576 / streamDirect) * 1000).toFixed(0)} MB/s direct`,
      ],
    };
  },
};
