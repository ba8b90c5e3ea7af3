// Probes against real servers leave nothing in their logs: a Node `net` server that writes on accept
// with no error handler (a reset would crash it), a Node `http` server, and `python3 -m http.server`
// (which prints a traceback for a reset connection). Each server runs as its own process; its
// stderr is captured and must hold nothing but, for Python, its access lines.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RealClock } from '../../src/util/clock.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from '../../src/prober/http.js';
import { doTCPProbe } from '../../src/prober/tcp.js';
import type { ActionOutcome } from '../../src/prober/probe.js';
import { runMany } from './helpers.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const clock = new RealClock();
const PROBES = 1000;
const PARALLEL = 16;
/** Below `python3 -m http.server`'s listen backlog of 5. */
const PYTHON_PARALLEL = 4;
const children: ChildProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  port: number;
  stderr: () => string;
  stdout: () => string;
}

/** Starts a server process that prints its port as the first line of stdout (or of stderr for Python). */
function startServer(cmd: string, args: string[], portFrom: RegExp, cwd?: string): Promise<Server> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`${cmd} did not start: ${out}${err}`)), 20_000);
    const check = () => {
      const m = portFrom.exec(out) ?? portFrom.exec(err);
      if (!m) return;
      clearTimeout(deadline);
      child.stdout!.off('data', check);
      child.stderr!.off('data', check);
      resolve({ child, port: Number(m[1]), stderr: () => err, stdout: () => out });
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${out}${err}`)));
  });
}

function assertAllSucceeded(results: ActionOutcome[]): void {
  const failures = results.filter((r) => r.result !== 'success');
  assert.equal(failures.length, 0, `probe failures: ${JSON.stringify(failures.slice(0, 3))}`);
}

/** The server keeps running and writes nothing on stderr while the last closes reach it. */
const staysQuiet = (srv: { child: ChildProcess; stderr: () => string }) =>
  holdsFor(
    () => `the server running with nothing on stderr (exit ${srv.child.exitCode}, stderr ${JSON.stringify(srv.stderr().slice(0, 2000))})`,
    () => srv.child.exitCode === null && srv.stderr() === '',
    1500,
  );

for (const [what, onAccept] of [
  ['writes on accept and ends (no error handler)', "sock.end('ready for query\\n')"],
  ['writes on accept and keeps the connection', "sock.write('hello\\n')"],
]) {
  test(`${PROBES} tcpSocket probes against a Node server that ${what}`, async () => {
    const srv = await startServer(
      process.execPath,
      ['-e', `const s = require('node:net').createServer((sock) => ${onAccept}); s.listen(0, '127.0.0.1', () => console.log('port ' + s.address().port));`],
      /port (\d+)/,
    );
    assertAllSucceeded(await runMany(PROBES, PARALLEL, () => doTCPProbe('127.0.0.1', srv.port, 5, clock)));
    await staysQuiet(srv);
  });
}

test(`${PROBES} httpGet probes against a Node http server`, async () => {
  const srv = await startServer(
    process.execPath,
    [
      '-e',
      "const s = require('node:http').createServer((req, res) => res.end('ok')); s.on('clientError', (e) => console.error('clientError', e.code)); s.listen(0, '127.0.0.1', () => console.log('port ' + s.address().port));",
    ],
    /port (\d+)/,
  );
  const req = newRequestForHTTPGetAction({ port: srv.port, path: '/healthz' }, { name: 'c' }, '127.0.0.1', 'kube-probe/1.35');
  assertAllSucceeded(await runMany(PROBES, PARALLEL, () => doHTTPProbe(req, 5, clock)));
  await staysQuiet(srv);
});

const noPython = spawnSync('python3', ['--version']).status === 0 ? false : 'python3 is not installed';

test(`${PROBES} httpGet and tcpSocket probes against python3 -m http.server`, { skip: noPython }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'podvisor-wire-'));
  dirs.push(dir);
  const srv = await startServer('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '0'], /port (\d+)/, dir);
  const req = newRequestForHTTPGetAction({ port: srv.port, path: '/' }, { name: 'c' }, '127.0.0.1', 'kube-probe/1.35');
  // http.server listens with a backlog of 5 (socketserver's request_queue_size): more connections at
  // once than that overflow its accept queue on a loaded host, and the kernel then drops a connection
  // the client already counts as open (a reset in the server's log), whatever the client does.
  assertAllSucceeded(await runMany(PROBES, PYTHON_PARALLEL, () => doHTTPProbe(req, 5, clock)));
  assertAllSucceeded(await runMany(PROBES, PYTHON_PARALLEL, () => doTCPProbe('127.0.0.1', srv.port, 5, clock)));
  // http.server logs one access line per request; anything else (a traceback, a reset) is a failure.
  const logLines = () =>
    srv
      .stderr()
      .split('\n')
      .filter((l) => l !== '');
  await waitFor(`a log line per probe from the server`, () => logLines().length >= PROBES);
  assert.equal(srv.child.exitCode, null, `server died: ${srv.stderr()}`);
  const lines = logLines();
  const other = lines.filter((l) => !/^127\.0\.0\.1 - - \[[^\]]+\] "GET \/ HTTP\/1\.1" 200 -$/.test(l));
  assert.deepEqual(other.slice(0, 40), [], `unexpected server output (${other.length} lines)`);
  assert.equal(lines.length - other.length, PROBES);
});
