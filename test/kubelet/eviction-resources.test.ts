// The eviction manager under MemoryPressure and PIDPressure, on an injected clock and injected node
// readings (/proc figures as the resource-pressure observer reads them) and pod stats: the ranking as
// upstream's rankMemoryPressure (pods over their memory requests first, then lower priority, then
// most working set over requests) and rankPIDPressure (lower priority, then most processes); the
// message in the kubelet's words; memory.available handled before nodefs, without node-level reclaim;
// and a kubelet over the process runtime evicting the pod over its request: Failed, Evicted.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { defaultPod } from '../../src/api/defaults.js';
import { EventStore } from '../../src/events/store.js';
import { DiskPressureObserver } from '../../src/kubelet/disk-pressure.js';
import { EvictionManager } from '../../src/kubelet/eviction-manager.js';
import { evictionMessage, rankForEviction, type EvictionCandidate, type PodResourceStats } from '../../src/kubelet/eviction-ranking.js';
import { observeHostResources, ResourcePressureObserver, type ResourceObservation } from '../../src/kubelet/resource-pressure.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { newHarness, sh, statusOf, waitFor, eventsOf } from './harness.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

function apiPod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return defaultPod(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { ...spec, containers } },
    { nodeName: 'test-node', source: 'api' },
  );
}

const requesting = (memory: string): Container => ({ name: 'app', image: 'busybox', resources: { requests: { memory } } });
const plain: Container = { name: 'app', image: 'busybox' };
const stats = (workingSetMi: number, processes = 1): PodResourceStats => ({ containers: [{ name: 'app', workingSetBytes: workingSetMi * Mi }], processes });
const names = (cs: EvictionCandidate[]) => cs.map((c) => c.pod.metadata!.name);

test('memory ranking: unmeasured first, then over requests, then lower priority, then most working set over requests', () => {
  const within = { pod: apiPod('within', [requesting('500Mi')]), stats: stats(400) };
  const overSmall = { pod: apiPod('over-small', [requesting('100Mi')]), stats: stats(150) };
  const overLarge = { pod: apiPod('over-large', [requesting('100Mi')]), stats: stats(600) };
  const overNoRequest = { pod: apiPod('over-no-request', [plain]), stats: stats(200) };
  const overHighPriority = { pod: apiPod('over-high-priority', [plain], { priority: 1000 }), stats: stats(900) };
  const unmeasured = { pod: apiPod('unmeasured', [plain]) };
  assert.deepEqual(names(rankForEviction([within, overHighPriority, overSmall, unmeasured, overNoRequest, overLarge], 'memory')), [
    'unmeasured',
    'over-large',
    'over-no-request',
    'over-small',
    'over-high-priority',
    'within',
  ]);
});

test('PID ranking: lower priority first, then most processes', () => {
  const many = { pod: apiPod('many', [plain]), stats: stats(10, 200) };
  const few = { pod: apiPod('few', [plain]), stats: stats(10, 3) };
  const important = { pod: apiPod('important', [plain], { priority: 100 }), stats: stats(10, 5000) };
  assert.deepEqual(names(rankForEviction([important, few, many], 'pids')), ['many', 'few', 'important']);
});

test("the eviction message in the kubelet's words for memory and pids", () => {
  const pod = apiPod('web', [requesting('100Mi'), { name: 'side', image: 'busybox' }]);
  const candidate: EvictionCandidate = {
    pod,
    stats: {
      containers: [
        { name: 'app', workingSetBytes: 300 * Mi },
        { name: 'side', workingSetBytes: 0 },
      ],
      processes: 4,
    },
  };
  assert.equal(
    evictionMessage('memory', candidate, { quantity: 100 * Mi, available: 50 * Mi }),
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 300Mi, request is 100Mi, has larger consumption of memory. ',
  );
  assert.equal(
    evictionMessage('pids', candidate, { quantity: 1000, available: 420 }),
    'The node was low on resource: pids. Threshold quantity: 1k, available: 420. ',
  );
});

/** Node readings as /proc gives them: MemTotal 8 GiB with `availableMi` not in use, and the tasks. */
function procReadings(node: { availableMi: number; tasks: number }): ResourceObservation {
  const kB = (bytes: number) => `${Math.round(bytes / 1024)} kB`;
  const files: Record<string, string> = {
    '/proc/meminfo': `MemTotal:       ${kB(8 * Gi)}\nMemFree:        ${kB(node.availableMi * Mi)}\nInactive(file):  0 kB\n`,
    '/proc/sys/kernel/pid_max': '4194304\n',
    '/proc/sys/kernel/threads-max': '10000\n',
    '/proc/loadavg': `0.50 0.40 0.30 3/${node.tasks} 9999\n`,
  };
  return observeHostResources((p) => files[p]!);
}

