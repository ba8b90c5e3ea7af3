// Run-once logic with an injected clock: the §12 retry schedule and its exact timeout error, decisions
// on status updates, terminal pods, the three wait conditions, rejection, and the overall timeout.
// The pods' statuses are scripted here (the real pod workers are exercised by the CLI tests).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '../../src/api/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { admitPod } from '../../src/kubelet/admission.js';
import type { AdmitResult, Kubelet } from '../../src/kubelet/types.js';
import { runOnce, type RunOnceReport } from '../../src/kubelet/runonce.js';

/** A Kubelet whose statuses the test sets; admission is the real admitPod. */
class ScriptedKubelet implements Kubelet {
  readonly started: string[] = [];
  readonly rejected: { name: string; reason: string; message: string }[] = [];
  statusReads = 0;
  private readonly all: Pod[] = [];
  private readonly statuses = new Map<string, PodStatus>();
  private readonly listeners = new Set<(pod: Pod, status: PodStatus) => void>();
  constructor(private readonly node = { cpuMilli: 1000, memoryBytes: 1e9 }) {}

  admit(pod: Pod): AdmitResult {
    const admitted = this.all.filter((p) => this.started.includes(p.metadata!.name!));
    return admitPod(pod, admitted, this.node);
  }
  rejectPod(pod: Pod, reason: string, message: string): void {
    this.all.push(pod);
    this.rejected.push({ name: pod.metadata!.name!, reason, message });
    this.statuses.set(pod.metadata!.uid!, { phase: 'Failed', reason, message });
  }
  startPod(pod: Pod): void {
    this.all.push(pod);
    this.started.push(pod.metadata!.name!);
    this.statuses.set(pod.metadata!.uid!, { phase: 'Pending' });
  }
  pods(): Pod[] {
    return [...this.all];
  }
  getPodStatus(uid: string): PodStatus | undefined {
    this.statusReads++;
    return this.statuses.get(uid);
  }
  async terminatePod(): Promise<void> {}
  async terminateAll(): Promise<void> {}
  onPodStatus(listener: (pod: Pod, status: PodStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async close(): Promise<void> {}

  /** Publishes a status to listeners, as the status manager does on every change. */
  publish(name: string, status: PodStatus): void {
    const pod = this.all.find((p) => p.metadata!.name === name)!;
    this.statuses.set(pod.metadata!.uid!, status);
    for (const l of this.listeners) l(pod, status);
  }
  /** Changes a status silently (seen only by a re-check). */
  set(name: string, status: PodStatus): void {
    const pod = this.all.find((p) => p.metadata!.name === name)!;
    this.statuses.set(pod.metadata!.uid!, status);
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
}

function pod(name: string, cpu?: string, containers = ['app']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: containers.map((c) => ({ name: c, image: 'busybox', command: ['sleep', '1'], ...(cpu ? { resources: { requests: { cpu } } } : {}) })) },
  };
}

const runningStatus = (...names: string[]): PodStatus => ({
  phase: 'Running',
  containerStatuses: names.map((name) => ({
    name,
    image: 'busybox',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
  })),
});

/** Starts runOnce and exposes its report once settled. */
function start(k: ScriptedKubelet, pods: Pod[], opts: Omit<Parameters<typeof runOnce>[2], 'clock'>, clock: FakeClock) {
  let report: RunOnceReport | undefined;
  const done = runOnce(k, pods, { ...opts, clock }).then((r) => (report = r));
  return {
    done,
    get report() {
      return report;
    },
  };
}

test('a pod whose containers never run fails after 10 retries on the 1 s doubling schedule', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('stuck')], { wait: 'running' }, clock);
  await clock.advance(0);
  // Checks at 0, 1, 3, 7, … 1023 s: eleven reads, the last at 1023 s.
  const checkpoints = [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023];
  assert.equal(k.statusReads, 1);
  let at = 0;
  for (let i = 1; i < checkpoints.length; i++) {
    await clock.advance((checkpoints[i]! - at) * 1000 - 1);
    assert.equal(k.statusReads, i, `no check before ${checkpoints[i]} s`);
    await clock.advance(1);
    assert.equal(k.statusReads, i + 1, `check at ${checkpoints[i]} s`);
    at = checkpoints[i]!;
  }
  await run.done;
  const r = run.report!;
  assert.equal(r.results[0]!.ok, false);
  assert.equal(r.results[0]!.error, 'timeout error: pod "stuck_default(uid-stuck)" containers not running after 10 retries');
  assert.equal(r.error, 'error running pods: [stuck_default(uid-stuck)]');
  assert.equal(k.listenerCount, 0, 'status subscription released');
  assert.equal(clock.pending(), 0, 'no timer left behind');
});

