// The whole prober on the real clock with 1 s periods: a ProberManager, the built-in probe kinds, real
// processes and real servers written here. The pod worker is not involved: the test plays the status
// manager, so what is checked is what the prober publishes into its result caches.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Container, Pod, PodStatus } from '../../src/api/types.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { ProberManager, type ProberManagerOptions } from '../../src/prober/manager.js';
import type { ProbeResult } from '../../src/prober/types.js';
import { execOnlyRuntime } from './exec-runtime.js';
import { RecordingRecorder, TestStatusProvider } from './helpers.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const cleanups: (() => void)[] = [];
after(() => cleanups.forEach((c) => c()));

const ID = 'process://abc';

function setup(c: Container, opts: { started?: boolean; manager?: Partial<ProberManagerOptions> } = {}) {
  const clock = new RealClock();
  const provider = new TestStatusProvider();
  const recorder = new RecordingRecorder();
  const runtime = execOnlyRuntime();
  const manager = new ProberManager({ clock, logger: silentLogger, runtime, recorder, statusProvider: provider, ...opts.manager });
  cleanups.push(() => manager.close());
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: `uid-${Math.random()}` }, spec: { containers: [c] } };
  const status: PodStatus = {
    phase: 'Running',
    podIP: '127.0.0.1',
    containerStatuses: [
      {
        name: c.name,
        containerID: ID,
        image: 'img',
        imageID: '',
        ready: false,
        restartCount: 0,
        started: opts.started ?? true,
        state: { running: { startedAt: new Date().toISOString() } },
      },
    ],
  };
  provider.set(pod, status);
  const history: Record<'Liveness' | 'Readiness' | 'Startup', ProbeResult[]> = { Liveness: [], Readiness: [], Startup: [] };
  manager.liveness.onUpdate((u) => history.Liveness.push(u.result));
  manager.readiness.onUpdate((u) => history.Readiness.push(u.result));
  manager.startup.onUpdate((u) => history.Startup.push(u.result));
  return { manager, provider, recorder, runtime, pod, status, history };
}

