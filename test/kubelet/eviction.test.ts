// The eviction manager under DiskPressure: the ranking (over requests, priority, usage over
// requests) and upstream's message; the housekeeping passes on an injected clock and disk (reclaim
// first, one pod per pass, critical pods spared, the pressure transition period); and a kubelet over
// the process runtime evicting its log-heavy pod (Failed, Evicted, DisruptionTarget, the event)
// while the quiet one runs on, or reclaiming a finished pod's container and log instead.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { defaultPod } from '../../src/api/defaults.js';
import { DiskPressureObserver, type DiskObservation } from '../../src/kubelet/disk-pressure.js';
import { EvictionManager } from '../../src/kubelet/eviction-manager.js';
import { binarySI, evictionMessage, rankForEviction, type EvictionCandidate } from '../../src/kubelet/eviction-ranking.js';
import type { PodDiskUsage } from '../../src/kubelet/pod-disk-usage.js';
import { EventStore } from '../../src/events/store.js';
import { agentSettingsOf } from '../../src/agent/settings.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { eventsOf, newHarness, sh, statusOf, waitFor } from './harness.js';

const Mi = 1024 ** 2;

function apiPod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return defaultPod(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { ...spec, containers } },
    { nodeName: 'test-node', source: 'api' },
  );
}

const usage = (bytes: number, logs = bytes): PodDiskUsage => ({ bytes, inodes: 10, containers: [{ name: 'main', logsBytes: logs }] });
const withRequest = (q: string): Container => ({ name: 'main', image: 'busybox', resources: { requests: { 'ephemeral-storage': q } } });
const plain: Container = { name: 'main', image: 'busybox' };

test('ranking: pods over their ephemeral-storage requests first, then lower priority, then most usage over requests', () => {
  const c = (name: string, container: Container, bytes: number, priority = 0): EvictionCandidate => ({
    pod: apiPod(name, [container], { priority }),
    usage: usage(bytes),
  });
  const within = c('within', withRequest('100Mi'), 50 * Mi);
  const overSmall = c('over-small', withRequest('10Mi'), 20 * Mi);
  const overLarge = c('over-large', plain, 30 * Mi);
  const overHighPriority = c('over-high-priority', plain, 500 * Mi, 1000);
  const unmeasured: EvictionCandidate = { pod: apiPod('unmeasured', [plain]) };
  const ranked = rankForEviction([within, overHighPriority, overSmall, unmeasured, overLarge], 'ephemeral-storage');
  assert.deepEqual(
    ranked.map((r) => r.pod.metadata!.name),
    ['unmeasured', 'over-large', 'over-small', 'over-high-priority', 'within'],
  );
});

test("the eviction message in the kubelet's words: resource, threshold, what was available, containers over their requests", () => {
  const pod = apiPod('noisy', [plain, { ...withRequest('1Gi'), name: 'side' }]);
  const candidate: EvictionCandidate = {
    pod,
    usage: {
      bytes: 13 * Mi,
      inodes: 4,
      containers: [
        { name: 'main', logsBytes: 12 * Mi },
        { name: 'side', logsBytes: Mi },
      ],
    },
  };
  assert.equal(
    evictionMessage('ephemeral-storage', candidate, { quantity: 8 * Mi, available: 4 * Mi + 4096 }),
    'The node was low on resource: ephemeral-storage. Threshold quantity: 8Mi, available: 4100Ki. ' +
      'Container main was using 12Mi, request is 0, has larger consumption of ephemeral-storage. ',
  );
  assert.equal(
    evictionMessage('inodes', candidate, { quantity: 50, available: 12000 }),
    'The node was low on resource: inodes. Threshold quantity: 50, available: 12k. ',
  );
  assert.deepEqual([binarySI(1023), binarySI(1024), binarySI(1536), binarySI(3 * 1024 ** 3)], ['1023', '1Ki', '1536', '3Gi']);
});

/** A disk whose free space the test sets. */
function fakeDisk(free: { bytes: number }): (dir: string) => DiskObservation {
  return () => ({ capacityBytes: 100 * Mi, availableBytes: free.bytes, inodes: 1000, inodesFree: 900 });
}

