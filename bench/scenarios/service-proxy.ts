// service-proxy: the userspace service proxy against a direct connection, in the shape of a host:
// the endpoint servers run in their own process (bench/procs/proxy-endpoints.ts, as a pod's server),
// the proxy in another (bench/procs/proxy-host.ts, as the agent holds it), the client here. Round
// trips of SIZE KB on one connection give latency p50/p99 through <clusterIP>:<port> and direct to
// the endpoint (the floor, same run, blocks alternating); transfers of 64 MB, half-closed and
// answered with the count read, give the throughput of each path (median of alternating transfers).

import { connect, type Socket } from 'node:net';
import { ChildHandle } from '../lib/child-handle.js';
import { distribution, preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { ProxyEndpointsStart } from '../procs/proxy-endpoints.js';
import type { ProxyHostParams, ProxyHostStart } from '../procs/proxy-host.js';
import type { Scenario } from './types.js';

const streamBytes = 64 * 1024 * 1024;
/** Alternating blocks of round trips, and transfers, per path. */
const blocks = 5;
const transfers = 5;

function dial(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Round-trip times (ms) of `rounds` requests of `size` bytes echoed back in full, on socket s. */
async function roundTrips(s: Socket, size: number, rounds: number): Promise<number[]> {
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
  return times;
}

/** Time (ms) to send streamBytes on a new connection, half-close it and read the sink's count back. */
async function transfer(host: string, port: number): Promise<number> {
  const s = await dial(host, port);
  const chunk = Buffer.alloc(256 * 1024, 1);
  const start = preciseNow();
  let answer = '';
  const answered = new Promise<void>((resolve, reject) => {
    s.setEncoding('utf8');
    s.on('data', (t: string) => (answer += t));
    s.once('end', resolve);
    s.once('error', reject);
  });
  for (let sent = 0; sent < streamBytes; sent += chunk.length) if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  s.end();
  await answered;
  const ms = preciseNow() - start;
  s.destroy();
  if (Number(answer) !== streamBytes) throw new Error(`the sink read ${answer.trim()} bytes of ${streamBytes}`);
  return ms;
}

const median = (xs: number[]) => distribution(xs).p50;
const mbPerS = (ms: number) => ((streamBytes / 1048576 / ms) * 1000).toFixed(0);

export const serviceProxy: Scenario = {
  name: 'service-proxy',
  defaultSizes: [1, 1024],
  sizeIsPods: false,
  async run(sizeKb, ctx): Promise<ScenarioResult> {
    const endpoints = await ChildHandle.start('proxy-endpoints');
    ctx.defer(() => endpoints.kill());
    const proxy = await ChildHandle.start('proxy-host');
    ctx.defer(() => proxy.kill());
    const ep = await endpoints.call<ProxyEndpointsStart>('start');
    const svc = await proxy.call<ProxyHostStart>('start', ep satisfies ProxyHostParams);

    const rounds = sizeKb >= 1024 ? 200 : 2000;
    ctx.log(`service-proxy ${sizeKb} KB: ${rounds} round trips each way in ${blocks} alternating blocks, then ${transfers} × ${streamBytes >> 20} MB each way`);
    const viaSocket = await dial(svc.clusterIP, svc.echoPort);
    const directSocket = await dial('127.0.0.1', ep.echoPort);
    await roundTrips(viaSocket, sizeKb * 1024, 50);
    await roundTrips(directSocket, sizeKb * 1024, 50);
    const viaTimes: number[] = [];
    const directTimes: number[] = [];
    for (let b = 0; b < blocks; b++) {
      viaTimes.push(...(await roundTrips(viaSocket, sizeKb * 1024, rounds / blocks)));
      directTimes.push(...(await roundTrips(directSocket, sizeKb * 1024, rounds / blocks)));
    }
    viaSocket.destroy();
    directSocket.destroy();
    const viaProxy = distribution(viaTimes);
    const direct = distribution(directTimes);

    const streamVia: number[] = [];
    const streamDirect: number[] = [];
    let proxyCpuS = 0;
    for (let i = 0; i < transfers; i++) {
      const cpu0 = proxy.cpu().self;
      streamVia.push(await transfer(svc.clusterIP, svc.sinkPort));
      proxyCpuS += proxy.cpu().self - cpu0;
      streamDirect.push(await transfer('127.0.0.1', ep.sinkPort));
    }
    await proxy.stop();
    await endpoints.stop();
    const streamProxy = median(streamVia);
    const streamFloor = median(streamDirect);
    return {
      scenario: 'service-proxy',
      size: sizeKb,
      figures: [
        figure('rtt_p50_ms', `${sizeKb} KB round trip p50 (ClusterIP vs direct)`, 'ms', viaProxy.p50, direct.p50),
        figure('rtt_p99_ms', `${sizeKb} KB round trip p99 (ClusterIP vs direct)`, 'ms', viaProxy.p99, direct.p99),
        figure('rtt_p50_added_ms', 'p50 added by the proxy', 'ms', viaProxy.p50 - direct.p50, null, { text: '≤ 0.2 ms', on: 'agent', op: '<=', value: 0.2 }),
        figure('stream_64mb_ms', '64 MB streamed, median (ClusterIP vs direct)', 'ms', streamProxy, streamFloor, {
          text: '≤ 1.25× floor (≥ 0.8× throughput)',
          on: 'ratio',
          op: '<=',
          value: 1.25,
        }),
        figure('proxy_cpu_ms_per_mb', 'proxy CPU per MB streamed', 'ms', (proxyCpuS * 1000) / ((transfers * streamBytes) / 1048576), null),
      ],
      notes: [
        `throughput ${mbPerS(streamProxy)} MB/s through the ClusterIP, ${mbPerS(streamFloor)} MB/s direct (medians of ${transfers}; through: ${streamVia.map(mbPerS).join(', ')}; direct: ${streamDirect.map(mbPerS).join(', ')})`,
      ],
    };
  },
};
