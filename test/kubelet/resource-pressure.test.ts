// The eviction manager's memory.available and pid.available signals on injected observations and an
// injected clock: --eviction-hard parsed for them; the kubelet's defaults (memory.available<100Mi,
// no pid.available); the host read from /proc as the kubelet's summary reads it; MemoryPressure and
// PIDPressure held for the pressure transition period; the admit rule under MemoryPressure alone
// (BestEffort refused unless it tolerates the taint); the Node's conditions and their taints as the
// node lifecycle controller adds them; and the scheduler's TaintToleration keeping pods off.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node, Pod } from '../../src/api/types.js';
import { AgentNode } from '../../src/agent/agent-node.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { EventStore } from '../../src/events/store.js';
import { DiskPressureObserver, evictionAdmit, parseEvictionHard } from '../../src/kubelet/disk-pressure.js';
import { EvictionManager } from '../../src/kubelet/eviction-manager.js';
import { crossedResourceSignals, observeHostResources, ResourcePressureObserver, type ResourceObservation } from '../../src/kubelet/resource-pressure.js';
import { taintToleration } from '../../src/scheduler/plugins/tainttoleration.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const memory = (availableMi: number): ResourceObservation => ({ memory: { capacityBytes: 8 * Gi, workingSetBytes: 8 * Gi - availableMi * Mi } });

test('--eviction-hard takes memory.available and pid.available', () => {
  assert.deepEqual(parseEvictionHard('memory.available<200Mi,pid.available<10%'), { memoryAvailable: { bytes: 200 * Mi }, pidAvailable: { percent: 10 } });
  assert.deepEqual(parseEvictionHard('pid.available<1000'), { pidAvailable: { bytes: 1000 } });
});

test('memory.available below 100Mi by default; a percentage of capacity; pid.available only when asked', () => {
  assert.deepEqual(crossedResourceSignals(memory(101), {}), []);
  assert.deepEqual(crossedResourceSignals(memory(99), {}), ['memory.available']);
  assert.deepEqual(crossedResourceSignals(memory(500), { memoryAvailable: { percent: 10 } }), ['memory.available']);
  const pids = { pids: { maxPID: 1000, running: 950 } };
  assert.deepEqual(crossedResourceSignals(pids, {}), []);
  assert.deepEqual(crossedResourceSignals(pids, { pidAvailable: { percent: 10 } }), ['pid.available']);
  assert.deepEqual(crossedResourceSignals(pids, { pidAvailable: { bytes: 50 } }), []);
});

test('the host: capacity MemTotal, working set in use less inactive file; the PID limit less the tasks', () => {
  const files: Record<string, string> = {
    '/proc/meminfo': 'MemTotal:       1000 kB\nMemFree:         300 kB\nMemAvailable:    600 kB\nInactive(file):  200 kB\n',
    '/proc/sys/kernel/pid_max': '32768\n',
    '/proc/sys/kernel/threads-max': '20000\n',
    '/proc/loadavg': '0.50 0.40 0.30 3/412 9999\n',
  };
  assert.deepEqual(
    observeHostResources((p) => files[p]!),
    { memory: { capacityBytes: 1000 * 1024, workingSetBytes: 500 * 1024 }, pids: { maxPID: 20000, running: 412 } },
  );
  assert.deepEqual(
    observeHostResources(() => {
      throw new Error('ENOENT');
    }),
    {},
  );
});

