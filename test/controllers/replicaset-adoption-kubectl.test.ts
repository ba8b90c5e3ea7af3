// ReplicaSets, StatefulSets and DaemonSets of a real `podvisor agent` adopting and releasing pods by
// their ownerReferences (ClaimPods), driven by the real kubectl: an orphan pod the selector matches
// becomes the controller's own (a StatefulSet's only when named as one of its ordinals) and stays so
// when read back, and a pod whose label is removed is released and replaced.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { holdsFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const container = '{name: main, image: busybox, command: [sleep, "3600"]}';

test('a ReplicaSet adopts an orphan pod it selects and releases it when its label goes', { skip }, async (t) => {
  const a = env.api(t);
  const pod = join(env.dir, 'orphan.yaml');
  writeFileSync(
    pod,
    `apiVersion: v1
kind: Pod
metadata: {name: orphan, labels: {app: adopt}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [${container}]
`,
  );
  let r = await kubectl(a, ['apply', '-f', pod]);
  assert.equal(r.code, 0, r.stderr);
  const rs = join(env.dir, 'rs.yaml');
  writeFileSync(
    rs,
    `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: keeper}
spec:
  replicas: 1
  selector: {matchLabels: {app: adopt}}
  template:
    metadata: {labels: {app: adopt}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [${container}]
`,
  );
  r = await kubectl(a, ['apply', '-f', rs]);
  assert.equal(r.code, 0, r.stderr);

  const owner = async (name: string) =>
    (await kubectl(a, ['get', 'pod', name, '-o', 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[0].name}']))
      .stdout;
  const podNames = async () =>
    (await kubectl(a, ['get', 'pods', '-l', 'app=adopt', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean).sort();
  await waitFor('the orphan pod to carry the ReplicaSet as its controller', async () => (await owner('orphan')) === 'ReplicaSet/keeper', 30_000);
  r = await kubectl(a, ['get', 'rs', 'keeper', '-o', 'jsonpath={.status.replicas}']);
  assert.equal(r.stdout, '1');
  // Adopted for good: no second pod is made and the reference stays on the stored pod.
  await holdsFor(
    'the adopted pod to be the only one, still owned',
    async () => (await podNames()).join(',') === 'orphan' && (await owner('orphan')) === 'ReplicaSet/keeper',
    3000,
  );

  r = await kubectl(a, ['label', 'pod', 'orphan', 'app-']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the released pod to lose its ownerReference', async () => (await owner('orphan')) === '/', 30_000);
  const replacement = await waitFor('a replacement pod of the ReplicaSet', async () => (await podNames()).find((n) => n.startsWith('keeper-')), 30_000);
  assert.equal(await owner(replacement), 'ReplicaSet/keeper');
  await holdsFor('the released pod to stay released', async () => (await owner('orphan')) === '/', 2000);

  r = await kubectl(a, ['delete', 'rs', 'keeper']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['delete', 'pod', 'orphan', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});

/** A bare pod with a label, as YAML. */
const orphanPod = (name: string, app: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: ${app}}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [${container}]
`;

async function applyYaml(a: { kubeconfig: string; dir: string }, name: string, body: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

const controllerOf = async (a: { kubeconfig: string; dir: string }, name: string) =>
  (await kubectl(a, ['get', 'pod', name, '-o', 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[0].name}'])).stdout;

test('a StatefulSet adopts an orphan named as its ordinal, not one named otherwise, and releases a pod whose label goes', { skip }, async (t) => {
  const a = env.api(t);
  await applyYaml(a, 'db-0', orphanPod('db-0', 'db'));
  await applyYaml(a, 'stray', orphanPod('stray', 'db'));
  await applyYaml(
    a,
    'db',
    `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [${container}]
`,
  );
  await waitFor('the orphan db-0 to carry the StatefulSet as its controller', async () => (await controllerOf(a, 'db-0')) === 'StatefulSet/db', 30_000);
  let r = await kubectl(a, ['rollout', 'status', 'sts/db', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await controllerOf(a, 'db-1'), 'StatefulSet/db');
  // A pod the selector matches but whose name is no ordinal of the set stays an orphan.
  await holdsFor('stray to stay an orphan', async () => (await controllerOf(a, 'stray')) === '/', 2000);
  r = await kubectl(a, ['get', 'sts', 'db', '-o', 'jsonpath={.status.replicas}']);
  assert.equal(r.stdout, '2');

  // Released when its label goes; the ordinal's name is taken, so the set waits for it to be freed.
  r = await kubectl(a, ['label', 'pod', 'db-1', 'app-']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('db-1 released', async () => (await controllerOf(a, 'db-1')) === '/', 30_000);
  r = await kubectl(a, ['delete', 'pod', 'db-1', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('db-1 made again by the StatefulSet', async () => (await controllerOf(a, 'db-1')) === 'StatefulSet/db', 60_000);

  r = await kubectl(a, ['delete', 'sts', 'db', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['delete', 'pod', 'stray', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});

test('a DaemonSet adopts an orphan pod it selects instead of making its own, and releases it when its label goes', { skip }, async (t) => {
  const a = env.api(t);
  await applyYaml(a, 'agent-pod', orphanPod('agent-pod', 'agent'));
  await applyYaml(
    a,
    'agent',
    `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [${container}]
`,
  );
  const podNames = async () =>
    (await kubectl(a, ['get', 'pods', '-l', 'app=agent', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean).sort();
  await waitFor('the orphan to carry the DaemonSet as its controller', async () => (await controllerOf(a, 'agent-pod')) === 'DaemonSet/agent', 30_000);
  await holdsFor("the adopted pod to be the node's only daemon pod", async () => (await podNames()).join(',') === 'agent-pod', 3000);
  let r = await kubectl(a, ['get', 'ds', 'agent', '-o', 'jsonpath={.status.currentNumberScheduled}']);
  assert.equal(r.stdout, '1');

  r = await kubectl(a, ['label', 'pod', 'agent-pod', 'app-']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the released pod to lose its ownerReference', async () => (await controllerOf(a, 'agent-pod')) === '/', 30_000);
  const made = await waitFor('a daemon pod of its own', async () => (await podNames()).find((n) => n.startsWith('agent-') && n !== 'agent-pod'), 30_000);
  assert.equal(await controllerOf(a, made), 'DaemonSet/agent');

  r = await kubectl(a, ['delete', 'ds', 'agent', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['delete', 'pod', 'agent-pod', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});
