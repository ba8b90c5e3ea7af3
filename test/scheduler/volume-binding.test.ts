// The binder's matching (volume-match.ts, FindMatchingVolume's rules) and the scheduler's
// VolumeBinding and VolumeRestrictions plugins with upstream's messages, over plain objects; the
// scheduling cycle's retry on a claim change and its PreBind, on an injected clock.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../src/api/types.js';
import { fitErrorMessage } from '../../src/scheduler/framework.js';
import { preempt } from '../../src/scheduler/default-preemption.js';
import { decideVolumes, ErrReasonBindConflict, ErrReasonNodeConflict, volumeBinding, type VolumeListers } from '../../src/scheduler/plugins/volumebinding.js';
import { ErrReasonReadWriteOncePodConflict, volumeRestrictions } from '../../src/scheduler/plugins/volumerestrictions.js';
import { findMatchingVolume } from '../../src/scheduler/volume-match.js';
import { defaultFilters } from '../../src/scheduler/plugins/registry.js';
import { Scheduler } from '../../src/scheduler/schedule-one.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { node, pod } from './helpers.js';

function pv(
  name: string,
  over: Partial<NonNullable<PersistentVolume['spec']>> = {},
  labels: Record<string, string> = {},
  phase = 'Available',
): PersistentVolume {
  return {
    metadata: { name, labels },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, ...over },
    status: { phase },
  } as PersistentVolume;
}

function pvc(name: string, over: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {}): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', ...over },
    status: { phase: 'Pending' },
  } as PersistentVolumeClaim;
}

const affinityTo = (host: string) => ({
  required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [host] }] }] },
});

