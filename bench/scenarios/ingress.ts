// ingress: the agent's ingress proxy against a direct connection and against Debian's nginx as a
// reverse proxy to the same backend, in the same run: the backend in its own process
// (bench/procs/ingress-backend.ts), the ingress proxy in another (bench/procs/ingress-host.ts, as the
// agent holds it), nginx as a third (one worker, upstream keep-alive, proxy_buffering off as
// ingress-nginx configures it), the client here over one kept-alive connection per path. Round trips
// of a 1 KB POST echoed back give p50/p99 and the latency each proxy adds over direct (blocks
// alternating between paths), beside a bare node:http reverse proxy (bench/procs/http-proxy-floor.ts,
// the floor of any proxy written on Node's HTTP stack); GETs of a 64 MB response give each path's throughput (median of
// alternating transfers). Without an nginx binary the nginx peer is skipped and the result says so.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildHandle } from '../lib/child-handle.js';
import { distribution, preciseNow } from '../lib/stats.js';
import { figure, type Figure, type ScenarioResult } from '../report/figures.js';
import type { IngressBackendStart } from '../procs/ingress-backend.js';
import type { IngressHostStart } from '../procs/ingress-host.js';
import type { Scenario } from './types.js';

const bigBytes = 64 * 1024 * 1024;
const blocks = 5;
const transfers = 5;

interface Path {
  port: number;
  agent: Agent;
}

