// A podvisor node lost and back, under the real kube-controller-manager: three podvisor nodes (process
// runtime) and a Deployment whose pods tolerate an unreachable node for 2 s. The agent of one node is
// SIGKILLed: the node goes NotReady once its Lease is older than the node-monitor grace period, its
// pods are evicted and recreated on the others; the agent, back, finishes the pods still Terminating
// and removes the containers of those the cluster deleted outright meanwhile.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../fixtures/wait.js';
import { NodeFleet, deployment, live, podsOn, runMarker, skipReason, type Json } from './node-fleet.js';

const reason = skipReason();
const NAMES = ['pv-a', 'pv-b', 'pv-c'];
const APP = 'survivor';
const REPLICAS = 9;
const TOLERATION_SECONDS = 2;
/** The controller-manager's node-monitor grace: two lease renewals (every 10 s) may be late by a few seconds. */
const GRACE_SECONDS = 20;
const MARKER = runMarker();

describe('a podvisor node lost and back', { skip: reason ? `skipped: ${reason}` : false, timeout: 170_000 }, () => {
  const fleet = reason ? undefined! : new NodeFleet({ nodeMonitorGraceSeconds: GRACE_SECONDS, nodeMonitorPeriodSeconds: 1 });
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

  it('a node whose agent is killed goes NotReady, its pods are evicted and recreated elsewhere; back, it removes their containers', async (t) => {
    await fleet.waitReady(NAMES);
    const file = join(fleet.dir, 'deployment.json');
    writeFileSync(file, JSON.stringify(deployment(APP, REPLICAS, MARKER, { tolerationSeconds: TOLERATION_SECONDS, cpuRequest: '100m' })));
    await kubectl(['apply', '-f', file]);
    await waitFor(
      async () => `the Deployment Available: ${await state()}`,
      () => fleet.available(APP, REPLICAS),
      90_000,
    );

    const node = 'pv-b';
    const victims = podsOn(live(await fleet.pods(APP)), node).map((p) => p.metadata.name as string);
    assert.ok(victims.length > 0, `${node} runs some pods`);
    assert.equal((await processesOf(node)).length, victims.length);
    const t0 = Date.now();
    await fleet.killAgent(node);

    const readyStatus = async () =>
      ((await fleet.cp.getJSON<Json>(['node', node]))!.status.conditions as Json[]).find((c) => c.type === 'Ready')?.status as string | undefined;
    await waitFor(
      async () => `${node} NotReady (Ready Unknown) once its Lease is older than ${GRACE_SECONDS} s: ${await state()}`,
      async () => (await readyStatus()) === 'Unknown',
      GRACE_SECONDS * 1000 + 30_000,
    );
    const notReadyMs = Date.now() - t0;
    assert.ok(notReadyMs >= GRACE_SECONDS * 1000 - 10_000, `not NotReady before the grace period less one renew interval (${notReadyMs} ms)`);
    await waitFor(
      async () => `the pods of ${node} evicted (deletionTimestamp) after ${TOLERATION_SECONDS} s: ${await state()}`,
      async () => (await fleet.pods(APP)).filter((p) => victims.includes(p.metadata.name)).every((p) => p.metadata.deletionTimestamp),
      60_000,
    );
    await waitFor(
      async () => `${REPLICAS} pods Available again on the other nodes: ${await state()}`,
      () => fleet.available(APP, REPLICAS),
      60_000,
    );
    t.diagnostic(
      `${node} NotReady ${notReadyMs} ms after the kill (grace ${GRACE_SECONDS} s); its ${victims.length} pods recreated elsewhere, Available at ${Date.now() - t0} ms`,
    );
    assert.equal(podsOn(live(await fleet.pods(APP)), node).length, 0);

    // The agent is gone but its runtime service is not: the containers still run.
    assert.equal((await processesOf(node)).length, victims.length, `the containers of ${node} outlive its agent`);
    // Some evicted pods are removed outright meanwhile, as an operator does for an unreachable node
    // (grace 0); the others stay Terminating until their node confirms.
    const forced = victims.slice(0, Math.ceil(victims.length / 2));
    await kubectl(['delete', 'pod', ...forced, '--force', '--grace-period=0', '--wait=false']);

    const t1 = Date.now();
    await fleet.restartAgent(node);
    await fleet.waitReady([node], 60_000);
    await waitFor(
      async () =>
        `the Terminating pods of ${node} finished by its agent: ${await kubectl(['get', 'pods', '-o', 'wide', '--field-selector', `spec.nodeName=${node}`])}`,
      async () => podsOn(await fleet.pods(APP), node).length === 0,
      60_000,
    );
    await waitFor(
      async () => `no container process of ${node} left: ${JSON.stringify(await processesOf(node))}`,
      async () => (await processesOf(node)).length === 0,
      30_000,
    );
    t.diagnostic(
      `back, ${node} finished or removed the ${victims.length} deleted pods' containers in ${Date.now() - t1} ms (${forced.length} of them gone from the API server before)`,
    );
    assert.ok(await fleet.available(APP, REPLICAS), 'the Deployment stays Available');
    assert.deepEqual(await fleet.failedPods(APP), []);
  });
});
