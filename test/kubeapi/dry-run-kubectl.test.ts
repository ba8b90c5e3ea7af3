// Server-side dry run with the real kubectl: kubectl 1.20 first looks in /openapi/v2 for the kind's
// PATCH operation and its `dryRun` parameter, then sends `?dryRun=All`; the answer is the object as
// it would be stored, and nothing is stored.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const manifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: dry}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: busybox, command: [sleep, "60"]}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
`;

test('kubectl apply --dry-run=server answers for every kind and stores nothing', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['apply', '--dry-run=server', '-f', '-'], manifests);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /configmap\/settings created \(server dry run\)/);
  assert.match(r.stdout, /deployment\.apps\/web created \(server dry run\)/);
  assert.match(r.stdout, /job\.batch\/once created \(server dry run\)/);
  assert.match(r.stdout, /service\/web created \(server dry run\)/);
  r = await kubectl(a, ['get', 'configmap,deployment,job,service', '-o', 'name']);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /settings|deployment|job\.batch\/once|service\/web/);
});
