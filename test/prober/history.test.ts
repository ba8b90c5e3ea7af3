// The probe history on the real clock: a ProberManager with the built-in HTTP and exec probes against
// real servers and processes, 1 s periods; the test plays the status manager. What is checked is
// what `podvisor probes` serves: results, streaks against thresholds, effects, output, bounds.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Container, Pod, PodStatus } from '../../src/api/types.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { ProberManager } from '../../src/prober/manager.js';
import {
  HISTORY_BYTES_PER_CONTAINER,
  HISTORY_OUTPUT_BYTES,
  HISTORY_PER_WORKER,
  ProbeHistory,
  REMOVED_PODS_KEPT,
  truncateOutput,
  type ProbeHistoryEntry,
} from '../../src/prober/history.js';
import { execOnlyRuntime } from './exec-runtime.js';
import { RecordingRecorder, TestStatusProvider } from './helpers.js';
import { waitFor } from '../fixtures/wait.js';

const cleanups: (() => void)[] = [];
after(() => cleanups.forEach((c) => c()));

function setup(containers: Container[], started = true) {
  const clock = new RealClock();
  const provider = new TestStatusProvider();
  const recorder = new RecordingRecorder();
  const manager = new ProberManager({ clock, logger: silentLogger, runtime: execOnlyRuntime(), recorder, statusProvider: provider });
  cleanups.push(() => manager.close());
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: `uid-${Math.random()}` }, spec: { containers } };
  const status: PodStatus = {
    phase: 'Running',
    podIP: '127.0.0.1',
    containerStatuses: containers.map((c) => ({
      name: c.name,
      containerID: 'process://abc',
      image: 'img',
      imageID: '',
      ready: false,
      restartCount: 0,
      started,
      state: { running: { startedAt: new Date().toISOString() } },
    })),
  };
  provider.set(pod, status);
  const uid = pod.metadata!.uid!;
  const items = () => manager.history!.entries(uid);
  return { manager, provider, recorder, pod, status, uid, items };
}

