// service-proxy: the userspace service proxy against a direct connection, in the shape of a host:
// the endpoint servers run in their own process (bench/procs/proxy-endpoints.ts, as a pod's server),
// the proxy in another (bench/procs/proxy-host.ts, as the agent holds it), the client here. Round
// trips of SIZE KB on one connection give latency p50/p99 through <clusterIP>:<port> and direct to
// the endpoint (the floor, same run, blocks alternating); transfers of 64 MB, half-closed and
// answered with the count read, give the throughput of each path (median of alternating transfers).
// As root with iptables, the proxy's iptables mode (the kernel's DNAT) is measured as a third path.

import { execFileSync } from 'node:child_process';
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

interface Path {
  host: string;
  echoPort: number;
  sinkPort: number;
}

/** Whether the kernel path can be measured: root and a working iptables. */
function iptablesUsable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('iptables', ['-w', '-t', 'nat', '-S', 'OUTPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const serviceProxy: Scenario = {
  name: 'service-proxy',
  defaultSizes: [1, 1024],
  sizeIsPods: false,
  async run(sizeKb, ctx): Promise<ScenarioResult> {
    const endpoints = await ChildHandle.start('proxy-endpoints');
    ctx.defer(() => endpoints.kill());
    const ep = await endpoints.call<ProxyEndpointsStart>('start');
    const proxy = await ChildHandle.start('proxy-host');
    ctx.defer(() => proxy.kill());
    const svc = await proxy.call<ProxyHostStart>('start', { ...ep, mode: 'userspace' } satisfies ProxyHostParams);
    const withNat = iptablesUsable();
    const natProxy = withNat ? await ChildHandle.start('proxy-host') : undefined;
    if (natProxy) ctx.defer(() => natProxy.kill());
    const natSvc = natProxy ? await natProxy.call<ProxyHostStart>('start', { ...ep, mode: 'iptables' } satisfies ProxyHostParams) : undefined;

    const paths: Record<string, Path> = {
      userspace: { host: svc.clusterIP, echoPort: svc.echoPort, sinkPort: svc.sinkPort },
      direct: { host: '127.0.0.1', ...ep },
      ...(natSvc ? { iptables: { host: natSvc.clusterIP, echoPort: natSvc.echoPort, sinkPort: natSvc.sinkPort } } : {}),
    };
    const names = Object.keys(paths);
    const rounds = sizeKb >= 1024 ? 200 : 2000;
    ctx.log(
      `service-proxy ${sizeKb} KB: ${rounds} round trips per path (${names.join(', ')}) in ${blocks} alternating blocks, then ${transfers} × ${streamBytes >> 20} MB each`,
    );
    const sockets = new Map<string, Socket>();
    const times = new Map<string, number[]>();
    for (const n of names) {
      const s = await dial(paths[n]!.host, paths[n]!.echoPort);
      sockets.set(n, s);
      times.set(n, []);
      await roundTrips(s, sizeKb * 1024, 50);
    }
    for (let b = 0; b < blocks; b++) for (const n of names) times.get(n)!.push(...(await roundTrips(sockets.get(n)!, sizeKb * 1024, rounds / blocks)));
    for (const s of sockets.values()) s.destroy();
    const rtt = (n: string) => distribution(times.get(n)!);

    const streams = new Map<string, number[]>(names.map((n) => [n, []]));
    let proxyCpuS = 0;
    for (let i = 0; i < transfers; i++)
      for (const n of names) {
        const cpu0 = proxy.cpu().self;
        streams.get(n)!.push(await transfer(paths[n]!.host, paths[n]!.sinkPort));
        if (n === 'userspace') proxyCpuS += proxy.cpu().self - cpu0;
      }
    await natProxy?.stop();
    await proxy.stop();
    await endpoints.stop();
    const stream = (n: string) => median(streams.get(n)!);
    const streamTarget = { text: '≤ 1.25× floor (≥ 0.8× throughput)', on: 'ratio' as const, op: '<=' as const, value: 1.25 };
    const added = { text: '≤ 0.2 ms', on: 'agent' as const, op: '<=' as const, value: 0.2 };
    const [via, direct] = [rtt('userspace'), rtt('direct')];
    const figures = [
      figure('rtt_p50_ms', `${sizeKb} KB round trip p50 (ClusterIP vs direct)`, 'ms', via.p50, direct.p50),
      figure('rtt_p99_ms', `${sizeKb} KB round trip p99 (ClusterIP vs direct)`, 'ms', via.p99, direct.p99),
      figure('rtt_p50_added_ms', 'p50 added by the proxy', 'ms', via.p50 - direct.p50, null, added),
      figure('stream_64mb_ms', '64 MB streamed, median (ClusterIP vs direct)', 'ms', stream('userspace'), stream('direct'), streamTarget),
      figure('proxy_cpu_ms_per_mb', 'proxy CPU per MB streamed', 'ms', (proxyCpuS * 1000) / ((transfers * streamBytes) / 1048576), null),
    ];
    if (natSvc) {
      const nat = rtt('iptables');
      figures.push(
        figure('nat_rtt_p50_ms', `${sizeKb} KB round trip p50, iptables mode (ClusterIP vs direct)`, 'ms', nat.p50, direct.p50),
        figure('nat_rtt_p99_ms', `${sizeKb} KB round trip p99, iptables mode (ClusterIP vs direct)`, 'ms', nat.p99, direct.p99),
        figure('nat_rtt_p50_added_ms', 'p50 added, iptables mode', 'ms', nat.p50 - direct.p50, null, added),
        figure('nat_stream_64mb_ms', '64 MB streamed, median, iptables mode (ClusterIP vs direct)', 'ms', stream('iptables'), stream('direct'), streamTarget),
      );
    }
    const each = (n: string) => streams.get(n)!.map(mbPerS).join(', ');
    return {
      scenario: 'service-proxy',
      size: sizeKb,
      figures,
      notes: [
        `throughput (medians of ${transfers}): ${names.map((n) => `${n} ${mbPerS(stream(n))} MB/s`).join(', ')}; each transfer: ${names.map((n) => `${n} ${each(n)}`).join('; ')}`,
        ...(natSvc ? [] : ['iptables mode not measured: it needs root and iptables']),
      ],
    };
  },
};