test('the retry delay is injectable', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('stuck')], { wait: 'running', retryDelayMs: 100 }, clock);
  await clock.advance(102_299);
  assert.equal(run.report, undefined);
  await clock.advance(1);
  assert.match(run.report!.results[0]!.error!, /containers not running after 10 retries$/);
});

test('running must hold for the same containers one retry delay; silent changes are seen at the next retry', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('a'), pod('b', undefined, ['x', 'y'])], { wait: 'running' }, clock);
  await clock.advance(0);
  k.publish('a', runningStatus('app'));
  k.set('b', runningStatus('x'));
  await clock.advance(999);
  assert.equal(run.report, undefined, 'a is still settling');
  k.set('b', runningStatus('x', 'y'));
  await clock.advance(1);
  assert.equal(run.report, undefined, 'b was seen running at the 1 s retry and settles now');
  await clock.advance(999);
  assert.equal(run.report, undefined);
  await clock.advance(1);
  assert.deepEqual(
    run.report!.results.map((r) => [r.pod.metadata!.name, r.ok]),
    [
      ['a', true],
      ['b', true],
    ],
  );
  assert.equal(run.report!.error, undefined);
});

test('a container caught in a short run of a crash loop is not taken for running', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('crasher')], { wait: 'running', retryDelayMs: 100 }, clock);
  await clock.advance(0);
  const crashing = (restartCount: number): PodStatus => ({
    phase: 'Running',
    // Between its runs, before any back-off (CrashLoopBackOff would fail the wait at once).
    containerStatuses: [{ name: 'app', image: 'busybox', imageID: '', ready: false, restartCount, state: { terminated: { exitCode: 1, reason: 'Error' } } }],
  });
  const up = (restartCount: number): PodStatus => {
    const s = runningStatus('app');
    s.containerStatuses![0]!.restartCount = restartCount;
    s.containerStatuses![0]!.containerID = `process://c${restartCount}`;
    return s;
  };
  // Every run lasts 20 ms: never long enough to settle, whichever status is looked at.
  for (let n = 0; n < 40; n++) {
    k.publish('crasher', up(n));
    await clock.advance(20);
    k.publish('crasher', crashing(n + 1));
    await clock.advance(30);
  }
  assert.equal(run.report, undefined);
  // A run that lasts.
  k.publish('crasher', up(41));
  await clock.advance(100);
  assert.equal(run.report!.results[0]!.ok, true);

  // The same, when the restarted instance appears without a status update in between.
  const clock2 = new FakeClock();
  const k2 = new ScriptedKubelet();
  const run2 = start(k2, [pod('crasher')], { wait: 'running', retryDelayMs: 100 }, clock2);
  await clock2.advance(0);
  k2.publish('crasher', up(0));
  await clock2.advance(50);
  k2.set('crasher', up(1));
  await clock2.advance(50);
  assert.equal(run2.report, undefined, 'another instance than the one seen first: settle again');
  await clock2.advance(100);
  assert.equal(run2.report!.results[0]!.ok, true);
});

