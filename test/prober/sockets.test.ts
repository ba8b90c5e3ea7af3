// Thousands of HTTP and TCP probes on loopback must not exhaust the prober's ephemeral ports. Probes
// close with a FIN as the kubelet's do (SO_LINGER 1 s), so some end of each connection passes
// through TIME_WAIT: for HTTP the server closes first (the request says `Connection: close`) and the
// state stays on the server's port; for TCP the prober closes first and the kernel reuses a TIME_WAIT
// port for a new outgoing connection (net.ipv4.tcp_tw_reuse, on for loopback by default); the bench
// measures the counts at 2000 probes/s.
// Counts come from /proc/net/tcp and /proc/net/tcp6 (state 06 is TIME_WAIT).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { RealClock } from '../../src/util/clock.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from '../../src/prober/http.js';
import { doTCPProbe } from '../../src/prober/tcp.js';
import { runMany } from './helpers.js';
import { waitFor } from '../fixtures/wait.js';

const clock = new RealClock();
const PROBES = 2000;
const PARALLEL = 16;
const closers: (() => void)[] = [];
after(() => closers.forEach((c) => c()));

interface TimeWait {
  /** TIME_WAIT sockets whose local port is the server's (the server closed first). */
  serverSide: number;
  /** TIME_WAIT sockets on an ephemeral port towards the server (the prober closed first). */
  clientSide: { port: number }[];
}

function timeWait(port: number): TimeWait {
  const out: TimeWait = { serverSide: 0, clientSide: [] };
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '06') continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (local === port) out.serverSide++;
      else if (remote === port) out.clientSide.push({ port: local });
    }
  }
  return out;
}

const twReuse = existsSync('/proc/sys/net/ipv4/tcp_tw_reuse') ? Number(readFileSync('/proc/sys/net/ipv4/tcp_tw_reuse', 'utf8').trim()) : 0;
const skip = existsSync('/proc/net/tcp') ? false : 'no /proc/net/tcp on this system';

test(`${PROBES} HTTP probes leave TIME_WAIT on the server's port, none on the prober's`, { skip }, async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (server.closeAllConnections(), server.close()));
  const port = (server.address() as net.AddressInfo).port;
  const req = newRequestForHTTPGetAction({ port, path: '/healthz' }, { name: 'c' }, '127.0.0.1', 'kube-probe/1.35');
  const results = await runMany(PROBES, PARALLEL, () => doHTTPProbe(req, 5, clock));
  const failures = results.filter((r) => r.result !== 'success');
  assert.equal(failures.length, 0, `probe errors: ${JSON.stringify(failures.slice(0, 3))}`);
  const tw = timeWait(port);
  assert.ok(tw.clientSide.length < 50, `TIME_WAIT sockets on the prober's ports: ${tw.clientSide.length} (server side: ${tw.serverSide})`);
});

test(`${PROBES} TCP probes close with a FIN and their TIME_WAIT ports stay reusable`, { skip }, async (t) => {
  const server = net.createServer((s) => s.on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const results = await runMany(PROBES, PARALLEL, () => doTCPProbe('127.0.0.1', port, 5, clock));
  const failures = results.filter((r) => r.result !== 'success');
  assert.equal(failures.length, 0, `probe errors: ${JSON.stringify(failures.slice(0, 3))}`);
  // No resets: the prober's side went through the orderly close and waits out TIME_WAIT.
  await waitFor(
    () => `the prober to close first: ${timeWait(port).clientSide.length} TIME_WAIT sockets, of ${PROBES * 0.9} at least`,
    () => timeWait(port).clientSide.length >= PROBES * 0.9,
    10_000,
  );
  // What keeps them from exhausting the ephemeral range (28 232 ports by default, 60 s each) at
  // thousands of probes a second: loopback connections reuse TIME_WAIT ports (tcp_tw_reuse 2, the default).
  if (twReuse === 0) t.diagnostic('net.ipv4.tcp_tw_reuse is 0: TIME_WAIT ports are not reused for new connections on this host');
});
