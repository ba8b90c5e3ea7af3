// v1 ReplicationControllers on a real `podvisor agent` driven by real kubectl 1.20 ($KUBECTL) and
// the newer kubectl: applied, kept at their replicas by the ReplicaSet controller run over RCs (pods
// `<rc>-xxxxx` owned by the RC), `kubectl get rc` in its columns (NAME DESIRED CURRENT READY AGE),
// `kubectl scale rc` with both through the scale subresource, and deleted with their pods.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };

const rc = `apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: main, image: busybox, command: [sleep, "300"]}]
`;

async function running(a: Api): Promise<string[]> {
  const r = await kubectl(a, [
    'get',
    'pods',
    '-l',
    'app=web',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.metadata.ownerReferences[0].kind}{"\\n"}{end}',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => / Running ReplicationController$/.test(l));
}

test('a ReplicationController: defaulted selector, its pods, kubectl get rc, kubectl scale rc (1.20 and newer), deleted with its pods', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(env.dir, 'rc.yaml');
  writeFileSync(file, rc);
  let r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /replicationcontroller\/web created/);
  r = await kubectl(a, ['get', 'rc', 'web', '-o', 'jsonpath={.spec.selector.app} {.metadata.labels.app}']);
  assert.equal(r.stdout, 'web web');
  await waitFor('2 pods Running', async () => (await running(a)).length === 2, 60_000);
  assert.ok((await running(a)).every((l) => l.startsWith('web-')));
  const ready = async (n: number) => (await kubectl(a, ['get', 'rc', 'web', '-o', 'jsonpath={.status.readyReplicas}'])).stdout === String(n);
  await waitFor('status readyReplicas 2', () => ready(2), 60_000);
  r = await kubectl(a, ['get', 'rc']);
  const [header, row] = r.stdout.trim().split('\n');
  assert.match(header!, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE$/);
  assert.match(row!, /^web\s+2\s+2\s+2\s+\S+$/);

  r = await kubectl(a, ['scale', 'rc', 'web', '--replicas=3']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /replicationcontroller\/web scaled/);
  await waitFor('3 pods Running', async () => (await running(a)).length === 3, 60_000);

  if (kubectl132Path) {
    r = await runKubectl(kubectl132Path, a, ['scale', 'rc', 'web', '--replicas=1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /replicationcontroller\/web scaled/);
    await waitFor('1 pod left', async () => (await running(a)).length === 1, 60_000);
    await waitFor('status readyReplicas 1', () => ready(1), 60_000);
    r = await runKubectl(kubectl132Path, a, ['get', 'rc', 'web', '--no-headers']);
    assert.match(r.stdout, /^web\s+1\s+1\s+1\s+\S+$/m);
    r = await runKubectl(kubectl132Path, a, ['get', 'all']);
    assert.match(r.stdout, /replicationcontroller\/web/);
  }
  r = await kubectl(a, ['delete', 'rc', 'web']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('its pods gone', async () => (await kubectl(a, ['get', 'pods', '-l', 'app=web', '-o', 'name'])).stdout.trim() === '', 60_000);
});
