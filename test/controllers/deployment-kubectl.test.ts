// The Deployment and ReplicaSet controllers of a real `podvisor agent` driven by the real kubectl:
// apply and `rollout status`, pods `<rs>-<5 chars>` owned by `<deploy>-<hash>`, `set image` rolling
// to a new ReplicaSet with the old one scaled to 0, `rollout history`, `rollout undo` back to the
// first ReplicaSet, `scale`, and `delete` taking the ReplicaSets and pods with it.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const deployment = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: ${image}, command: [sleep, "300"]}]
`;

test('a Deployment rolls out, updates, rolls back, scales and is deleted with its ReplicaSets and pods', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(env.dir, 'web.yaml');
  writeFileSync(file, deployment('busybox'));
  let r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /deployment "web" successfully rolled out/);

  r = await kubectl(a, [
    'get',
    'rs',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.metadata.annotations.deployment\\.kubernetes\\.io/revision} {.spec.replicas}{"\\n"}{end}',
  ]);
  const first = /^(web-[a-z0-9]+) 1 3$/m.exec(r.stdout)?.[1];
  assert.ok(first, r.stdout);
  const hash = first.slice('web-'.length);
  r = await kubectl(a, ['get', 'pods', '-o', 'name']);
  const pods = r.stdout.trim().split('\n');
  assert.equal(pods.length, 3, r.stdout);
  for (const p of pods) assert.match(p, new RegExp(`^pod/${first}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
  r = await kubectl(a, ['get', 'deploy', 'web', '-o', 'jsonpath={.status.conditions[*].reason} {.status.availableReplicas} {.status.observedGeneration}']);
  assert.equal(r.stdout, 'MinimumReplicasAvailable NewReplicaSetAvailable 3 1');
  r = await kubectl(a, [
    'get',
    'pods',
    '-l',
    `pod-template-hash=${hash}`,
    '-o',
    'jsonpath={.items[0].metadata.ownerReferences[0].kind}/{.items[0].metadata.ownerReferences[0].name}',
  ]);
  assert.equal(r.stdout, `ReplicaSet/${first}`);

  r = await kubectl(a, ['set', 'image', 'deploy/web', 'main=busybox:1.36']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'rs', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.spec.replicas}{"\\n"}{end}']);
  assert.match(r.stdout, new RegExp(`^${first} 0$`, 'm'));
  assert.match(r.stdout, /^web-[a-z0-9]+ 3$/m);
  r = await kubectl(a, ['rollout', 'history', 'deploy/web']);
  assert.match(r.stdout, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);

  // Undo returns to the first template: its ReplicaSet is scaled up again, as revision 3.
  r = await kubectl(a, ['rollout', 'undo', 'deploy/web']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'rs', first, '-o', 'jsonpath={.spec.replicas} {.metadata.annotations.deployment\\.kubernetes\\.io/revision}']);
  assert.equal(r.stdout, '3 3');

  r = await kubectl(a, ['scale', 'deploy/web', '--replicas=1']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('one pod left', async () => (await kubectl(a, ['get', 'pods', '-o', 'name'])).stdout.trim().split('\n').length === 1, 60_000);

  r = await kubectl(a, ['delete', 'deploy', 'web']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the ReplicaSets and pods to be gone', async () => (await kubectl(a, ['get', 'rs,pods', '-o', 'name'])).stdout === '', 60_000);
});
