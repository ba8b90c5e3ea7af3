// The standalone agent's Node (src/agent/agent-node.ts) in an in-memory object store: registered with
// the kubelet's labels, --node-labels (node.kubernetes.io/instance-type among them) and
// --register-with-taints, which the scheduler's filters then read; on a restart the stored Node is
// taken over with what users changed (labels, taints, cordon) kept, the registration taints not put
// back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node, Pod } from '../../src/api/types.js';
import { AgentNode } from '../../src/agent/agent-node.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import type { KubeObject } from '../../src/kubeapi/backend.js';
import { nodeUnschedulable } from '../../src/scheduler/plugins/nodeunschedulable.js';
import { taintToleration } from '../../src/scheduler/plugins/tainttoleration.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const Gi = 1024 ** 3;
const pod = { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'c' }] } } as Pod;

function agentNode(store: ObjectStore, clock: FakeClock): AgentNode {
  return new AgentNode({
    spec: {
      nodeName: 'n1',
      internalIP: '127.0.0.1',
      kubeletPort: 0,
      capacity: { cpuMilli: 2000, memoryBytes: 4 * Gi, pods: 110 },
      allocatable: { cpuMilli: 1000, memoryBytes: 2 * Gi, pods: 20 },
      labels: { 'node.kubernetes.io/instance-type': 'small', team: 'a' },
      taints: [{ key: 'dedicated', value: 'ci', effect: 'NoSchedule' }],
      kubeletVersion: 'v',
      containerRuntimeVersion: 'r',
    },
    storage: store.storage('Node')!,
    clock,
    logger: silentLogger,
    readiness: () => ({ ready: true, pressure: [] }),
  });
}

test('registered with the labels, allocatable and taints of its flags; a restart keeps what users changed and puts no taint back', async () => {
  const clock = new FakeClock();
  const store = new ObjectStore({ now: () => clock.now() });
  const stored = () => store.storage('Node')!.get('', 'n1') as Node;
  await agentNode(store, clock).register();
  const labels = stored().metadata?.labels ?? {};
  assert.equal(labels['kubernetes.io/hostname'], 'n1');
  assert.equal(labels['kubernetes.io/os'], process.platform);
  assert.ok(labels['kubernetes.io/arch']);
  assert.equal(labels['node.kubernetes.io/instance-type'], 'small');
  assert.equal(labels.team, 'a');
  assert.deepEqual(stored().spec?.taints, [{ key: 'dedicated', value: 'ci', effect: 'NoSchedule' }]);
  assert.deepEqual({ cpu: stored().status?.allocatable?.cpu, pods: stored().status?.allocatable?.pods }, { cpu: '1', pods: '20' });
  // The registration taint keeps an intolerant pod off, in upstream's words.
  assert.match(String(taintToleration.filter(pod, { node: stored(), pods: [] })?.reasons), /untolerated taint \{dedicated: ci\}/);

  // A user removes the taint, labels the node and cordons it (kubectl taint/label/cordon).
  const changed = stored();
  await store.storage('Node')!.update!(
    {
      ...changed,
      metadata: { ...changed.metadata, labels: { ...changed.metadata!.labels, disk: 'ssd' } },
      spec: { ...changed.spec, taints: [], unschedulable: true },
    } as KubeObject,
    {},
  );
  // The agent restarts with the same flags: the stored Node is taken over.
  await agentNode(store, clock).register();
  assert.equal(stored().metadata?.labels?.disk, 'ssd');
  assert.equal(stored().metadata?.labels?.['node.kubernetes.io/instance-type'], 'small');
  assert.deepEqual(stored().spec?.taints ?? [], []);
  assert.equal(stored().spec?.unschedulable, true);
  assert.equal(taintToleration.filter(pod, { node: stored(), pods: [] }), undefined);
  assert.deepEqual(nodeUnschedulable.filter(pod, { node: stored(), pods: [] })?.reasons, ['node(s) were unschedulable']);
});
