// A podvisor node drained under the real kube-controller-manager and kube-scheduler: three podvisor
// nodes (process runtime, own root dirs, node names, kubelet ports and system:node identities) run a
// Deployment; `kubectl drain` of one evicts its pods through the eviction API, the node terminates
// them and finishes their deletion, and the ReplicaSet's new pods come up on the other two.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../fixtures/wait.js';
import { NodeFleet, deployment, live, podsOn, runMarker, skipReason, type Json } from './node-fleet.js';

const reason = skipReason();
const NAMES = ['pv-1', 'pv-2', 'pv-3'];
const APP = 'drained';
const REPLICAS = 12;
const MARKER = runMarker();

describe('a podvisor node drained', { skip: reason ? `skipped: ${reason}` : false, timeout: 170_000 }, () => {
  const fleet = reason ? undefined! : new NodeFleet({ nodeMonitorPeriodSeconds: 1 });
  const kubectl = (args: string[], timeoutMs?: number) => fleet.cp.kubectlOk(args, { timeoutMs });
  const processesOf = async (node: string) => (await NodeFleet.processes(MARKER)).filter((p) => p.env.NODE_NAME === node);
  const state = () => fleet.describe(APP, NAMES);

  before(async () => {
    if (reason) return;
    await fleet.start();
    await Promise.all(NAMES.map((name) => fleet.startAgent({ name })));
  });

  after(async () => {
    if (reason) return;
    await fleet.destroy({ deleteNamespacePods: 'default' });
  });

  it('kubectl drain evicts a node’s pods, which come up on the other nodes', async (t) => {
    await fleet.waitReady(NAMES);
    const file = join(fleet.dir, 'deployment.json');
    writeFileSync(file, JSON.stringify(deployment(APP, REPLICAS, MARKER, { cpuRequest: '100m' })));
    await kubectl(['apply', '-f', file]);
    await waitFor(
      async () => `the Deployment Available: ${await state()}`,
      () => fleet.available(APP, REPLICAS),
      90_000,
    );
    const node = 'pv-1';
    const before = podsOn(live(await fleet.pods(APP)), node).length;
    assert.ok(before > 0);
    const t0 = Date.now();
    // kubectl drains through the eviction API and waits for the pods to be gone.
    await kubectl(['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=90s'], 100_000);
    await waitFor(
      async () => `the Deployment Available again without ${node}: ${await state()}`,
      () => fleet.available(APP, REPLICAS),
      90_000,
    );
    t.diagnostic(`drained ${before} pods off ${node}; Available again in ${Date.now() - t0} ms: ${JSON.stringify(await fleet.spread(APP, NAMES))}`);
    assert.equal(podsOn(await fleet.pods(APP), node).length, 0, `no pod left on ${node}`);
    await waitFor(`the container processes of ${node} gone`, async () => (await processesOf(node)).length === 0, 30_000);
    assert.equal((await fleet.cp.getJSON<Json>(['node', node]))!.spec.unschedulable, true, 'drain cordons the node');
    assert.deepEqual(await fleet.failedPods(APP), []);
  });
});
