// cluster-dns: queries per second the cluster DNS answers for a Service name, against the floor of a
// bare UDP echo server (the same packets, no lookup, no encoding) on the same loopback. SIZE clients
// each keep one query in flight (a new one as soon as its answer arrives) for the window.

import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { ObjectStore } from '../../src/agent/object-store.js';
import { ClusterDNS } from '../../src/dns/server.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { sleep, type Scenario } from './types.js';

/** Answered queries per second of `clients` closed-loop UDP clients against port during ms. */
async function queriesPerSecond(port: number, clients: number, ms: number, query: Buffer, isAnswer: (b: Buffer) => boolean): Promise<number> {
  let answered = 0;
  let running = true;
  const sockets: Socket[] = [];
  for (let c = 0; c < clients; c++) {
    const s = createSocket('udp4');
    sockets.push(s);
    s.on('message', (b) => {
      if (isAnswer(b)) answered++;
      if (running) s.send(query, port, '127.0.0.1');
    });
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  }
  const start = preciseNow();
  for (const s of sockets) s.send(query, port, '127.0.0.1');
  await sleep(ms);
  running = false;
  const elapsed = preciseNow() - start;
  const count = answered;
  for (const s of sockets) s.close();
  return (count / elapsed) * 1000;
}

export const clusterDns: Scenario = {
  name: 'cluster-dns',
  defaultSizes: [1, 16],
  sizeIsPods: false,
  async run(clients, ctx): Promise<ScenarioResult> {
    const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
    await objects.create('Service', { metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    const dns = new ClusterDNS({ objects, logger: streamLogger(process.stderr, 'error'), clock: new RealClock(), upstreams: [] });
    const { port: dnsPort } = await dns.listen('127.0.0.1', 0);
    ctx.defer(() => dns.close());
    const echo = createSocket('udp4');
    echo.on('message', (m, from) => echo.send(m, from.port, from.address));
    await new Promise<void>((r) => echo.bind(0, '127.0.0.1', r));
    ctx.defer(() => echo.close());

    const query = dnsPacket.encode({
      type: 'query',
      id: 1,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: 'A', name: 'web.shop.svc.cluster.local' }],
    });
    const first = dnsPacket.decode((await dns.answer(query))!);
    if (first.answers?.[0]?.type !== 'A') throw new Error('cluster-dns: the Service name did not resolve');
    const windowMs = ctx.durationMs ?? 3000;
    ctx.log(`cluster-dns ${clients} clients: ${windowMs} ms against the cluster DNS, then the UDP echo floor`);
    await queriesPerSecond(dnsPort, clients, Math.min(500, windowMs), query, () => true);
    const served = await queriesPerSecond(dnsPort, clients, windowMs, query, (b) => b.length > query.length);
    const floor = await queriesPerSecond(echo.address().port, clients, windowMs, query, () => true);
    return {
      scenario: 'cluster-dns',
      size: clients,
      figures: [
        figure('dns_qps', `A queries answered per second, ${clients} client(s) (cluster DNS vs UDP echo)`, '/s', served, floor),
        figure('dns_us_per_query', 'time per answered query (cluster DNS vs UDP echo)', 'µs', 1e6 / served, 1e6 / floor),
      ],
      notes: [`each client keeps one query in flight; answers counted only when they carry the record`],
    };
  },
};