test('MemoryPressure and PIDPressure held for the pressure transition period after the signals recover', async () => {
  const clock = new FakeClock();
  let now: ResourceObservation = memory(50);
  const resources = new ResourcePressureObserver({ pidAvailable: { bytes: 100 } }, () => now);
  const disk = new DiskPressureObserver('/nowhere', { pressureTransitionPeriodMs: 60_000 }, () => ({
    capacityBytes: 100 * Gi,
    availableBytes: 50 * Gi,
    inodes: 1000,
    inodesFree: 500,
  }));
  const manager = new EvictionManager({
    clock,
    logger: silentLogger,
    recorder: new EventStore({ clock, host: 'n1' }),
    nodeName: 'n1',
    disk,
    resources,
    activePods: () => [],
    measure: () => Promise.reject(new Error('unused')),
    reclaim: async () => undefined,
    evictPod: async () => undefined,
    podCleanedUp: () => true,
    isCritical: () => false,
  });
  assert.deepEqual(manager.conditions(), ['MemoryPressure']);
  now = { ...memory(500), pids: { maxPID: 1000, running: 950 } };
  await clock.advance(30_000);
  assert.deepEqual(manager.conditions(), ['MemoryPressure', 'PIDPressure']);
  now = memory(500);
  await clock.advance(30_000);
  assert.deepEqual(manager.conditions(), ['PIDPressure'], 'MemoryPressure last seen 60 s ago');
  await clock.advance(30_000);
  assert.deepEqual(manager.conditions(), []);
});

const pod = (
  requests: Record<string, string> | undefined,
  tolerations: Pod['spec'] extends infer S ? (S extends { tolerations?: infer T } ? T : never) : never = [],
): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u', annotations: { 'kubernetes.io/config.source': 'api' } },
  spec: { containers: [{ name: 'c', image: 'i', ...(requests ? { resources: { requests } } : {}) }], tolerations },
});

test('admission under MemoryPressure alone refuses BestEffort pods only, unless they tolerate the taint', () => {
  const refused = { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' };
  assert.deepEqual(evictionAdmit(pod(undefined), ['MemoryPressure']), refused);
  assert.deepEqual(evictionAdmit(pod({ memory: '10Mi' }), ['MemoryPressure']), { admit: true });
  assert.deepEqual(
    evictionAdmit(pod(undefined, [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }]), ['MemoryPressure']),
    {
      admit: true,
    },
  );
  assert.deepEqual(evictionAdmit(pod({ memory: '10Mi' }), ['MemoryPressure', 'PIDPressure']), {
    admit: false,
    reason: 'Evicted',
    message: 'The node had condition: [MemoryPressure PIDPressure]. ',
  });
  assert.deepEqual(evictionAdmit(pod({ memory: '10Mi' }), ['PIDPressure']).admit, false);
});

test('the Node: the pressure conditions, their NoSchedule taints added and removed, and the scheduler keeping pods off', async () => {
  const clock = new FakeClock();
  const store = new ObjectStore({ now: () => clock.now() });
  let pressure: string[] = [];
  const node = new AgentNode({
    spec: {
      nodeName: 'n1',
      internalIP: '127.0.0.1',
      kubeletPort: 0,
      capacity: { cpuMilli: 1000, memoryBytes: Gi, pods: 110 },
      kubeletVersion: 'v',
      containerRuntimeVersion: 'r',
    },
    storage: store.storage('Node')!,
    clock,
    logger: silentLogger,
    readiness: () => ({ ready: true, pressure }),
  });
  await node.register();
  const stored = () => store.storage('Node')!.get('', 'n1') as Node;
  pressure = ['MemoryPressure', 'PIDPressure'];
  await node.refresh();
  const conditions = Object.fromEntries((stored().status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
  assert.deepEqual(conditions, {
    MemoryPressure: 'True/KubeletHasInsufficientMemory',
    DiskPressure: 'False/KubeletHasNoDiskPressure',
    PIDPressure: 'True/KubeletHasInsufficientPID',
    Ready: 'True/KubeletReady',
  });
  assert.deepEqual(
    stored().spec?.taints?.map((t) => `${t.key}:${t.effect}`),
    ['node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule'],
  );
  const status = taintToleration.filter(pod({ memory: '10Mi' }), { node: stored(), pods: [] });
  assert.match(String(status?.reasons), /node\(s\) had untolerated taint \{node.kubernetes.io\/memory-pressure: \}/);
  const tolerant = pod({ memory: '10Mi' }, [
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  ]);
  assert.equal(taintToleration.filter(tolerant, { node: stored(), pods: [] }), undefined);
  pressure = [];
  await node.refresh();
  assert.equal(stored().spec?.taints, undefined);
  assert.equal(taintToleration.filter(pod({ memory: '10Mi' }), { node: stored(), pods: [] }), undefined);
});
