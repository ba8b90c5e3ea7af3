// The eviction manager's nodefs signals of the root dir: --eviction-hard parsed as the kubelet parses
// it (quantities and percentages, the signals podvisor observes), the thresholds crossed by an
// observation (podvisor's defaults: 10% but at most 1 GiB available, 5% of inodes), and its admit
// handler's reason and message (the critical pods it lets through); a cluster node's condition.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { nodeConditions } from '../../src/cluster/node-status.js';
import { crossedSignals, evictionAdmit, parseEvictionHard, type DiskObservation } from '../../src/kubelet/disk-pressure.js';

const Gi = 1024 ** 3;
const Mi = 1024 ** 2;
const disk = (over: Partial<DiskObservation>): DiskObservation => ({
  capacityBytes: 100 * Gi,
  availableBytes: 50 * Gi,
  inodes: 1000,
  inodesFree: 500,
  ...over,
});

test('--eviction-hard: quantities and percentages of the nodefs signals; anything else refused with the reason', () => {
  assert.deepEqual(parseEvictionHard('nodefs.available<500Mi, nodefs.inodesFree<5%'), { available: { bytes: 500 * Mi }, inodesFree: { percent: 5 } });
  assert.deepEqual(parseEvictionHard('nodefs.inodesFree<100'), { inodesFree: { bytes: 100 } });
  assert.throws(
    () => parseEvictionHard('imagefs.available<15%'),
    /unsupported eviction signal "imagefs.available": podvisor observes memory.available, nodefs.available, nodefs.inodesFree, pid.available/,
  );
  assert.throws(() => parseEvictionHard('nodefs.available>10%'), /is not of the form signal<value/);
  assert.throws(() => parseEvictionHard('nodefs.available<110%'), /invalid percentage "110%"/);
  assert.throws(() => parseEvictionHard('nodefs.available<lots'), /invalid quantity "lots"/);
});

test("the defaults: 10% of the root dir's file system available, never more than 1 GiB asked; 5% of its inodes", () => {
  // A 100 GiB disk: 10% would be 10 GiB; the cap asks 1 GiB.
  assert.deepEqual(crossedSignals(disk({ availableBytes: 2 * Gi }), {}), []);
  assert.deepEqual(crossedSignals(disk({ availableBytes: Gi - 1 }), {}), ['nodefs.available']);
  // A 4 GiB disk: 10% is below the cap.
  assert.deepEqual(crossedSignals(disk({ capacityBytes: 4 * Gi, availableBytes: 500 * Mi }), {}), []);
  assert.deepEqual(crossedSignals(disk({ capacityBytes: 4 * Gi, availableBytes: 400 * Mi }), {}), ['nodefs.available']);
  assert.deepEqual(crossedSignals(disk({ inodesFree: 49 }), {}), ['nodefs.inodesFree']);
  // No inode count (btrfs): no inode signal.
  assert.deepEqual(crossedSignals(disk({ inodes: 0, inodesFree: 0 }), {}), []);
  // Given thresholds replace the defaults of their signals only.
  assert.deepEqual(crossedSignals(disk({ availableBytes: 60 * Gi, inodesFree: 10 }), { available: { percent: 70 } }), [
    'nodefs.available',
    'nodefs.inodesFree',
  ]);
});

const pod = (annotations: Record<string, string>, priority?: number): Pod =>
  ({ metadata: { name: 'p', annotations }, spec: { containers: [], ...(priority !== undefined ? { priority } : {}) } }) as Pod;

test("the eviction manager's admission: Evicted with the node's conditions; critical pods pass", () => {
  const api = pod({ 'kubernetes.io/config.source': 'api' });
  assert.deepEqual(evictionAdmit(api, []), { admit: true });
  assert.deepEqual(evictionAdmit(api, ['DiskPressure']), { admit: false, reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });
  assert.deepEqual(evictionAdmit(pod({ 'kubernetes.io/config.source': 'file' }), ['DiskPressure']), { admit: true }, 'a static pod');
  assert.deepEqual(evictionAdmit(pod({ 'kubernetes.io/config.source': 'api' }, 2_000_001_000), ['DiskPressure']), { admit: true }, 'system-node-critical');
});

test("a cluster node's DiskPressure condition follows the eviction manager's, in the kubelet's words", () => {
  const now = Date.UTC(2026, 0, 1);
  const calm = nodeConditions(now, undefined, { ready: true });
  assert.deepEqual(
    calm.filter((c) => c.type === 'DiskPressure').map((c) => [c.status, c.reason, c.message]),
    [['False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure']],
  );
  const pressed = nodeConditions(now + 10_000, calm, { ready: true, pressure: ['DiskPressure'] });
  const disk = pressed.find((c) => c.type === 'DiskPressure')!;
  assert.deepEqual([disk.status, disk.reason, disk.message], ['True', 'KubeletHasDiskPressure', 'kubelet has disk pressure']);
  assert.equal(disk.lastTransitionTime, '2026-01-01T00:00:10Z');
  assert.equal(pressed.find((c) => c.type === 'MemoryPressure')!.status, 'False');
  assert.equal(pressed.find((c) => c.type === 'Ready')!.status, 'True');
});
