// Thousands of HTTP and TCP probes on loopback must not pile up TIME_WAIT sockets (the kubelet's
// SO_LINGER effect): probes end their connections with an RST. Counts sockets in state 06
// (TIME_WAIT) for the server port in /proc/net/tcp and /proc/net/tcp6.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { RealClock } from '../../src/util/clock.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from '../../src/prober/http.js';
import { doTCPProbe } from '../../src/prober/tcp.js';
import type { ActionOutcome } from '../../src/prober/probe.js';

const clock = new RealClock();
const PROBES = 2000;
const PARALLEL = 16;
const closers: (() => void)[] = [];
after(() => closers.forEach((c) => c()));

function timeWaitCount(port: number): number {
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '06') continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (local === port || remote === port) n++;
    }
  }
  return n;
}

async function runMany(n: number, one: () => Promise<ActionOutcome>): Promise<ActionOutcome[]> {
  const out: ActionOutcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < n) {
        next++;
        out.push(await one());
      }
    }),
  );
  return out;
}

const skip = existsSync('/proc/net/tcp') ? false : 'no /proc/net/tcp on this system';

test(`${PROBES} HTTP probes leave no TIME_WAIT pile`, { skip }, async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  server.on('connection', (s) => s.on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (server.closeAllConnections(), server.close()));
  const port = (server.address() as net.AddressInfo).port;
  const req = newRequestForHTTPGetAction({ port, path: '/healthz' }, { name: 'c' }, '127.0.0.1', 'kube-probe/1.35');
  const results = await runMany(PROBES, () => doHTTPProbe(req, 5, clock));
  const failures = results.filter((r) => r.result !== 'success');
  assert.equal(failures.length, 0, `probe errors: ${JSON.stringify(failures.slice(0, 3))}`);
  const tw = timeWaitCount(port);
  assert.ok(tw < 50, `TIME_WAIT sockets on port ${port}: ${tw}`);
});

test(`${PROBES} TCP probes leave no TIME_WAIT pile`, { skip }, async () => {
  const server = net.createServer((s) => s.on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const results = await runMany(PROBES, () => doTCPProbe('127.0.0.1', port, 5, clock));
  const failures = results.filter((r) => r.result !== 'success');
  assert.equal(failures.length, 0, `probe errors: ${JSON.stringify(failures.slice(0, 3))}`);
  const tw = timeWaitCount(port);
  assert.ok(tw < 50, `TIME_WAIT sockets on port ${port}: ${tw}`);
});