async function listenHttp(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  cleanups.push(() => (server.closeAllConnections(), server.close()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as net.AddressInfo).port;
}

describe('probing on the real clock', { concurrency: true }, () => {
  it('an exec liveness probe on a file that disappears publishes Failure', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'podvisor-probe-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'healthy');
    writeFileSync(file, 'ok');
    const t = setup({ name: 'app', livenessProbe: { exec: { command: ['cat', file] }, periodSeconds: 1, failureThreshold: 1 } });
    t.manager.addPod(t.pod);
    await waitFor('two successful probes', () => t.runtime.calls.length >= 2);
    assert.equal(t.manager.liveness.get(ID), 'Success');
    rmSync(file);
    await waitFor('liveness Failure', () => t.manager.liveness.get(ID) === 'Failure');
    assert.deepEqual(t.history.Liveness, ['Success', 'Failure']);
    assert.equal(t.recorder.events.at(-1)!.message, `Liveness probe failed: cat: ${file}: No such file or directory\n`);
  });

  it('an HTTP liveness probe answering 500 publishes Failure after the threshold', async () => {
    const port = await listenHttp((_req, res) => res.writeHead(500).end('broken'));
    const t = setup({ name: 'app', livenessProbe: { httpGet: { port, path: '/healthz' }, periodSeconds: 1, failureThreshold: 2 } });
    t.manager.addPod(t.pod);
    await waitFor('liveness Failure', () => t.manager.liveness.get(ID) === 'Failure');
    const unhealthy = t.recorder.events.filter((e) => e.reason === 'Unhealthy');
    assert.ok(unhealthy.length >= 2, 'one event per failed probe');
    assert.equal(unhealthy[0]!.message, 'Liveness probe failed: HTTP probe failed with statuscode: 500');
  });

  it('a TCP liveness probe on a listening port never fails', async () => {
    const server = net.createServer((s) => s.on('error', () => {}));
    cleanups.push(() => server.close());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const t = setup({ name: 'app', livenessProbe: { tcpSocket: { port }, periodSeconds: 1, failureThreshold: 1 } });
    t.manager.addPod(t.pod);
    await waitFor('three successful probes', async () => /result="successful".* ([3-9]|\d\d)\n/.test(await t.manager.registry.metrics()));
    assert.deepEqual(t.history.Liveness, ['Success']);
    assert.equal(t.recorder.events.length, 0);
  });

  it('a gRPC health server SERVING never fails; a closed gRPC port does', async () => {
    const server = new grpc.Server();
    new HealthImplementation({ '': 'SERVING' }).addToServer(server);
    cleanups.push(() => server.forceShutdown());
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    const closed = await new Promise<number>((res) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => res(p));
      });
    });
    const serving = setup({ name: 'app', livenessProbe: { grpc: { port }, periodSeconds: 1, failureThreshold: 1 } });
    const dead = setup({ name: 'app', livenessProbe: { grpc: { port: closed }, periodSeconds: 1, failureThreshold: 1 } });
    serving.manager.addPod(serving.pod);
    dead.manager.addPod(dead.pod);
    await waitFor('closed port: liveness Failure', () => dead.manager.liveness.get(ID) === 'Failure');
    assert.match(
      dead.recorder.events[0]!.message,
      /^Liveness probe failed: timeout: failed to connect service "127\.0\.0\.1:\d+" within 1s: context deadline exceeded$/,
    );
    await waitFor('three SERVING probes', async () => /result="successful".* ([3-9]|\d\d)\n/.test(await serving.manager.registry.metrics()));
    assert.deepEqual(serving.history.Liveness, ['Success']);
  });

  it('a failing readiness probe keeps the container not ready and never touches liveness', async () => {
    const t = setup({ name: 'app', readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 } });
    t.manager.addPod(t.pod);
    await waitFor('three readiness probes', () => t.runtime.calls.length >= 3);
    assert.deepEqual(t.history.Readiness, ['Failure']);
    assert.equal(t.manager.liveness.get(ID), undefined);
    const status = structuredClone(t.status);
    t.manager.updatePodStatus(t.pod, status);
    assert.equal(status.containerStatuses![0]!.ready, false);
  });

  it('a startup probe holds liveness off, and a failing one publishes Failure', async () => {
    const t = setup(
      {
        name: 'app',
        startupProbe: { exec: { command: ['sh', '-c', 'exit 1'] }, periodSeconds: 1, failureThreshold: 3 },
        livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 1 },
      },
      { started: false },
    );
    t.manager.addPod(t.pod);
    await waitFor('startup Failure', () => t.manager.startup.get(ID) === 'Failure');
    assert.deepEqual(t.history.Startup, ['Unknown', 'Failure']);
    const runs = (cmd: string) => t.runtime.calls.filter((c) => c.cmd[0] === cmd).length;
    await holdsFor('no startup probe after the published failure, no liveness probe', () => runs('sh') === 3 && runs('true') === 0, 1500);
    const startupRuns = t.runtime.calls.filter((c) => c.cmd[0] === 'sh').length;
    assert.equal(startupRuns, 3, 'held after the published failure');
    assert.equal(t.runtime.calls.filter((c) => c.cmd[0] === 'true').length, 0, 'liveness never ran');
  });

  it('readiness follows startup success at once, even with a 30 s readiness period', async () => {
    const t = setup(
      {
        name: 'app',
        startupProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 3 },
        readinessProbe: { exec: { command: ['echo', 'ready'] }, periodSeconds: 30 },
      },
      { started: false, manager: { random: () => 0, spreadPhases: false } },
    );
    // Play the status manager: a startup result becomes `started`, then a status is generated.
    t.manager.startup.onUpdate((u) => {
      if (u.result !== 'Success') return;
      t.status.containerStatuses![0]!.started = true;
      t.manager.updatePodStatus(t.pod, structuredClone(t.status));
    });
    t.manager.addPod(t.pod);
    await waitFor('readiness Success', () => t.manager.readiness.get(ID) === 'Success', 10_000);
    assert.deepEqual(t.history.Startup, ['Unknown', 'Success']);
    assert.equal(t.runtime.calls.filter((c) => c.cmd[0] === 'echo').length, 1, 'one readiness probe, the triggered one');
  });

  it('while the pod terminates readiness goes on and liveness stops quietly', async () => {
    let ready = true;
    const port = await listenHttp((_req, res) => res.writeHead(ready ? 200 : 503).end());
    const t = setup({
      name: 'app',
      readinessProbe: { httpGet: { port, path: '/ready' }, periodSeconds: 1, failureThreshold: 1 },
      livenessProbe: { httpGet: { port, path: '/live' }, periodSeconds: 1, failureThreshold: 1 },
    });
    t.manager.addPod(t.pod);
    await waitFor('ready', () => t.manager.readiness.get(ID) === 'Success');
    // Deletion begins: the app starts failing readiness on SIGTERM, and would fail liveness too.
    t.provider.pods.set(t.pod.metadata!.uid!, { ...t.pod, metadata: { ...t.pod.metadata, deletionTimestamp: new Date().toISOString() } });
    t.manager.stopLivenessAndStartup(t.pod);
    ready = false;
    await waitFor('not ready while terminating', () => t.manager.readiness.get(ID) === 'Failure');
    assert.equal(t.manager.getWorker(t.pod.metadata!.uid!, 'app', 'Liveness'), undefined);
    assert.ok(t.manager.getWorker(t.pod.metadata!.uid!, 'app', 'Readiness'));
    assert.ok(!t.history.Liveness.includes('Failure'));
  });
});