test('housekeeping under MemoryPressure then PIDPressure: no reclaim, one pod per pass, memory before disk', async () => {
  const clock = new FakeClock();
  const node = { availableMi: 4096, tasks: 100 };
  const resources = new ResourcePressureObserver({ pidAvailable: { bytes: 1000 } }, () => procReadings(node));
  const diskFree = { bytes: 50 * Mi };
  const disk = new DiskPressureObserver('/nowhere', { available: { bytes: 10 * Mi } }, () => ({
    capacityBytes: 100 * Mi,
    availableBytes: diskFree.bytes,
    inodes: 1000,
    inodesFree: 900,
  }));
  const hog = apiPod('hog', [requesting('100Mi')]);
  const modest = apiPod('modest', [requesting('1Gi')]);
  const forker = apiPod('forker', [plain]);
  const podStats = new Map([
    [hog, stats(700, 2)],
    [modest, stats(300, 2)],
    [forker, stats(20, 8000)],
  ]);
  const active = new Set([hog, modest, forker]);
  const evicted: Array<{ name: string; grace: number; message: string }> = [];
  let reclaims = 0;
  const manager = new EvictionManager({
    clock,
    logger: silentLogger,
    recorder: new EventStore({ clock, host: 'test-node' }),
    nodeName: 'test-node',
    disk,
    resources,
    activePods: () => [...active],
    measure: async () => ({ bytes: 0, inodes: 0, containers: [] }),
    podStats: async (pod) => podStats.get(pod),
    reclaim: async () => {
      reclaims++;
    },
    evictPod: async (pod, grace, message) => {
      evicted.push({ name: pod.metadata!.name!, grace, message });
      active.delete(pod);
      node.tasks -= podStats.get(pod)!.processes;
    },
    podCleanedUp: (pod) => !active.has(pod),
    isCritical: () => false,
  });
  manager.start();
  try {
    await clock.advance(10_000);
    assert.equal(evicted.length, 0, 'no pressure');

    // memory.available 64Mi < 100Mi, and the disk short too: memory is handled first, with no reclaim.
    node.availableMi = 64;
    diskFree.bytes = 5 * Mi;
    await clock.advance(10_000);
    assert.deepEqual(
      evicted.map((e) => [e.name, e.grace]),
      [['hog', 1]],
    );
    assert.equal(reclaims, 0, 'memory has no node-level reclaim');
    assert.equal(
      evicted[0]!.message,
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 64Mi. Container app was using 700Mi, request is 100Mi, has larger consumption of memory. ',
    );
    assert.deepEqual(manager.conditions(), ['MemoryPressure', 'DiskPressure']);

    // Memory recovers, the disk does not; then PIDs run short (10000 - 9500 < 1000): the forker goes.
    node.availableMi = 4096;
    diskFree.bytes = 50 * Mi;
    node.tasks = 9500;
    await clock.advance(1000);
    await clock.advance(10_000);
    assert.deepEqual(
      evicted.map((e) => e.name),
      ['hog', 'forker'],
    );
    assert.equal(evicted[1]!.message, 'The node was low on resource: pids. Threshold quantity: 1k, available: 500. ');
    await clock.advance(20_000);
    assert.equal(evicted.length, 2, 'the pressure is over: no more evictions');
  } finally {
    await manager.stop();
  }
});

test('a kubelet evicts the pod over its memory request under MemoryPressure: Failed, Evicted, the event; the other runs on', async () => {
  const hog = apiPod('hog', [{ ...sh('app', 'exec sleep 300'), resources: { requests: { memory: '10Mi' } } }], { terminationGracePeriodSeconds: 30 });
  const calm = apiPod('calm', [{ ...sh('app', 'exec sleep 300'), resources: { requests: { memory: '1Gi' } } }]);
  let h!: Awaited<ReturnType<typeof newHarness>>;
  // The node is short of memory while the hog runs (its working set as injected stats, 600Mi).
  const hogRunning = () => h && statusOf(h, hog)?.containerStatuses?.[0]?.state?.running !== undefined && statusOf(h, hog)?.phase !== 'Failed';
  h = await newHarness({
    resourcePressure: new ResourcePressureObserver({}, () => procReadings({ availableMi: hogRunning() ? 50 : 4096, tasks: 100 })),
    podResourceStats: async (pod) => (pod.metadata?.uid === hog.metadata!.uid ? stats(600) : stats(20)),
    diskPressure: new DiskPressureObserver('.', { pressureTransitionPeriodMs: 2_000 }, () => ({
      capacityBytes: 100 * Gi,
      availableBytes: 50 * Gi,
      inodes: 1000,
      inodesFree: 900,
    })),
    evictionMonitoringIntervalMs: 100,
  });
  try {
    h.kubelet.startPod(calm);
    await waitFor('the calm pod running', () => statusOf(h, calm)?.containerStatuses?.[0]?.state?.running, 30_000);
    h.kubelet.startPod(hog);
    const status = await waitFor(
      'the hog evicted',
      () => {
        const s = statusOf(h, hog);
        return s?.phase === 'Failed' && s.containerStatuses?.[0]?.state?.terminated && s;
      },
      60_000,
    );
    assert.equal(status.reason, 'Evicted');
    assert.equal(
      status.message,
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 600Mi, request is 10Mi, has larger consumption of memory. ',
    );
    assert.equal(eventsOf(h, hog, 'Evicted')[0]?.message, status.message);
    assert.equal(statusOf(h, calm)?.phase, 'Running', 'the pod within its request runs on');
  } finally {
    await h.close();
  }
});
