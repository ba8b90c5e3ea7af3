// Garbage collection on a real `podvisor agent` with each propagation policy, driven by the real
// kubectl: `delete deploy` (Background) removes its ReplicaSet and pods; `--cascade=orphan` leaves
// them, without the reference to the Deployment; `--cascade=foreground` keeps the Deployment, marked
// with the foregroundDeletion finalizer and a deletionTimestamp, until its ReplicaSet and pods are gone.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { holdsFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };

/** A Deployment of two pods that take `grace` seconds to stop (they ignore SIGTERM). */
async function deploy(a: Api, name: string, grace: number): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: ${grace}
      containers: [{name: main, image: busybox, command: [sh, -c, 'trap "" TERM; while true; do sleep 1; done']}]
`,
  );
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    `the pods of ${name} to run`,
    async () => (await kubectl(a, ['get', 'pods', '-l', `app=${name}`, '-o', 'jsonpath={.items[*].status.phase}'])).stdout === 'Running Running',
    60_000,
  );
}

const names = async (a: Api, kind: string, selector: string) =>
  (await kubectl(a, ['get', kind, '-l', selector, '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean);

test('Background (the default): the ReplicaSet and its pods go with the Deployment', { skip }, async (t) => {
  const a = env.api(t);
  await deploy(a, 'bg', 1);
  const r = await kubectl(a, ['delete', 'deploy', 'bg']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the ReplicaSet and pods of bg to be gone', async () => (await names(a, 'rs,pods', 'app=bg')).length === 0, 60_000);
});

test('--cascade=orphan: the ReplicaSet and pods stay, no longer owned by the Deployment', { skip }, async (t) => {
  const a = env.api(t);
  await deploy(a, 'orph', 1);
  const [rs] = await names(a, 'rs', 'app=orph');
  let r = await kubectl(a, ['delete', 'deploy', 'orph', '--cascade=orphan']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'deploy', 'orph']);
  assert.match(r.stderr, /deployments.apps "orph" not found/);
  r = await kubectl(a, ['get', 'rs', rs!, '-o', 'jsonpath={.metadata.ownerReferences}']);
  assert.equal(r.stdout, '');
  // The ReplicaSet still keeps its pods (they still name it).
  await holdsFor(
    'the orphaned ReplicaSet to keep its two pods',
    async () => {
      const owners = (await kubectl(a, ['get', 'pods', '-l', 'app=orph', '-o', 'jsonpath={.items[*].metadata.ownerReferences[0].name}'])).stdout;
      return owners === `${rs} ${rs}`;
    },
    3000,
  );
  r = await kubectl(a, ['delete', 'rs', rs!]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the pods of orph to be gone', async () => (await names(a, 'pods', 'app=orph')).length === 0, 60_000);
});

test('--cascade=foreground: the Deployment stays, finalized, until its ReplicaSet and pods are gone', { skip }, async (t) => {
  const a = env.api(t);
  await deploy(a, 'fg', 3);
  let r = await kubectl(a, ['delete', 'deploy', 'fg', '--cascade=foreground', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'deploy', 'fg', '-o', 'jsonpath={.metadata.finalizers} {.metadata.deletionTimestamp}']);
  assert.match(r.stdout, /^\["foregroundDeletion"\] \d{4}-\d\d-\d\dT/);
  // The pods take their grace period to stop: meanwhile the Deployment is there.
  await waitFor(
    'the pods of fg to be terminating',
    async () =>
      (await kubectl(a, ['get', 'pods', '-l', 'app=fg', '-o', 'jsonpath={.items[*].metadata.deletionTimestamp}'])).stdout.split(' ').filter(Boolean).length ===
      2,
    30_000,
  );
  r = await kubectl(a, ['get', 'deploy', 'fg', '-o', 'name']);
  assert.equal(r.stdout.trim(), 'deployment.apps/fg');
  await waitFor('the Deployment fg to be gone', async () => (await kubectl(a, ['get', 'deploy', 'fg'])).stderr.includes('not found'), 60_000);
  assert.deepEqual(await names(a, 'rs,pods', 'app=fg'), [], 'nothing of fg outlives it');
});