test('FindMatchingVolume: the smallest volume of the class whose modes, capacity and labels satisfy the claim', () => {
  const vols = [
    pv('big', { capacity: { storage: '10Gi' } }),
    pv('small', { capacity: { storage: '512Mi' } }),
    pv('fit', { capacity: { storage: '2Gi' } }),
    pv('rwx', { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany'] }),
    pv('fast', { capacity: { storage: '1Gi' }, storageClassName: 'fast' }),
    pv('taken', { capacity: { storage: '1Gi' }, claimRef: { name: 'other', namespace: 'default', uid: 'x' } }),
    pv('released', { capacity: { storage: '1Gi' } }, {}, 'Released'),
  ];
  assert.equal(findMatchingVolume(pvc('c'), vols, undefined, false)?.metadata?.name, 'fit');
  assert.equal(findMatchingVolume(pvc('c', { storageClassName: 'fast' }), vols, undefined, false)?.metadata?.name, 'fast');
  assert.equal(findMatchingVolume(pvc('c', { accessModes: ['ReadWriteMany'] }), vols, undefined, false)?.metadata?.name, 'rwx');
  assert.equal(findMatchingVolume(pvc('c', { resources: { requests: { storage: '20Gi' } } }), vols, undefined, false), undefined);
  // A selector picks by the volume's labels.
  const labelled = [...vols, pv('gold', { capacity: { storage: '5Gi' } }, { tier: 'gold' })];
  assert.equal(findMatchingVolume(pvc('c', { selector: { matchLabels: { tier: 'gold' } } }), labelled, undefined, false)?.metadata?.name, 'gold');
  // Block claims take Block volumes only.
  assert.equal(findMatchingVolume(pvc('c', { volumeMode: 'Block' }), vols, undefined, false), undefined);
});

test('FindMatchingVolume: a volume pre-bound to the claim first; WaitForFirstConsumer leaves the rest to the scheduler; node affinity', () => {
  const claim = pvc('c');
  const pre = pv('pre', { capacity: { storage: '100Gi' }, claimRef: { name: 'c', namespace: 'default' } });
  const vols = [pv('fit'), pre];
  assert.equal(findMatchingVolume(claim, vols, undefined, false)?.metadata?.name, 'pre');
  // Bound to another claim of the same name (another uid): not this one's.
  const stale = pv('stale', { claimRef: { name: 'c', namespace: 'default', uid: 'old' } });
  assert.equal(findMatchingVolume(claim, [stale], undefined, false), undefined);
  // Delayed binding without a node: the controller binds nothing but pre-bound volumes.
  assert.equal(findMatchingVolume(claim, [pv('fit')], undefined, true), undefined);
  assert.equal(findMatchingVolume(claim, [pv('fit'), pre], undefined, true)?.metadata?.name, 'pre');
  // With a node: volumes whose affinity excludes it are skipped.
  const local = [pv('there', { nodeAffinity: affinityTo('elsewhere') }), pv('here', { nodeAffinity: affinityTo('vm'), capacity: { storage: '3Gi' } })];
  assert.equal(findMatchingVolume(claim, local, node(), true)?.metadata?.name, 'here');
});

function listers(claims: PersistentVolumeClaim[], volumes: PersistentVolume[], classes: StorageClass[]): VolumeListers {
  return {
    claim: (ns, name) => claims.find((c) => c.metadata?.namespace === ns && c.metadata?.name === name),
    volume: (name) => volumes.find((v) => v.metadata?.name === name),
    volumes: () => volumes,
    storageClass: (name) => classes.find((c) => c.metadata?.name === name),
  };
}

const wffc: StorageClass = { metadata: { name: 'standard' }, provisioner: 'podvisor.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' };
const immediate: StorageClass = { metadata: { name: 'now' }, provisioner: 'podvisor.io/local-path', volumeBindingMode: 'Immediate' };
const manual: StorageClass = { metadata: { name: 'manual' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' };
const usingClaims = (...names: string[]) => pod({ volumes: names.map((n) => ({ name: n, persistentVolumeClaim: { claimName: n } })) });

test('VolumeBinding PreFilter: a missing claim, a claim being deleted, an unbound Immediate claim — in upstream words', () => {
  const l = listers(
    [pvc('now', { storageClassName: 'now' }), { ...pvc('going'), metadata: { ...pvc('going').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }],
    [],
    [immediate],
  );
  const plugin = volumeBinding(l);
  const message = (p: ReturnType<typeof pod>) => {
    const s = plugin.preFilter!(p);
    assert.ok(s);
    const post = preempt(p, { node: node(), pods: [] }, s, [plugin]);
    return fitErrorMessage(1, [s], post.message);
  };
  assert.equal(
    message(usingClaims('nosuch')),
    '0/1 nodes are available: persistentvolumeclaim "nosuch" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
  );
  assert.equal(message(usingClaims('going')).split('. ')[0], '0/1 nodes are available: persistentvolumeclaim "going" is being deleted');
  assert.equal(
    message(usingClaims('now')),
    '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
  );
  assert.equal(plugin.preFilter!(pod()), undefined);
});

test('VolumeBinding Filter: bound volumes must admit the node; WaitForFirstConsumer claims bind to a matching volume or are provisioned', () => {
  const boundHere = { ...pvc('a', { volumeName: 'pv-a' }), status: { phase: 'Bound' } } as PersistentVolumeClaim;
  const boundThere = { ...pvc('b', { volumeName: 'pv-b' }), status: { phase: 'Bound' } } as PersistentVolumeClaim;
  const l = listers(
    [boundHere, boundThere, pvc('w', { storageClassName: 'standard' }), pvc('m', { storageClassName: 'manual' }), pvc('orphan', { volumeName: 'gone' })],
    [
      pv('pv-a', { nodeAffinity: affinityTo('vm') }, {}, 'Bound'),
      pv('pv-b', { nodeAffinity: affinityTo('other') }, {}, 'Bound'),
      pv('local', { storageClassName: 'manual', nodeAffinity: affinityTo('vm') }),
    ],
    [wffc, manual],
  );
  const plugin = volumeBinding(l);
  const n = node();
  assert.equal(plugin.filter(usingClaims('a'), { node: n, pods: [] }), undefined);
  const conflict = plugin.filter(usingClaims('a', 'b'), { node: n, pods: [] });
  assert.deepEqual(conflict?.reasons, [ErrReasonNodeConflict]);
  assert.equal(conflict?.code, 'UnschedulableAndUnresolvable');
  assert.equal(fitErrorMessage(1, [conflict!], ''), '0/1 nodes are available: 1 node(s) had volume node affinity conflict.');
  assert.deepEqual(plugin.filter(usingClaims('orphan'), { node: n, pods: [] })?.reasons, [
    'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)',
  ]);
  // WaitForFirstConsumer: the local-path class provisions; the manual class binds its local volume on this node.
  const d = decideVolumes(l, usingClaims('w', 'm'), n);
  assert.ok('bindings' in d);
  assert.deepEqual(
    d.bindings.map((b) => [b.claim.metadata?.name, 'volume' in b ? b.volume.metadata?.name : 'provision']),
    [
      ['w', 'provision'],
      ['m', 'local'],
    ],
  );
  // On another node the manual class has nothing to bind.
  const elsewhere = { ...n, metadata: { name: 'other', labels: { 'kubernetes.io/hostname': 'other' } } };
  assert.deepEqual(plugin.filter(usingClaims('m'), { node: elsewhere, pods: [] })?.reasons, [ErrReasonBindConflict]);
});

test('VolumeRestrictions: a ReadWriteOncePod claim in use by another pod of the node', () => {
  const claims = [pvc('solo', { accessModes: ['ReadWriteOncePod'] }), pvc('shared')];
  const plugin = volumeRestrictions((ns, name) => claims.find((c) => c.metadata?.name === name && c.metadata?.namespace === ns));
  const holder = usingClaims('solo');
  assert.equal(plugin.filter(usingClaims('solo'), { node: node(), pods: [] }), undefined);
  const s = plugin.filter(usingClaims('solo'), { node: node(), pods: [holder] });
  assert.deepEqual(s?.reasons, [ErrReasonReadWriteOncePodConflict]);
  assert.equal(s?.code, 'Unschedulable');
  assert.equal(plugin.filter(usingClaims('shared'), { node: node(), pods: [usingClaims('shared')] }), undefined);
});

test('the scheduling cycle: a pod with an unbound Immediate claim waits Pending until a claim change; PreBind binds WaitForFirstConsumer claims before the pod', async () => {
  const clock = new FakeClock();
  const claims = [pvc('now', { storageClassName: '' }), pvc('later', { storageClassName: 'standard' })];
  const volumes: PersistentVolume[] = [];
  const l = listers(claims, volumes, [wffc]);
  const conditions = new Map<string, string>();
  const prebound: string[] = [];
  const bound = new Map<string, string>();
  const host = {
    node: () => node(),
    assignedPods: () => [],
    bind: async (p: Pod, nodeName: string) => void bound.set(p.metadata!.name!, nodeName),
    setUnschedulable: (p: Pod, _reason: string, message: string) => void conditions.set(p.metadata!.name!, message),
    preemptVictim: async () => {},
    bindVolumes: async (p: Pod, n: Node) => {
      const d = decideVolumes(l, p, n);
      assert.ok('bindings' in d);
      prebound.push(...d.bindings.map((b) => `${b.claim.metadata!.name!}:${'provision' in b ? 'provision' : b.volume.metadata!.name!}`));
    },
  };
  const s = new Scheduler({
    clock,
    logger: silentLogger,
    recorder: { event: () => {} },
    host,
    filters: defaultFilters({ network: 'pod', namespaceLabels: () => ({}), volumes: l }),
  });
  const pending = (p: Pod) => ({ ...p, status: { phase: 'Pending' } }) as Pod;
  const first = pending(usingClaims('now'));
  s.podChanged(undefined, first);
  await s.idle();
  assert.equal(
    conditions.get(first.metadata!.name!),
    '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
  );
  // The claim binds: the change moves the pod, which is bound after its back-off.
  claims[0] = { ...claims[0]!, spec: { ...claims[0]!.spec, volumeName: 'pv-now' }, status: { phase: 'Bound' } };
  volumes.push(pv('pv-now', {}, {}, 'Bound'));
  s.clusterChanged('StorageChange');
  await clock.advance(1000);
  await s.idle();
  assert.equal(bound.get(first.metadata!.name!), 'vm');
  // A WaitForFirstConsumer claim: provisioned for the node at PreBind, then the pod is bound.
  const second = pending(usingClaims('later'));
  s.podChanged(undefined, second);
  await s.idle();
  assert.deepEqual(prebound, ['later:provision']);
  assert.equal(bound.get(second.metadata!.name!), 'vm');
  s.close();
});
