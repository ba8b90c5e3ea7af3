// The DaemonSet controller's decisions on its one node: whether the template fits the node
// (nodeSelector, required node affinity, taints and tolerations), the pod's added tolerations and
// affinity, and what a sync creates and deletes (creation, failed and surplus pods, the rolling
// update with maxUnavailable or maxSurge, OnDelete), minReadySeconds through the injected time.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { daemonPodSpec, tolerates, unfitReason, type NodeFacts } from '../../src/controllers/daemonset-node.js';
import { planDaemonPods, resolveOnOneNode, type DaemonPlanInput } from '../../src/controllers/daemonset-plan.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const node: NodeFacts = { name: 'host1', labels: { 'kubernetes.io/hostname': 'host1', disk: 'ssd', cores: '8' }, taints: [] };

test('nodeSelector and required node affinity are matched against the node labels and name', () => {
  assert.equal(unfitReason({ containers: [] }, node), undefined);
  assert.equal(unfitReason({ containers: [], nodeSelector: { disk: 'ssd' } }, node), undefined);
  assert.match(unfitReason({ containers: [], nodeSelector: { disk: 'hdd' } }, node) ?? '', /didn't match Pod's node affinity\/selector/);
  const affinity = (terms: unknown[]) =>
    ({ containers: [], affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } }) as never;
  assert.equal(unfitReason(affinity([{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd', 'nvme'] }] }]), node), undefined);
  assert.equal(unfitReason(affinity([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }]), node), undefined);
  assert.notEqual(unfitReason(affinity([{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['4'] }] }]), node), undefined);
  assert.notEqual(unfitReason(affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }]), node), undefined);
  // Terms are ORed; the expressions of a term ANDed.
  assert.equal(
    unfitReason(
      affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['host1'] }] }]),
      node,
    ),
    undefined,
  );
  assert.notEqual(unfitReason(affinity([{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['host1'] }] }]), node), undefined);
});

test('NoSchedule and NoExecute taints need a toleration; PreferNoSchedule does not', () => {
  const tainted: NodeFacts = {
    ...node,
    taints: [
      { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
      { key: 'soft', effect: 'PreferNoSchedule' },
    ],
  };
  assert.match(unfitReason({ containers: [] }, tainted) ?? '', /untolerated taint \{dedicated: db\}/);
  assert.equal(unfitReason({ containers: [], tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] }, tainted), undefined);
  assert.equal(unfitReason({ containers: [], tolerations: [{ key: 'dedicated', operator: 'Exists' }] }, tainted), undefined);
  assert.equal(unfitReason({ containers: [], tolerations: [{ operator: 'Exists' }] }, tainted), undefined);
  assert.notEqual(unfitReason({ containers: [], tolerations: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] }, tainted), undefined);
  assert.equal(tolerates({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, { key: 'k', effect: 'NoSchedule' }), false);
});

test('the daemon pod gets the node-name affinity and the daemon tolerations, host network adding network-unavailable', () => {
  const spec = daemonPodSpec(
    {
      containers: [],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }] } },
      },
    },
    'host1',
  );
  assert.deepEqual(spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['host1'] }] }],
  });
  assert.deepEqual(
    spec.tolerations?.map((t) => `${t.key}:${t.effect}${t.tolerationSeconds ? `:${t.tolerationSeconds}` : ''}`),
    [
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ],
  );
  const host = daemonPodSpec({ containers: [], hostNetwork: true }, 'host1');
  assert.ok(host.tolerations?.some((t) => t.key === 'node.kubernetes.io/network-unavailable'));
});

interface PodState {
  hash?: string;
  phase?: string;
  ready?: boolean;
  readySince?: number;
  terminating?: boolean;
  createdAt?: number;
}

function pod(name: string, s: PodState = {}): Pod {
  return {
    metadata: {
      name,
      creationTimestamp: stamp(s.createdAt ?? now - 60_000),
      labels: { 'controller-revision-hash': s.hash ?? 'new' },
      ...(s.terminating ? { deletionTimestamp: stamp(now) } : {}),
    },
    status: {
      phase: s.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: (s.ready ?? true) ? 'True' : 'False', lastTransitionTime: stamp(s.readySince ?? now - 60_000) }],
    },
  };
}

function plan(pods: Pod[], over: Partial<DaemonPlanInput> = {}) {
  return planDaemonPods({
    shouldRun: true,
    pods,
    updateHash: 'new',
    updateStrategy: 'RollingUpdate',
    maxSurge: 0,
    maxUnavailable: 1,
    minReadySeconds: 0,
    now,
    ...over,
  });
}

test('one pod where the node fits, none where it does not', () => {
  assert.deepEqual(plan([]), { create: true, delete: [] });
  assert.deepEqual(plan([pod('ds-a')]), { create: false, delete: [] });
  assert.deepEqual(plan([pod('ds-a')], { shouldRun: false }), { create: false, delete: ['ds-a'] });
  assert.deepEqual(plan([], { shouldRun: false }), { create: false, delete: [] });
  // Surplus pods: the oldest stays.
  assert.deepEqual(plan([pod('ds-b', { createdAt: now - 1000 }), pod('ds-a', { createdAt: now - 5000 })]), { create: false, delete: ['ds-b'] });
  // A failed pod is deleted; a new one is made once it is gone.
  assert.deepEqual(plan([pod('ds-a', { phase: 'Failed', ready: false })]), { create: false, delete: ['ds-a'] });
  assert.deepEqual(plan([pod('ds-a', { phase: 'Failed', ready: false, terminating: true })]), { create: true, delete: [] });
  // A pod still stopping holds the node.
  assert.deepEqual(plan([pod('ds-a', { terminating: true })]), { create: false, delete: [] });
});

test('rolling update: maxUnavailable deletes the old pod first, maxSurge makes the new one beside it', () => {
  assert.deepEqual(plan([pod('ds-a', { hash: 'old' })]), { create: false, delete: ['ds-a'] });
  assert.deepEqual(plan([pod('ds-a', { hash: 'old' })], { updateStrategy: 'OnDelete' }), { create: false, delete: [] });
  const surge = { maxSurge: 1, maxUnavailable: 0 };
  assert.deepEqual(plan([pod('ds-a', { hash: 'old' })], surge), { create: true, delete: [] });
  assert.deepEqual(plan([pod('ds-a', { hash: 'old' }), pod('ds-b', { ready: false })], surge), { create: false, delete: [] });
  assert.deepEqual(plan([pod('ds-a', { hash: 'old' }), pod('ds-b')], surge), { create: false, delete: ['ds-a'] });
});

test('minReadySeconds: the surge waits until the new pod has been Ready that long, and says when to look again', () => {
  const p = plan([pod('ds-a', { hash: 'old' }), pod('ds-b', { readySince: now - 2000 })], { maxSurge: 1, maxUnavailable: 0, minReadySeconds: 5 });
  assert.deepEqual(p, { create: false, delete: [], recheckInMs: 3000 });
});

test('maxSurge and maxUnavailable of one node: percentages round up', () => {
  assert.equal(resolveOnOneNode('25%', 0), 1);
  assert.equal(resolveOnOneNode('0%', 1), 0);
  assert.equal(resolveOnOneNode(2, 0), 2);
  assert.equal(resolveOnOneNode(undefined, 1), 1);
});
