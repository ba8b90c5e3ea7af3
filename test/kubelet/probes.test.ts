// Probes wired into the pod worker, end to end with real processes and real servers (§7.1, §7.2,
// §11.4, §11.5): liveness and startup failures restart the container (with the probe-level grace),
// passing probes never do, readiness drives Ready, startup success makes readiness re-probe at once,
// and during termination readiness goes on while liveness is stopped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Probe } from '../../src/api/types.js';
import { condition, containerStatus, describe, eventsOf, makePod, newHarness, probeCount, sh, statusOf, waitFor, withPods } from './harness.js';

const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** A probe with the API defaults filled in and a 1 s period. */
function probe(handler: Partial<Probe>, over: Partial<Probe> = {}): Probe {
  return { periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1, ...handler, ...over };
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** A container command running a gRPC health server (grpc-health-check) that reports SERVING. */
function grpcHealthServer(port: number): string[] {
  const script = `
    const { createRequire } = require('node:module');
    const load = createRequire(${JSON.stringify(join(projectRoot, 'package.json'))});
    const grpc = load('@grpc/grpc-js');
    const { HealthImplementation } = load('grpc-health-check');
    const server = new grpc.Server();
    new HealthImplementation({ '': 'SERVING' }).addToServer(server);
    server.bindAsync('127.0.0.1:${port}', grpc.ServerCredentials.createInsecure(), (err) => { if (err) { console.error(err); process.exit(1); } });`;
  return [process.execPath, '-e', script];
}

function tcpServer(port: number): string[] {
  return [process.execPath, '-e', `require('node:net').createServer((s) => { s.on('error', () => {}); s.end(); }).listen(${port}, '127.0.0.1')`];
}

test('failing liveness and startup probes restart the container', async () => {
  const server = http.createServer((_req, res) => {
    res.statusCode = 500;
    res.end('unhealthy');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const httpPort = (server.address() as net.AddressInfo).port;
  const closedPort = await freePort();
  const h = await newHarness();
  const healthFile = join(h.dir, 'healthy');
  const ignoreTerm = `trap '' TERM; while true; do sleep 0.1; done`;
  const cases = [
    {
      pod: makePod(
        'exec-liveness',
        [sh('app', `touch ${healthFile}; sleep 1; rm -f ${healthFile}; exec sleep 1000`, { livenessProbe: probe({ exec: { command: ['cat', healthFile] } }) })],
        { terminationGracePeriodSeconds: 2 },
      ),
      killing: 'Container app failed liveness probe, will be restarted',
      // busybox's cat (in the containerd image) quotes the path: `cat: can't open '…': …`.
      unhealthy: /^Liveness probe failed: cat: .*healthy'?: No such file or directory/,
    },
    {
      pod: makePod('http-liveness', [sh('app', 'exec sleep 1000', { livenessProbe: probe({ httpGet: { path: '/healthz', port: httpPort } }) })], {
        terminationGracePeriodSeconds: 2,
      }),
      killing: 'Container app failed liveness probe, will be restarted',
      unhealthy: /^Liveness probe failed: HTTP probe failed with statuscode: 500$/,
    },
    {
      pod: makePod('grpc-closed', [sh('app', 'exec sleep 1000', { livenessProbe: probe({ grpc: { port: closedPort } }) })], {
        terminationGracePeriodSeconds: 2,
      }),
      killing: 'Container app failed liveness probe, will be restarted',
      unhealthy: /^Liveness probe failed: /,
    },
    {
      pod: makePod('startup-fails', [sh('app', 'exec sleep 1000', { startupProbe: probe({ exec: { command: ['false'] } }, { failureThreshold: 2 }) })], {
        terminationGracePeriodSeconds: 2,
      }),
      killing: 'Container app failed startup probe, will be restarted',
      unhealthy: /^Startup probe failed: /,
    },
    {
      // The process ignores SIGTERM: only the probe's 2 s grace (not the pod's 500 s) lets it restart in time.
      pod: makePod('probe-grace', [sh('app', ignoreTerm, { livenessProbe: probe({ exec: { command: ['false'] } }, { terminationGracePeriodSeconds: 2 }) })], {
        terminationGracePeriodSeconds: 500,
      }),
      killing: 'Container app failed liveness probe, will be restarted',
      unhealthy: /^Liveness probe failed: /,
    },
  ];
  try {
    await withPods(
      h,
      cases.map((c) => c.pod),
      async () => {
        await Promise.all(
          cases.map(async ({ pod, killing, unhealthy }) => {
            const cs = await waitFor(
              () => `a restart by the failing probe: ${describe(h, pod)}`,
              () => {
                const c = containerStatus(h, pod, 'app');
                return c && c.restartCount >= 1 ? c : undefined;
              },
              40_000,
            );
            assert.ok(cs.lastState?.terminated, describe(h, pod));
            const kill = eventsOf(h, pod, 'Killing');
            assert.equal(kill[0]!.message, killing, describe(h, pod));
            assert.equal(kill[0]!.type, 'Normal');
            const bad = eventsOf(h, pod, 'Unhealthy');
            assert.ok(bad.length > 0 && bad.every((e) => e.type === 'Warning'));
            assert.match(bad[0]!.message!, unhealthy);
          }),
        );
        assert.equal(containerStatus(h, cases[4]!.pod, 'app')!.lastState?.terminated?.exitCode, 137);
      },
    );
  } finally {
    server.close();
  }
});

test('passing probes never restart; a failing readiness probe keeps the pod not Ready', async () => {
  const tcpPort = await freePort();
  const grpcPort = await freePort();
  const h = await newHarness();
  // A startup probe of the same kind waits for the server to listen; liveness then fails on the first miss.
  const tcp = makePod(
    'tcp-ok',
    [
      {
        name: 'app',
        image: 'node',
        command: tcpServer(tcpPort),
        startupProbe: probe({ tcpSocket: { port: tcpPort } }, { failureThreshold: 30 }),
        livenessProbe: probe({ tcpSocket: { port: tcpPort } }),
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const grpc = makePod(
    'grpc-ok',
    [
      {
        name: 'app',
        image: 'node',
        command: grpcHealthServer(grpcPort),
        startupProbe: probe({ grpc: { port: grpcPort } }, { failureThreshold: 30 }),
        livenessProbe: probe({ grpc: { port: grpcPort } }),
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const notReady = makePod('not-ready', [sh('app', 'exec sleep 1000', { readinessProbe: probe({ exec: { command: ['false'] } }) })], {
    terminationGracePeriodSeconds: 2,
  });
  await withPods(h, [tcp, grpc, notReady], async () => {
    await Promise.all([
      ...[tcp, grpc].map(async (pod) => {
        await waitFor(
          () => `four successful liveness probes: ${describe(h, pod)}`,
          async () => (await probeCount(h, pod, 'app', 'Liveness', 'successful')) >= 4,
          40_000,
        );
        assert.equal(await probeCount(h, pod, 'app', 'Liveness', 'failed'), 0);
        assert.equal(containerStatus(h, pod, 'app')!.restartCount, 0, describe(h, pod));
        assert.equal(eventsOf(h, pod, 'Killing').length, 0);
        assert.equal(condition(h, pod, 'Ready'), 'True');
      }),
      (async () => {
        await waitFor(
          () => `four failed readiness probes: ${describe(h, notReady)}`,
          async () => (await probeCount(h, notReady, 'app', 'Readiness', 'failed')) >= 4,
          40_000,
        );
        const cs = containerStatus(h, notReady, 'app')!;
        assert.equal(cs.restartCount, 0);
        assert.equal(cs.ready, false);
        assert.ok(cs.state?.running);
        assert.equal(condition(h, notReady, 'Ready'), 'False');
        assert.equal(statusOf(h, notReady)!.conditions!.find((c) => c.type === 'ContainersReady')!.reason, 'ContainersNotReady');
        assert.equal(eventsOf(h, notReady, 'Killing').length, 0);
        assert.match(eventsOf(h, notReady, 'Unhealthy')[0]!.message!, /^Readiness probe failed: /);
      })(),
    ]);
  });
});

test('a startup probe holds liveness off; readiness follows startup success at once', async () => {
  const h = await newHarness();
  const started = join(h.dir, 'started');
  const startedToo = join(h.dir, 'started-too');
  // Liveness checks the same file with failureThreshold 1: had it run before startup succeeded, it would kill.
  const held = makePod(
    'held',
    [
      sh('app', 'exec sleep 1000', {
        startupProbe: probe({ exec: { command: ['test', '-f', started] } }, { failureThreshold: 60 }),
        livenessProbe: probe({ exec: { command: ['test', '-f', started] } }),
      }),
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const prompt = makePod(
    'prompt',
    [
      sh('app', 'exec sleep 1000', {
        startupProbe: probe({ exec: { command: ['test', '-f', startedToo] } }, { failureThreshold: 60 }),
        readinessProbe: probe({ exec: { command: ['true'] } }, { periodSeconds: 60 }),
      }),
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  await withPods(h, [held, prompt], async () => {
    // The files appear only once the startup probes have failed a few times.
    await waitFor(
      () => `three failed startup probes: ${describe(h, held)}`,
      async () => (await probeCount(h, held, 'app', 'Startup', 'failed')) >= 3,
    );
    await waitFor(
      () => `two failed startup probes: ${describe(h, prompt)}`,
      async () => (await probeCount(h, prompt, 'app', 'Startup', 'failed')) >= 2,
    );
    assert.equal(await probeCount(h, held, 'app', 'Liveness', 'failed'), 0, 'liveness is held off until started');
    assert.equal(await probeCount(h, held, 'app', 'Liveness', 'successful'), 0);
    assert.equal(containerStatus(h, held, 'app')!.started, false);
    assert.equal(condition(h, prompt, 'Ready'), 'False');
    writeFileSync(started, '');
    writeFileSync(startedToo, '');
    await Promise.all([
      (async () => {
        await waitFor(
          () => `started: ${describe(h, held)}`,
          () => containerStatus(h, held, 'app')?.started === true,
        );
        await waitFor(
          () => `three successful liveness probes: ${describe(h, held)}`,
          async () => (await probeCount(h, held, 'app', 'Liveness', 'successful')) >= 3,
        );
        assert.equal(await probeCount(h, held, 'app', 'Liveness', 'failed'), 0);
        assert.equal(containerStatus(h, held, 'app')!.restartCount, 0);
        assert.equal(eventsOf(h, held, 'Killing').length, 0);
      })(),
      (async () => {
        // Well under the 60 s readiness period: the manual trigger re-probes as soon as startup succeeds.
        await waitFor(
          () => `Ready: ${describe(h, prompt)}`,
          () => condition(h, prompt, 'Ready') === 'True',
          20_000,
        );
        const cs = containerStatus(h, prompt, 'app')!;
        assert.equal(cs.started, true);
        assert.equal(cs.ready, true);
      })(),
    ]);
  });
});

test('while a pod terminates, readiness goes on and no liveness kill happens', async () => {
  const h = await newHarness();
  const ok = join(h.dir, 'ok');
  // On SIGTERM the app turns unhealthy and takes a while to exit.
  const pod = makePod(
    'draining',
    [
      sh('app', `touch ${ok}; trap 'rm -f ${ok}; sleep 4; exit 0' TERM; while true; do sleep 0.1; done`, {
        readinessProbe: probe({ exec: { command: ['test', '-f', ok] } }),
        livenessProbe: probe({ exec: { command: ['test', '-f', ok] } }),
      }),
    ],
    { terminationGracePeriodSeconds: 30 },
  );
  await withPods(h, [pod], async () => {
    await waitFor(
      () => `Ready: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'True',
    );
    const terminated = h.kubelet.terminatePod(pod.metadata!.uid!);
    await waitFor(
      () => `not Ready while app still runs: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'False' && containerStatus(h, pod, 'app')?.state?.running,
      20_000,
    );
    assert.equal(containerStatus(h, pod, 'app')!.ready, false);
    await terminated;
    assert.deepEqual(
      eventsOf(h, pod, 'Killing').map((e) => e.message),
      ['Stopping container app'],
    );
    assert.equal(await probeCount(h, pod, 'app', 'Liveness', 'failed'), 0);
    assert.equal(containerStatus(h, pod, 'app')!.state?.terminated?.exitCode, 0);
    assert.equal(containerStatus(h, pod, 'app')!.restartCount, 0);
    assert.equal(statusOf(h, pod)!.phase, 'Succeeded');
  });
});
