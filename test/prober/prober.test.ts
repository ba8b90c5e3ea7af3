// The common probe wrapper (§5.1) with the real probe kinds: result mapping, retries on error, and
// the Unhealthy / ProbeWarning events with their exact messages and container field paths.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Container, Pod, PodStatus, Probe } from '../../src/api/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { ContainerProber } from '../../src/prober/prober.js';
import type { ProbeOutcome } from '../../src/prober/types.js';
import { execOnlyRuntime } from './exec-runtime.js';
import { RecordingRecorder } from './helpers.js';

/** The outcome without the output the probe history keeps (the tests below check results and errors). */
function withoutOutput(o: ProbeOutcome): Omit<ProbeOutcome, 'output'> {
  const { output: _output, ...rest } = o;
  return rest;
}

const servers: http.Server[] = [];
after(() => servers.forEach((s) => (s.closeAllConnections(), s.close())));

function setup(known = new Set(['abc'])) {
  const recorder = new RecordingRecorder();
  const runtime = execOnlyRuntime(known);
  const prober = new ContainerProber({ runtime, recorder, logger: silentLogger, clock: new FakeClock(), kubeVersion: '1.35' });
  return { recorder, runtime, prober };
}

function podWith(c: Container, init = false): Pod {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1' },
    spec: init ? { containers: [{ name: 'main' }], initContainers: [{ ...c, restartPolicy: 'Always' }] } : { containers: [c] },
  };
}

const status: PodStatus = { phase: 'Running', podIP: '127.0.0.1' };
const exec = (command: string[], extra: Partial<Probe> = {}): Probe => ({ exec: { command }, timeoutSeconds: 1, ...extra });

test('success emits nothing; failure emits Unhealthy with the output on the container', async () => {
  const { prober, recorder } = setup();
  const c: Container = { name: 'app', livenessProbe: exec(['true']), readinessProbe: exec(['sh', '-c', 'echo not yet; exit 1']) };
  assert.deepEqual(withoutOutput(await prober.probe('Liveness', podWith(c), status, c, 'process://abc')), { result: 'Success' });
  assert.equal(recorder.events.length, 0);
  assert.deepEqual(withoutOutput(await prober.probe('Readiness', podWith(c), status, c, 'process://abc')), { result: 'Failure' });
  assert.deepEqual(recorder.events, [
    {
      obj: { namespace: 'shop', name: 'web', uid: 'u-1', fieldPath: 'spec.containers{app}' },
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: not yet\n',
    },
  ]);
});

test('a sidecar event points at spec.initContainers', async () => {
  const { prober, recorder } = setup();
  const c: Container = { name: 'proxy', startupProbe: exec(['false']) };
  assert.deepEqual(withoutOutput(await prober.probe('Startup', podWith(c, true), status, c, 'process://abc')), { result: 'Failure' });
  assert.equal(recorder.events[0]!.obj.fieldPath, 'spec.initContainers{proxy}');
  assert.equal(recorder.events[0]!.message, 'Startup probe failed: ');
});

test('an exec timeout is a failure event naming the command', async () => {
  const { prober, recorder } = setup();
  const c: Container = { name: 'app', livenessProbe: exec(['sleep', '30']) };
  assert.deepEqual(withoutOutput(await prober.probe('Liveness', podWith(c), status, c, 'process://abc')), { result: 'Failure' });
  assert.equal(recorder.events[0]!.message, 'Liveness probe failed: command "sleep 30" timed out');
});

test('a probe that errors is tried 3 times, then one errored event and a Failure with the error', async () => {
  const { prober, recorder, runtime } = setup(new Set());
  const c: Container = { name: 'app', livenessProbe: exec(['true']) };
  const out = await prober.probe('Liveness', podWith(c), status, c, 'process://gone');
  assert.equal(out.result, 'Failure');
  assert.ok(out.error);
  assert.equal(runtime.calls.length, 3);
  assert.deepEqual(
    recorder.events.map((e) => [e.reason, e.message]),
    [['Unhealthy', 'Liveness probe errored and resulted in unknown state: container "gone" not found']],
  );
});

test('port resolution errors and a missing handler are errors; a nil spec is Success', async () => {
  const { prober, recorder } = setup();
  const c: Container = { name: 'app', livenessProbe: { httpGet: { port: 'metrics' } }, readinessProbe: { timeoutSeconds: 1 } };
  const l = await prober.probe('Liveness', podWith(c), status, c, 'process://abc');
  assert.equal(l.error?.message, 'strconv.Atoi: parsing "metrics": invalid syntax');
  const r = await prober.probe('Readiness', podWith(c), status, c, 'process://abc');
  assert.equal(r.error?.message, 'missing probe handler for web_shop(u-1):app');
  assert.deepEqual(
    recorder.events.map((e) => e.message),
    [
      'Liveness probe errored and resulted in unknown state: strconv.Atoi: parsing "metrics": invalid syntax',
      'Readiness probe errored and resulted in unknown state: missing probe handler for web_shop(u-1):app',
    ],
  );
  assert.deepEqual(withoutOutput(await prober.probe('Startup', podWith(c), status, c, 'process://abc')), { result: 'Success' });
});

test('HTTP: a named port and the pod IP; a 500 and a cross-host redirect produce their events', async () => {
  const { prober, recorder } = setup();
  const server = http.createServer((req, res) => {
    if (req.url === '/fail') res.writeHead(500).end('secret body');
    else if (req.url === '/away') res.writeHead(302, { location: 'http://localhost:1/' }).end('<a href="http://localhost:1/">Found</a>.');
    else res.end('ok');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const c: Container = {
    name: 'app',
    ports: [{ name: 'http', containerPort: port }],
    livenessProbe: { httpGet: { port: 'http', path: '/fail' }, timeoutSeconds: 1 },
    readinessProbe: { httpGet: { port, path: '/away' }, timeoutSeconds: 1 },
    startupProbe: { httpGet: { port: 'http', path: '/' }, timeoutSeconds: 1 },
  };
  assert.deepEqual(withoutOutput(await prober.probe('Liveness', podWith(c), status, c, 'process://abc')), { result: 'Failure' });
  assert.deepEqual(withoutOutput(await prober.probe('Readiness', podWith(c), status, c, 'process://abc')), { result: 'Success' });
  assert.deepEqual(withoutOutput(await prober.probe('Startup', podWith(c), status, c, 'process://abc')), { result: 'Success' });
  assert.deepEqual(
    recorder.events.map((e) => [e.reason, e.message]),
    [
      ['Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500'],
      ['ProbeWarning', 'Readiness probe warning: Probe terminated redirects, Response body: <a href="http://localhost:1/">Found</a>.'],
    ],
  );
});

test('TCP: a closed port fails with the dial text', async () => {
  const { prober, recorder } = setup();
  const c: Container = { name: 'app', livenessProbe: { tcpSocket: { port: 1 }, timeoutSeconds: 1 } };
  assert.deepEqual(withoutOutput(await prober.probe('Liveness', podWith(c), status, c, 'process://abc')), { result: 'Failure' });
  assert.equal(recorder.events[0]!.message, 'Liveness probe failed: dial tcp 127.0.0.1:1: connect: connection refused');
});
