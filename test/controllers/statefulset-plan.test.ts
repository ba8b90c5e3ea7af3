// The StatefulSet controller's decisions from its pods alone: OrderedReady and Parallel creation and
// scale-down, failed pods replaced, the rolling update from the highest ordinal to the partition, OnDelete,
// minReadySeconds through the injected time, and the pod made for an ordinal.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod, StatefulSet } from '../../src/api/types.js';
import { planStatefulSet, podOrdinal, type StatefulPlanInput } from '../../src/controllers/statefulset-plan.js';
import { statefulPod } from '../../src/controllers/statefulset.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface PodState {
  revision?: string;
  phase?: string;
  ready?: boolean;
  readySince?: number;
  terminating?: boolean;
}

function pod(name: string, s: PodState = {}): Pod {
  const ready = s.ready ?? true;
  return {
    metadata: {
      name,
      labels: { 'controller-revision-hash': s.revision ?? 'web-1' },
      ...(s.terminating ? { deletionTimestamp: stamp(now) } : {}),
    },
    status: {
      phase: s.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: stamp(s.readySince ?? now - 60_000) }],
    },
  };
}

function plan(pods: Pod[], over: Partial<StatefulPlanInput> = {}) {
  return planStatefulSet({
    setName: 'web',
    replicas: 3,
    startOrdinal: 0,
    podManagementPolicy: 'OrderedReady',
    updateStrategy: 'RollingUpdate',
    partition: 0,
    minReadySeconds: 0,
    pods,
    currentRevision: 'web-1',
    updateRevision: 'web-1',
    now,
    ...over,
  });
}

test('ordinals come from names `<set>-<n>` only', () => {
  assert.equal(podOrdinal('web', 'web-0'), 0);
  assert.equal(podOrdinal('web', 'web-12'), 12);
  assert.equal(podOrdinal('web', 'web-01'), undefined);
  assert.equal(podOrdinal('web', 'webx-1'), undefined);
  assert.equal(podOrdinal('web', 'web-a'), undefined);
});

test('OrderedReady creates the lowest missing ordinal, and only once the ones below are Running and Ready', () => {
  assert.deepEqual(plan([]).actions, [{ type: 'create', ordinal: 0, revision: 'update' }]);
  assert.deepEqual(plan([pod('web-0', { ready: false })]).actions, []);
  assert.deepEqual(plan([pod('web-0', { phase: 'Pending', ready: false })]).actions, []);
  assert.deepEqual(plan([pod('web-0')]).actions, [{ type: 'create', ordinal: 1, revision: 'update' }]);
  assert.deepEqual(plan([pod('web-0'), pod('web-1', { terminating: true })]).actions, []);
  assert.deepEqual(plan([pod('web-0'), pod('web-1')], { startOrdinal: 0 }).actions, [{ type: 'create', ordinal: 2, revision: 'update' }]);
  assert.deepEqual(plan([pod('web-5')], { startOrdinal: 5 }).actions, [{ type: 'create', ordinal: 6, revision: 'update' }]);
});

test('Parallel creates every missing ordinal at once', () => {
  const p = plan([pod('web-1', { ready: false })], { podManagementPolicy: 'Parallel' });
  assert.deepEqual(p.actions, [
    { type: 'create', ordinal: 0, revision: 'update' },
    { type: 'create', ordinal: 2, revision: 'update' },
  ]);
});

test('scale-down deletes from the highest ordinal, one at a time under OrderedReady, all at once under Parallel', () => {
  const pods = [pod('web-0'), pod('web-1'), pod('web-2'), pod('web-3')];
  assert.deepEqual(plan(pods, { replicas: 1 }).actions, [{ type: 'delete', pod: 'web-3', why: 'condemned' }]);
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2', { terminating: true })], { replicas: 1 }).actions, []);
  assert.deepEqual(
    plan(pods, { replicas: 1, podManagementPolicy: 'Parallel' }).actions.map((a) => a.type === 'delete' && a.pod),
    ['web-3', 'web-2', 'web-1'],
  );
});