test('housekeeping: reclaim first, then one pod per pass, the critical spared; DiskPressure outlasts the pressure by the transition period', async () => {
  const clock = new FakeClock();
  const free = { bytes: 50 * Mi };
  const disk = new DiskPressureObserver('/nowhere', { available: { bytes: 10 * Mi }, pressureTransitionPeriodMs: 60_000 }, fakeDisk(free));
  const critical = apiPod('critical', [plain], { priority: 2_000_001_000 });
  const big = apiPod('big', [plain]);
  const small = apiPod('small', [plain]);
  const sizes = new Map([
    [critical, 90 * Mi],
    [big, 40 * Mi],
    [small, 5 * Mi],
  ]);
  const active = new Set([critical, big, small]);
  const evicted: Array<{ name: string; grace: number; message: string }> = [];
  let reclaims = 0;
  let reclaimFrees = 0;
  const events = new EventStore({ clock, host: 'test-node' });
  const manager = new EvictionManager({
    clock,
    logger: silentLogger,
    recorder: events,
    nodeName: 'test-node',
    disk,
    activePods: () => [...active],
    measure: async (pod) => usage(sizes.get(pod)!),
    reclaim: async () => {
      reclaims++;
      free.bytes += reclaimFrees;
    },
    evictPod: async (pod, grace, message) => {
      evicted.push({ name: pod.metadata!.name!, grace, message });
      active.delete(pod);
    },
    podCleanedUp: (pod) => !active.has(pod),
    isCritical: (pod) => (pod.spec?.priority ?? 0) >= 2_000_000_000,
  });
  assert.deepEqual(manager.conditions(), []);
  manager.start();
  try {
    await clock.advance(10_000);
    assert.equal(reclaims, 0, 'no pressure: nothing reclaimed');

    // Under the threshold, and reclaiming frees enough: no eviction.
    free.bytes = 5 * Mi;
    reclaimFrees = 20 * Mi;
    await clock.advance(10_000);
    assert.equal(reclaims, 1);
    assert.equal(evicted.length, 0);
    assert.deepEqual(manager.conditions(), ['DiskPressure'], 'the condition holds after the reclaim');
    assert.ok(events.list().some((e) => e.reason === 'EvictionThresholdMet' && e.message === 'Attempting to reclaim ephemeral-storage'));

    // Reclaiming is not enough: the largest non-critical pod goes, with the hard threshold's grace period.
    free.bytes = 4 * Mi;
    reclaimFrees = 0;
    await clock.advance(10_000);
    assert.deepEqual(
      evicted.map((e) => [e.name, e.grace]),
      [['big', 1]],
    );
    assert.equal(
      evicted[0]!.message,
      'The node was low on resource: ephemeral-storage. Threshold quantity: 10Mi, available: 4Mi. Container main was using 40Mi, request is 0, has larger consumption of ephemeral-storage. ',
    );
    // The next pass waits for the evicted pod's cleanup (polled each second), then evicts one more.
    await clock.advance(999);
    assert.equal(evicted.length, 1, 'one pod per pass');
    await clock.advance(1);
    assert.deepEqual(
      evicted.map((e) => e.name),
      ['big', 'small'],
      'the critical pod is never evicted',
    );

    // The pressure ends: DiskPressure stays on for the transition period, then goes.
    free.bytes = 50 * Mi;
    await clock.advance(20_000);
    assert.deepEqual(manager.conditions(), ['DiskPressure']);
    await clock.advance(41_000);
    assert.deepEqual(manager.conditions(), []);
    assert.deepEqual(
      evicted.map((e) => e.name),
      ['big', 'small'],
    );
  } finally {
    await manager.stop();
  }
  assert.equal(clock.pending(), 0, 'stopped: no timer left');
});

test('a kubelet evicts its log-heavy pod under DiskPressure: Failed, Evicted, DisruptionTarget, the event; the quiet pod runs on', async () => {
  const noisy = apiPod('noisy', [sh('main', 'head -c 3000000 /dev/zero | tr "\\0" x; echo; exec sleep 300')], { terminationGracePeriodSeconds: 30 });
  const quiet = apiPod('quiet', [sh('main', 'exec sleep 300')]);
  // The disk is short of space while the noisy pod's log (over 1 MiB) is there (a real file system's figure would
  // also move with whatever else the machine writes).
  let dir = '';
  const logOf = () => join(dir, 'pods', `default_noisy_${noisy.metadata!.uid}`, 'main');
  const read = (): DiskObservation => {
    const logged = existsSync(logOf()) ? readdirSync(logOf()).reduce((sum, f) => sum + statSync(join(logOf(), f)).size, 0) : 0;
    const full = logged > Mi && h.kubelet.getPodStatus(noisy.metadata!.uid!)?.phase !== 'Failed';
    return { capacityBytes: 100 * Mi, availableBytes: full ? 4 * Mi : 60 * Mi, inodes: 0, inodesFree: 0 };
  };
  const h = await newHarness({
    diskPressure: new DiskPressureObserver('.', { available: { bytes: 8 * Mi }, pressureTransitionPeriodMs: 2_000 }, read),
    evictionMonitoringIntervalMs: 100,
  });
  dir = h.dir;
  try {
    h.kubelet.startPod(quiet);
    await waitFor('the quiet pod running', () => statusOf(h, quiet)?.containerStatuses?.[0]?.state?.running, 30_000);
    h.kubelet.startPod(noisy);
    const status = await waitFor(
      'the noisy pod evicted',
      () => {
        const s = statusOf(h, noisy);
        return s?.phase === 'Failed' && s.containerStatuses?.[0]?.state?.terminated && s;
      },
      60_000,
    );
    assert.equal(status.reason, 'Evicted');
    assert.match(
      status.message ?? '',
      /^The node was low on resource: ephemeral-storage\. Threshold quantity: 8Mi, available: 4Mi\. Container main was using \d+(Ki|Mi)?, request is 0, has larger consumption of ephemeral-storage\. $/,
    );
    const disruption = status.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([disruption?.status, disruption?.reason], ['True', 'TerminationByKubelet']);
    const evicted = eventsOf(h, noisy, 'Evicted');
    assert.equal(evicted.length, 1);
    assert.equal(evicted[0]!.type, 'Warning');
    assert.equal(evicted[0]!.message, status.message);
    // Killed with the eviction's 1 s grace, not the pod's 30 s: the whole eviction took far less.
    assert.equal(h.kubelet.getPod(noisy.metadata!.uid!)?.metadata?.deletionTimestamp, undefined, 'an evicted pod is not deleted');
    assert.ok(statusOf(h, quiet)?.containerStatuses?.[0]?.state?.running, 'the quiet pod runs on');
    assert.equal(statusOf(h, quiet)?.phase, 'Running');
    // The condition outlasts the pressure by the transition period, then clears.
    assert.deepEqual(h.kubelet.nodeConditions(), ['DiskPressure']);
    await waitFor('DiskPressure cleared after the transition period', () => h.kubelet.nodeConditions().length === 0, 30_000);
  } finally {
    await h.close();
  }
});

