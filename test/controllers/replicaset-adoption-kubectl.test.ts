// A ReplicaSet of a real `podvisor agent` adopting and releasing pods by their ownerReferences, driven
// by the real kubectl: an orphan pod its selector matches becomes its own (and stays so when read
// back), and a pod whose label is removed is released and replaced.

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