test('the last retry gives a pod that just came up its settle check', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('late')], { wait: 'running', retryDelayMs: 10 }, clock);
  await clock.advance(10229);
  k.set('late', runningStatus('app'));
  await clock.advance(1);
  assert.equal(run.report, undefined);
  await clock.advance(10);
  assert.equal(run.report!.results[0]!.ok, true);
});

test('terminal phases are decided at once', async () => {
  const cases: { wait: 'running' | 'ready' | 'completed'; status: PodStatus; ok: boolean; error?: string }[] = [
    {
      wait: 'running',
      status: { phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' },
      ok: false,
      error: 'pod "p_default(uid-p)" failed: DeadlineExceeded: Pod was active on the node longer than the specified deadline',
    },
    { wait: 'running', status: { phase: 'Failed' }, ok: false, error: 'pod "p_default(uid-p)" failed' },
    { wait: 'running', status: { phase: 'Succeeded' }, ok: true },
    { wait: 'ready', status: { phase: 'Succeeded' }, ok: true },
    { wait: 'completed', status: { phase: 'Succeeded' }, ok: true },
    { wait: 'completed', status: { phase: 'Failed' }, ok: false, error: 'pod "p_default(uid-p)" failed' },
  ];
  for (const c of cases) {
    const clock = new FakeClock();
    const k = new ScriptedKubelet();
    const run = start(k, [pod('p')], { wait: c.wait }, clock);
    await clock.advance(0);
    k.publish('p', c.status);
    await clock.advance(0);
    assert.ok(run.report, `${c.wait}/${c.status.phase}: decided without waiting for a retry`);
    assert.equal(run.report.results[0]!.ok, c.ok);
    assert.equal(run.report.results[0]!.error, c.error);
  }
});

test('--wait=ready needs the Ready condition; --wait=completed a terminal phase', async () => {
  {
    const clock = new FakeClock();
    const k = new ScriptedKubelet();
    const run = start(k, [pod('web')], { wait: 'ready', retryDelayMs: 10 }, clock);
    await clock.advance(0);
    k.publish('web', { ...runningStatus('app'), conditions: [{ type: 'Ready', status: 'False' }] });
    await clock.advance(5);
    assert.equal(run.report, undefined, 'running is not enough');
    k.publish('web', { ...runningStatus('app'), conditions: [{ type: 'Ready', status: 'True' }] });
    await clock.advance(10);
    assert.equal(run.report!.results[0]!.ok, true);
  }
  {
    const clock = new FakeClock();
    const k = new ScriptedKubelet();
    const run = start(k, [pod('web')], { wait: 'ready', retryDelayMs: 10 }, clock);
    await clock.advance(0);
    k.publish('web', runningStatus('app'));
    await clock.advance(10230);
    assert.equal(run.report!.results[0]!.error, 'timeout error: pod "web_default(uid-web)" not ready after 10 retries');
  }
  {
    const clock = new FakeClock();
    const k = new ScriptedKubelet();
    const run = start(k, [pod('job')], { wait: 'completed', retryDelayMs: 10 }, clock);
    await clock.advance(0);
    k.publish('job', { ...runningStatus('app'), conditions: [{ type: 'Ready', status: 'True' }] });
    await clock.advance(5);
    assert.equal(run.report, undefined, 'running and ready is not completed');
    k.publish('job', { phase: 'Succeeded' });
    await clock.advance(0);
    assert.equal(run.report!.results[0]!.ok, true);
  }
});

test('admission in input order: a rejected pod is reported Failed and not started', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet({ cpuMilli: 1000, memoryBytes: 1e9 });
  const run = start(k, [pod('first', '600m'), pod('second', '600m'), pod('third', '400m')], { wait: 'running' }, clock);
  await clock.advance(0);
  assert.deepEqual(k.started, ['first', 'third']);
  assert.deepEqual(k.rejected, [
    { name: 'second', reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000" },
  ]);
  k.publish('first', runningStatus('app'));
  k.publish('third', runningStatus('app'));
  await clock.advance(1000);
  const r = run.report!;
  assert.deepEqual(
    r.results.map((x) => [x.pod.metadata!.name, x.ok]),
    [
      ['first', true],
      ['second', false],
      ['third', true],
    ],
  );
  assert.deepEqual(r.results[1]!.rejected, { reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000" });
  assert.equal(r.error, 'error running pods: [second_default(uid-second)]');
});

test('--timeout bounds the wait before the retries run out', async () => {
  const clock = new FakeClock();
  const k = new ScriptedKubelet();
  const run = start(k, [pod('slow'), pod('fast')], { wait: 'running', timeoutMs: 5000, timeoutText: '5s' }, clock);
  await clock.advance(0);
  k.publish('fast', runningStatus('app'));
  await clock.advance(4999);
  assert.equal(run.report, undefined);
  await clock.advance(1);
  assert.deepEqual(
    run.report!.results.map((x) => [x.ok, x.error]),
    [
      [false, 'timed out after 5s waiting for pod "slow_default(uid-slow)" to be running'],
      [true, undefined],
    ],
  );
  assert.equal(clock.pending(), 0);
});

test('auto resolves per pod: Never/OnFailure to completed, a readiness probe to ready, else running', async () => {
  const { resolveWait } = await import('../../src/kubelet/runonce.js');
  const base = pod('p');
  assert.equal(resolveWait(base, 'auto'), 'running');
  assert.equal(resolveWait({ ...base, spec: { ...base.spec!, restartPolicy: 'Never' } }, 'auto'), 'completed');
  assert.equal(resolveWait({ ...base, spec: { ...base.spec!, restartPolicy: 'OnFailure' } }, 'auto'), 'completed');
  const probed = { ...base, spec: { ...base.spec!, containers: [{ ...base.spec!.containers[0]!, readinessProbe: { exec: { command: ['true'] } } }] } };
  assert.equal(resolveWait(probed, 'auto'), 'ready');
  assert.equal(resolveWait(probed, 'running'), 'running');
});

test('a pod that cannot succeed fails at once under every mode, the kubelet rule (running) included', async () => {
  const { cannotSucceed } = await import('../../src/kubelet/runonce.js');
  const waiting = (reason: string, message: string): PodStatus => ({
    phase: 'Pending',
    containerStatuses: [{ name: 'app', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }],
  });
  assert.equal(
    cannotSucceed(waiting('CreateContainerConfigError', 'configmap "nope" not found')),
    'container app: CreateContainerConfigError: configmap "nope" not found',
  );
  assert.equal(cannotSucceed(waiting('ContainerCreating', '')), undefined);

  for (const [wait, decidedEarly] of [
    ['auto', true],
    ['running', true],
    ['ready', true],
  ] as const) {
    const clock = new FakeClock(0);
    const k = new ScriptedKubelet();
    const done = runOnce(k, [pod('cfg')], { wait, clock, timeoutMs: 60_000 });
    await Promise.resolve();
    k.publish('cfg', waiting('CreateContainerConfigError', 'configmap "nope" not found'));
    let report: RunOnceReport | undefined;
    void done.then((r) => (report = r));
    await new Promise((r) => setImmediate(r));
    assert.equal(report !== undefined, decidedEarly, `--wait=${wait}`);
    if (report) assert.match(report.results[0]!.error!, /cannot become (running|ready): container app: CreateContainerConfigError: configmap "nope" not found/);
    await clock.advance(60_000);
    await done;
  }
});

test('progress lines name the awaited pods and why, every progressEveryMs', async () => {
  const clock = new FakeClock(0);
  const k = new ScriptedKubelet();
  const lines: string[] = [];
  const done = runOnce(k, [pod('slow')], { wait: 'auto', clock, timeoutMs: 10_000, progressEveryMs: 2000, onProgress: (l) => lines.push(...l) });
  await clock.advance(2000);
  assert.deepEqual(lines, ['waiting for pod/slow to be running: Pending']);
  await clock.advance(10_000);
  await done;
});
