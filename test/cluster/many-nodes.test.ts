// Several podvisors, one cluster: five podvisor nodes (own root dirs, node names, kubelet ports and
// system:node identities, on the process runtime) under kube-apiserver with the real kube-scheduler and
// kube-controller-manager. A Deployment of 50 replicas spreads over them within each node's capacity
// and maxPods. (A drain: node-drain.test.ts; a node lost with its agent: node-loss.test.ts.)

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../fixtures/wait.js';
import { NodeFleet, deployment, runMarker, skipReason, type FleetNode, type Json } from './node-fleet.js';

const reason = skipReason();
const NODES: FleetNode[] = [
  { name: 'pv-1' },
  { name: 'pv-2' },
  { name: 'pv-3' },
  // Capacity the scheduler must respect: 1 CPU holds ten 100m pods; maxPods 6 holds six.
  { name: 'pv-cpu', cpu: '1' },
  { name: 'pv-small', maxPods: 6 },
];
const NAMES = NODES.map((n) => n.name);
const APP = 'fleet';
const REPLICAS = 50;
const MARKER = runMarker();

describe('many podvisor nodes in one cluster', { skip: reason ? `skipped: ${reason}` : false, timeout: 170_000 }, () => {
  const fleet = reason ? undefined! : new NodeFleet({ nodeMonitorPeriodSeconds: 1 });
  const kubectl = (args: string[], timeoutMs?: number) => fleet.cp.kubectlOk(args, { timeoutMs });
  const processesOf = async (node: string) => (await NodeFleet.processes(MARKER)).filter((p) => p.env.NODE_NAME === node);
  const state = () => fleet.describe(APP, NAMES);

  before(async () => {
    if (reason) return;
    await fleet.start();
    await Promise.all(NODES.map((n) => fleet.startAgent(n)));
  });

  after(async () => {
    if (reason) return;
    await fleet.destroy({ deleteNamespacePods: 'default' });
  });

  it('a Deployment of 50 replicas spreads over five nodes, within each node’s capacity and maxPods, and becomes Available', async (t) => {
    await fleet.waitReady(NAMES);
    const nodes = (await fleet.cp.getJSON<Json>(['nodes']))!.items as Json[];
    const alloc = (name: string) => nodes.find((n) => n.metadata.name === name)!.status.allocatable;
    assert.equal(alloc('pv-cpu').cpu, '1', 'the scheduler sees --node-cpu as allocatable cpu');
    assert.equal(alloc('pv-small').pods, '6', 'the scheduler sees --max-pods as allocatable pods');
    assert.equal(alloc('pv-1').pods, '110');

    const file = join(fleet.dir, 'deployment.json');
    writeFileSync(file, JSON.stringify(deployment(APP, REPLICAS, MARKER, { cpuRequest: '100m' })));
    const t0 = Date.now();
    await kubectl(['apply', '-f', file]);
    await waitFor(
      async () => `the Deployment Available with ${REPLICAS} pods: ${await state()}`,
      () => fleet.available(APP, REPLICAS),
      120_000,
    );
    const perNode = await fleet.spread(APP, NAMES);
    t.diagnostic(`${REPLICAS} replicas Available over ${NAMES.length} nodes in ${Date.now() - t0} ms; pods per node: ${JSON.stringify(perNode)}`);
    assert.deepEqual(await fleet.failedPods(APP), [], 'no pod rejected by its node: the scheduler places within capacity and maxPods');
    assert.ok(perNode['pv-cpu']! <= 10, `1 CPU holds at most ten 100m pods: ${JSON.stringify(perNode)}`);
    assert.equal(perNode['pv-small'], 6, `the node at maxPods (6) gets no more, and is filled to it: ${JSON.stringify(perNode)}`);
    for (const n of ['pv-1', 'pv-2', 'pv-3']) assert.ok(perNode[n]! > 0, `${n} runs some of the pods: ${JSON.stringify(perNode)}`);
    // Each pod is one process on the node it was bound to.
    for (const n of NAMES) assert.equal((await processesOf(n)).length, perNode[n], `${n}'s container processes`);
  });
});