/** One request on the path's kept-alive connection: method, url, body; resolves to the bytes read. */
function exchange(p: Path, method: string, url: string, body?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: p.port,
        method,
        path: url,
        agent: p.agent,
        headers: { host: 'bench.localhost', ...(body ? { 'content-length': body.length } : {}) },
      },
      (res) => {
        let n = 0;
        res.on('data', (b: Buffer) => (n += b.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`${method} ${url} on port ${p.port}: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function roundTrips(p: Path, payload: Buffer, rounds: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = preciseNow();
    await exchange(p, 'POST', '/echo', payload);
    times.push(preciseNow() - start);
  }
  return times;
}

async function transfer(p: Path): Promise<number> {
  const start = preciseNow();
  const n = await exchange(p, 'GET', '/big');
  if (n !== bigBytes) throw new Error(`read ${n} bytes of ${bigBytes}`);
  return preciseNow() - start;
}

function nginxBinary(): string | undefined {
  for (const bin of ['/usr/sbin/nginx', '/usr/bin/nginx']) {
    try {
      execFileSync(bin, ['-v'], { stdio: 'ignore' });
      return bin;
    } catch {
      // not this one
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** nginx as a reverse proxy to the backend, configured as ingress-nginx configures a location. */
async function startNginx(bin: string, backendPort: number): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-bench-nginx-'));
  const port = await freePort();
  const conf = `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
      proxy_set_header X-Forwarded-Port $server_port;
      proxy_buffering off;
      proxy_request_buffering on;
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(bin, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/echo', method: 'POST', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { port, child, dir };
}

export const ingress: Scenario = {
  name: 'ingress',
  defaultSizes: [1],
  sizeIsPods: false,
  async run(sizeKb, ctx): Promise<ScenarioResult> {
    const backend = await ChildHandle.start('ingress-backend');
    ctx.defer(() => backend.kill());
    const be = await backend.call<IngressBackendStart>('start');
    const proxy = await ChildHandle.start('ingress-host');
    ctx.defer(() => proxy.kill());
    const ing = await proxy.call<IngressHostStart>('start', be);
    const floor = await ChildHandle.start('http-proxy-floor');
    ctx.defer(() => floor.kill());
    const nodeFloor = await floor.call<IngressBackendStart>('start', be);
    const bin = nginxBinary();
    const nginx = bin ? await startNginx(bin, be.port) : undefined;
    if (nginx)
      ctx.defer(() => {
        nginx.child.kill('SIGTERM');
        rmSync(nginx.dir, { recursive: true, force: true });
      });
    const agent = () => new Agent({ keepAlive: true, maxSockets: 1 });
    const paths: Record<string, Path> = {
      ingress: { port: ing.httpPort, agent: agent() },
      direct: { port: be.port, agent: agent() },
      'node-http': { port: nodeFloor.port, agent: agent() },
      ...(nginx ? { nginx: { port: nginx.port, agent: agent() } } : {}),
    };
    const names = Object.keys(paths);
    const rounds = 2000;
    const payload = Buffer.alloc(sizeKb * 1024, 7);
    ctx.log(`ingress ${sizeKb} KB: ${rounds} round trips per path (${names.join(', ')}) in ${blocks} alternating blocks, then ${transfers} × 64 MB each`);
    const times = new Map<string, number[]>(names.map((n) => [n, []]));
    for (const n of names) await roundTrips(paths[n]!, payload, 100);
    for (let b = 0; b < blocks; b++) for (const n of names) times.get(n)!.push(...(await roundTrips(paths[n]!, payload, rounds / blocks)));
    const streams = new Map<string, number[]>(names.map((n) => [n, []]));
    let proxyCpuS = 0;
    for (let i = 0; i < transfers; i++)
      for (const n of names) {
        const cpu0 = proxy.cpu().self;
        streams.get(n)!.push(await transfer(paths[n]!));
        if (n === 'ingress') proxyCpuS += proxy.cpu().self - cpu0;
      }
    for (const p of Object.values(paths)) p.agent.destroy();
    await proxy.stop();
    await floor.stop();
    await backend.stop();
    const rtt = (n: string) => distribution(times.get(n)!);
    const stream = (n: string) => distribution(streams.get(n)!).p50;
    const mbPerS = (ms: number) => (bigBytes / 1048576 / ms) * 1000;
    const [via, direct] = [rtt('ingress'), rtt('direct')];
    const addedIngress = via.p50 - direct.p50;
    const figures: Figure[] = [
      figure('rtt_p50_ms', `${sizeKb} KB request p50 (ingress vs direct)`, 'ms', via.p50, direct.p50),
      figure('rtt_p99_ms', `${sizeKb} KB request p99 (ingress vs direct)`, 'ms', via.p99, direct.p99),
      figure('node_rtt_p50_added_ms', 'p50 added (ingress vs a bare node:http proxy)', 'ms', addedIngress, rtt('node-http').p50 - direct.p50),
      figure('proxy_cpu_ms_per_mb', 'ingress proxy CPU per MB streamed', 'ms', (proxyCpuS * 1000) / ((transfers * bigBytes) / 1048576), null),
    ];
    if (nginx) {
      const ng = rtt('nginx');
      const addedNginx = ng.p50 - direct.p50;
      figures.push(
        figure('rtt_p50_added_ms', 'p50 added (ingress vs nginx)', 'ms', addedIngress, addedNginx, {
          text: '≤ 1.5× nginx',
          on: 'ratio',
          op: '<=',
          value: 1.5,
        }),
        figure('nginx_rtt_p50_ms', `${sizeKb} KB request p50 (nginx vs direct)`, 'ms', ng.p50, direct.p50),
        // Throughput ≥ 0.7× nginx's is time ≤ 1/0.7 of nginx's for the same 64 MB.
        figure('stream_64mb_ms', '64 MB response, median time (ingress vs nginx)', 'ms', stream('ingress'), stream('nginx'), {
          text: '≥ 0.7× nginx throughput (≤ 1.43× its time)',
          on: 'ratio',
          op: '<=',
          value: 1 / 0.7,
        }),
      );
    } else {
      figures.push(figure('rtt_p50_added_ms', 'p50 added by the ingress proxy', 'ms', addedIngress, null));
      figures.push(figure('stream_64mb_ms', '64 MB response, median time (ingress vs direct)', 'ms', stream('ingress'), stream('direct')));
    }
    const each = (n: string) =>
      streams
        .get(n)!
        .map((ms) => mbPerS(ms).toFixed(0))
        .join(', ');
    return {
      scenario: 'ingress',
      size: sizeKb,
      figures,
      notes: [
        `throughput MB/s (medians of ${transfers}): ${names.map((n) => `${n} ${mbPerS(stream(n)).toFixed(0)}`).join(', ')}; each transfer: ${names.map((n) => `${n} ${each(n)}`).join('; ')}`,
        ...(nginx ? [] : ['nginx peer not measured: no nginx binary (apt-get install nginx-light)']),
      ],
    };
  },
};