test('OrderedReady scale-down waits for an unready condemned pod unless it is the first unhealthy one', () => {
  // web-2 is unhealthy and the first such: it may go.
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2', { ready: false })], { replicas: 1 }).actions, [
    { type: 'delete', pod: 'web-2', why: 'condemned' },
  ]);
  // web-1 is the first unhealthy; web-2 is unhealthy as well: the scale-down blocks.
  assert.deepEqual(plan([pod('web-0'), pod('web-1', { ready: false }), pod('web-2', { ready: false })], { replicas: 1 }).actions, []);
});

test('a failed pod is deleted so that it is made again', () => {
  assert.deepEqual(plan([pod('web-0', { phase: 'Failed', ready: false })]).actions, [{ type: 'delete', pod: 'web-0', why: 'failed' }]);
});

test('the rolling update replaces the highest old ordinal first, each after the previous is available, down to the partition', () => {
  const input = { currentRevision: 'web-1', updateRevision: 'web-2' };
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2')], input).actions, [{ type: 'delete', pod: 'web-2', why: 'update' }]);
  // web-2 is updated but not Ready: OrderedReady waits for it first.
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2', { revision: 'web-2', ready: false })], input).actions, []);
  assert.deepEqual(
    plan([pod('web-0'), pod('web-1'), pod('web-2', { revision: 'web-2', ready: false })], { ...input, podManagementPolicy: 'Parallel' }).actions,
    [],
  );
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2', { revision: 'web-2' })], input).actions, [{ type: 'delete', pod: 'web-1', why: 'update' }]);
  // partition 1: web-0 keeps the current revision, and is made again from it.
  assert.deepEqual(plan([pod('web-0'), pod('web-1', { revision: 'web-2' }), pod('web-2', { revision: 'web-2' })], { ...input, partition: 1 }).actions, []);
  assert.deepEqual(plan([pod('web-1', { revision: 'web-2' }), pod('web-2', { revision: 'web-2' })], { ...input, partition: 1 }).actions, [
    { type: 'create', ordinal: 0, revision: 'current' },
  ]);
  // OnDelete: old pods stay until deleted; a missing one is made at the update revision.
  assert.deepEqual(plan([pod('web-0'), pod('web-1'), pod('web-2')], { ...input, updateStrategy: 'OnDelete' }).actions, []);
  assert.deepEqual(plan([pod('web-0'), pod('web-1')], { ...input, updateStrategy: 'OnDelete' }).actions, [{ type: 'create', ordinal: 2, revision: 'update' }]);
});

test('minReadySeconds: the next ordinal waits until the pod has been Ready that long, and says when to look again', () => {
  const p = plan([pod('web-0', { readySince: now - 4000 })], { minReadySeconds: 10 });
  assert.deepEqual(p.actions, []);
  assert.equal(p.recheckInMs, 6000);
  assert.deepEqual(plan([pod('web-0', { readySince: now - 10_000 })], { minReadySeconds: 10 }).actions, [{ type: 'create', ordinal: 1, revision: 'update' }]);
});

test('the pod of an ordinal: identity labels, hostname and subdomain, the owner, the claims as volumes', () => {
  const set: StatefulSet = {
    metadata: { name: 'db', namespace: 'default', uid: 'u1' },
    spec: {
      serviceName: 'db-headless',
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' } }],
    },
  };
  const p = statefulPod(set, set.spec!.template, 'db-abc', 2);
  assert.equal(p.metadata?.name, 'db-2');
  assert.deepEqual(p.metadata?.labels, {
    app: 'db',
    'statefulset.kubernetes.io/pod-name': 'db-2',
    'apps.kubernetes.io/pod-index': '2',
    'controller-revision-hash': 'db-abc',
  });
  assert.equal(p.spec?.hostname, 'db-2');
  assert.equal(p.spec?.subdomain, 'db-headless');
  assert.deepEqual(p.metadata?.ownerReferences, [
    { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u1', controller: true, blockOwnerDeletion: true },
  ]);
  assert.deepEqual(p.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-2' } }]);
});