/** An HTTP server answering with the status (and body) the test sets. */
async function switchableServer(): Promise<{ port: number; set(code: number, body?: string): void }> {
  let code = 200;
  let body = 'ok';
  const server = http.createServer((_req, res) => {
    res.writeHead(code);
    res.end(body);
  });
  cleanups.push(() => (server.closeAllConnections(), server.close()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    set(c, b = 'ok') {
      code = c;
      body = b;
    },
  };
}

const shape = (e: ProbeHistoryEntry) => `${e.probe} ${e.result} ${e.streak}/${e.threshold} ${e.effect || '-'}`;

describe('probe history', { concurrency: true }, () => {
  it('a readiness streak reaches its threshold (NotReady) and recovers (Ready), with the probe output', async () => {
    const srv = await switchableServer();
    const t = setup([{ name: 'web', readinessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1, failureThreshold: 3 } }]);
    t.manager.addPod(t.pod);
    await waitFor('the first readiness Success', () => t.items().length >= 1);
    srv.set(503);
    await waitFor('readiness NotReady in the history', () => t.items().some((e) => e.effect === 'NotReady'));
    srv.set(200);
    await waitFor('readiness Ready again', () => t.items().filter((e) => e.effect === 'Ready').length >= 2);
    const seen = t.items().map(shape);
    const firstFail = seen.indexOf('readiness Failure 1/3 -');
    assert.ok(firstFail > 0, seen.join('\n'));
    assert.deepEqual(seen.slice(firstFail, firstFail + 4), [
      'readiness Failure 1/3 -',
      'readiness Failure 2/3 -',
      'readiness Failure 3/3 NotReady',
      'readiness Success 1/1 Ready',
    ]);
    assert.equal(seen[0], 'readiness Success 1/1 Ready');
    const failure = t.items()[firstFail]!;
    assert.equal(failure.output, 'HTTP probe failed with statuscode: 503');
    assert.equal(failure.container, 'web');
    assert.ok(failure.latencyMs >= 0 && failure.latencyMs < 1000);
    assert.ok(!Number.isNaN(Date.parse(failure.time)));
    // The kubelet's events are unchanged: one Unhealthy per failed probe.
    assert.equal(t.recorder.events.filter((e) => e.reason === 'Unhealthy').length, 3);
    // Oldest first.
    const times = t.items().map((e) => Date.parse(e.time));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
  });

  it('a liveness failure at its threshold is a Restart; the new container goes on in the same history', async () => {
    const srv = await switchableServer();
    srv.set(500);
    const t = setup([{ name: 'app', livenessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1, failureThreshold: 2 } }]);
    t.manager.addPod(t.pod);
    await waitFor('a liveness Restart', () => t.items().some((e) => e.effect === 'Restart'));
    assert.deepEqual(t.items().map(shape), ['liveness Failure 1/2 -', 'liveness Failure 2/2 Restart']);
    // The runtime restarts the container: a new ID, probed again from a fresh streak.
    srv.set(200);
    const next = structuredClone(t.status);
    next.containerStatuses![0]!.containerID = 'process://abc2';
    next.containerStatuses![0]!.restartCount = 1;
    t.provider.set(t.pod, next);
    await waitFor('a result of the new container', () => t.items().length >= 3);
    assert.deepEqual(t.items().map(shape).slice(0, 3), ['liveness Failure 1/2 -', 'liveness Failure 2/2 Restart', 'liveness Success 1/1 -']);
  });

  it('a startup probe gates the others: no readiness result before Started', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'podvisor-history-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'started');
    const srv = await switchableServer();
    const t = setup(
      [
        {
          name: 'slow',
          startupProbe: { exec: { command: ['cat', file] }, periodSeconds: 1, failureThreshold: 30 },
          readinessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1 },
        },
      ],
      false,
    );
    t.manager.addPod(t.pod);
    await waitFor('two failed startup probes', () => t.items().filter((e) => e.probe === 'startup').length >= 2);
    assert.ok(t.items().every((e) => e.probe === 'startup' && e.result === 'Failure' && e.effect === ''));
    assert.match(t.items()[0]!.output, /No such file or directory/);
    writeFileSync(file, 'yes');
    await waitFor('startup Started', () => t.items().some((e) => e.effect === 'Started'));
    assert.equal(t.items().filter((e) => e.probe === 'readiness').length, 0);
    // The status manager marks the container started: readiness probes begin.
    const next = structuredClone(t.status);
    next.containerStatuses![0]!.started = true;
    t.provider.set(t.pod, next);
    await waitFor('a readiness result', () => t.items().some((e) => e.probe === 'readiness'));
    const started = t.items().findIndex((e) => e.effect === 'Started');
    const firstReadiness = t.items().findIndex((e) => e.probe === 'readiness');
    assert.ok(started < firstReadiness);
  });

  it('keeps at most 1 KiB of output per result', async () => {
    const srv = await switchableServer();
    srv.set(200, 'x'.repeat(5000));
    const t = setup([{ name: 'big', readinessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1 } }]);
    t.manager.addPod(t.pod);
    await waitFor('one readiness result', () => t.items().length >= 1);
    assert.equal(t.items()[0]!.output.length, HISTORY_OUTPUT_BYTES);
    assert.equal(truncateOutput('é'.repeat(1000)).length, 512); // never half a character
  });

  it('a removed pod keeps its history for a while; another pod (a new UID) starts empty', async () => {
    const srv = await switchableServer();
    const c: Container = { name: 'web', readinessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1 } };
    const t = setup([c]);
    t.manager.addPod(t.pod);
    await waitFor('one readiness result', () => t.items().length >= 1);
    t.manager.removePod(t.pod);
    assert.ok(t.items().length >= 1);
    assert.deepEqual(t.manager.history!.entries('some-other-uid'), []);
  });

  it('keeps no history when asked not to', () => {
    const m = new ProberManager({
      clock: new RealClock(),
      logger: silentLogger,
      runtime: execOnlyRuntime(),
      recorder: new RecordingRecorder(),
      statusProvider: new TestStatusProvider(),
      keepHistory: false,
    });
    cleanups.push(() => m.close());
    assert.equal(m.history, undefined);
  });

  it('the watch hears each new result', async () => {
    const srv = await switchableServer();
    const t = setup([{ name: 'web', readinessProbe: { httpGet: { path: '/', port: srv.port }, periodSeconds: 1 } }]);
    const heard: ProbeHistoryEntry[] = [];
    const stop = t.manager.history!.watch(t.uid, (e) => heard.push(e));
    t.manager.addPod(t.pod);
    await waitFor('two results heard', () => heard.length >= 2);
    stop();
    const n = heard.length;
    await waitFor('another result kept', () => t.items().length > n + 1);
    assert.equal(heard.length, n);
  });
});

describe('ProbeHistory bounds', () => {
  const entry = (probe: 'liveness' | 'readiness', i: number, output = ''): ProbeHistoryEntry => ({
    container: 'c',
    probe,
    time: new Date(1_700_000_000_000 + i).toISOString(),
    result: 'Success',
    latencyMs: 1,
    output,
    streak: i,
    threshold: 1,
    effect: '',
  });

  it('keeps the last 100 results per probe', () => {
    const h = new ProbeHistory();
    for (let i = 0; i < 150; i++) h.record('u', entry('liveness', i));
    for (let i = 0; i < 10; i++) h.record('u', entry('readiness', 1000 + i));
    const items = h.entries('u');
    assert.equal(items.filter((e) => e.probe === 'liveness').length, HISTORY_PER_WORKER);
    assert.equal(items.filter((e) => e.probe === 'readiness').length, 10);
    assert.equal(items[0]!.streak, 50);
  });

  it('bounds the output kept per container', () => {
    const h = new ProbeHistory();
    for (let i = 0; i < 90; i++) h.record('u', entry(i % 2 ? 'liveness' : 'readiness', i, 'y'.repeat(1024)));
    const bytes = h.entries('u').reduce((n, e) => n + e.output.length, 0);
    assert.ok(bytes <= HISTORY_BYTES_PER_CONTAINER, String(bytes));
    assert.equal(h.entries('u').at(-1)!.streak, 89);
  });

  it('forgets the oldest removed pods', () => {
    const h = new ProbeHistory();
    for (let i = 0; i <= REMOVED_PODS_KEPT; i++) {
      h.record(`u${i}`, entry('liveness', i));
      h.podRemoved(`u${i}`);
    }
    assert.deepEqual(h.entries('u0'), []);
    assert.equal(h.entries(`u${REMOVED_PODS_KEPT}`).length, 1);
  });
});