test("a finished pod's containers and logs are reclaimed before any pod is evicted", async () => {
  const done = apiPod('done', [sh('main', 'head -c 100000 /dev/zero | tr "\\0" y; echo')], { restartPolicy: 'Never' });
  const runner = apiPod('runner', [sh('main', 'exec sleep 300')]);
  let dir = '';
  let pressure = false;
  const logOf = () => join(dir, 'pods', `default_done_${done.metadata!.uid}`, 'main', '0.log');
  const read = (): DiskObservation => ({
    capacityBytes: 100 * Mi,
    availableBytes: pressure && existsSync(logOf()) ? Mi : 60 * Mi,
    inodes: 0,
    inodesFree: 0,
  });
  const h = await newHarness({
    diskPressure: new DiskPressureObserver('.', { available: { bytes: 8 * Mi } }, read),
    evictionMonitoringIntervalMs: 100,
  });
  dir = h.dir;
  try {
    h.kubelet.startPod(done);
    h.kubelet.startPod(runner);
    await waitFor('the finished pod Succeeded', () => statusOf(h, done)?.phase === 'Succeeded', 30_000);
    await waitFor('the runner running', () => statusOf(h, runner)?.containerStatuses?.[0]?.state?.running, 30_000);
    await waitFor('the finished pod stopped for good', async () => (await h.kubelet.syncPod(done.metadata!.uid!)).terminal, 30_000);
    assert.ok(existsSync(logOf()), 'the finished container has its log');
    pressure = true;
    await waitFor('the finished container and its log removed', async () => !existsSync(logOf()) && (await h.runtime.listContainers()).length === 1, 30_000);
    const left = await h.runtime.listContainers();
    assert.equal(left[0]!.metadata.name, 'main');
    assert.equal(left[0]!.state, 'CONTAINER_RUNNING');
    assert.equal(statusOf(h, runner)?.phase, 'Running', 'no pod evicted');
    assert.equal(statusOf(h, done)?.phase, 'Succeeded', 'the finished pod keeps its status');
    assert.equal(eventsOf(h, runner, 'Evicted').length, 0);
  } finally {
    await h.close();
  }
});

test("--eviction-pressure-transition-period: a Go duration carried with the thresholds; a bad one refused in the flag parser's words", () => {
  const place = { env: { HOME: '/tmp' }, cwd: '/tmp' };
  assert.deepEqual(agentSettingsOf({ 'root-dir': '/tmp/r', 'eviction-pressure-transition-period': '30s' }, place).evictionHard, {
    pressureTransitionPeriodMs: 30_000,
  });
  assert.deepEqual(
    agentSettingsOf({ 'root-dir': '/tmp/r', 'eviction-hard': 'nodefs.available<1Gi', 'eviction-pressure-transition-period': '1m' }, place).evictionHard,
    { available: { bytes: 1024 ** 3 }, pressureTransitionPeriodMs: 60_000 },
  );
  assert.throws(
    () => agentSettingsOf({ 'root-dir': '/tmp/r', 'eviction-pressure-transition-period': 'soon' }, place),
    /^InvalidSettingError: invalid argument "soon" for "--eviction-pressure-transition-period" flag: time: invalid duration "soon"$/,
  );
});
