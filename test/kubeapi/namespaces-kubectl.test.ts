// Namespaces on a real `podvisor agent` driven by the real kubectl: the system namespaces exist and
// the immortal ones cannot be deleted; `kubectl create namespace` and `delete namespace` (Terminating
// while its content is deleted, then gone, with its objects of every kind); nothing is created in a
// namespace that is missing or being terminated, in the API server's words.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../fixtures/cli/cli-process.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

test('the system namespaces exist; default, kube-system and kube-public may not be deleted', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['get', 'namespaces']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+STATUS\s+AGE\n/);
  for (const ns of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) assert.match(r.stdout, new RegExp(`\\n${ns}\\s+Active\\s`));
  for (const ns of ['default', 'kube-system', 'kube-public']) {
    r = await kubectl(a, ['delete', 'namespace', ns]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`Error from server \\(Forbidden\\): namespaces "${ns}" is forbidden: this namespace may not be deleted`));
  }
  r = await kubectl(a, ['create', 'configmap', 'x', '-n', 'nowhere']);
  assert.notEqual(r.code, 0);
  // kubectl 1.20 prints the server's error as is; newer ones prefix "error: failed to create configmap:".
  assert.match(r.stderr, /^(error: failed to create configmap|Error from server \(NotFound\)): namespaces "nowhere" not found/);
  r = await kubectl(a, ['run', 'p', '--image=busybox', '-n', 'nowhere', '--command', '--', 'sleep', '1']);
  assert.match(r.stderr, /Error from server \(NotFound\): namespaces "nowhere" not found/);
});

test('a deleted namespace is Terminating until its objects and pods are gone, then goes', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['create', 'namespace', 'shop']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'namespace/shop created');
  r = await kubectl(a, ['get', 'namespace', 'shop', '-o', 'jsonpath={.status.phase} {.spec.finalizers} {.metadata.labels}']);
  assert.equal(r.stdout, 'Active ["kubernetes"] {"kubernetes.io/metadata.name":"shop"}');
  const file = join(env.dir, 'shop.yaml');
  writeFileSync(
    file,
    `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 3
      containers: [{name: main, image: busybox, command: [sh, -c, 'trap "" TERM; while true; do sleep 1; done']}]
`,
  );
  r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    "the Deployment's pods to run",
    async () => (await kubectl(a, ['get', 'pods', '-n', 'shop', '-o', 'jsonpath={.items[*].status.phase}'])).stdout === 'Running Running',
    60_000,
  );

  r = await kubectl(a, ['delete', 'namespace', 'shop', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'namespace "shop" deleted');
  r = await kubectl(a, ['get', 'namespace', 'shop']);
  assert.match(r.stdout, /\nshop\s+Terminating\s/);
  r = await kubectl(a, ['create', 'configmap', 'late', '-n', 'shop']);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /^(error: failed to create configmap|Error from server \(Forbidden\)): configmaps "late" is forbidden: unable to create new content in namespace shop because it is being terminated/,
  );

  await waitFor(
    'the namespace to be gone',
    async () => (await kubectl(a, ['get', 'namespace', 'shop'])).stderr.includes('namespaces "shop" not found'),
    60_000,
  );
  for (const kind of ['configmaps', 'deployments', 'replicasets', 'pods']) {
    r = await kubectl(a, ['get', kind, '-n', 'shop', '-o', 'name']);
    assert.equal(r.stdout.trim(), '', `${kind} left in shop`);
  }
  // The name is free again.
  r = await kubectl(a, ['create', 'namespace', 'shop']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['delete', 'namespace', 'shop']);
  assert.equal(r.code, 0, r.stderr);
});

test('the system namespaces are stored objects with a uid and a creationTimestamp', { skip }, async (t) => {
  const a = env.api(t);
  const r = await kubectl(a, ['get', 'namespaces', 'default', 'kube-system', 'kube-public', 'kube-node-lease', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const items = (JSON.parse(r.stdout) as { items: Array<{ metadata: { name: string; uid?: string; creationTimestamp?: string } }> }).items;
  assert.equal(items.length, 4);
  for (const ns of items) {
    assert.match(ns.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, ns.metadata.name);
    assert.ok(ns.metadata.uid, ns.metadata.name);
  }
});

test('podvisor apply and down of a file that creates the namespace its other objects use, as kubectl apply does', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(a.dir, 'app.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: filed}\ndata: {a: b}',
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: filed, labels: {team: web}}',
      'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: filed}\nspec: {selector: {app: web}, ports: [{port: 80}]}',
    ].join('\n---\n'),
  );
  let r = await runCli(['validate', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^namespace\/filed validated$/m);
  r = await runCli(['apply', '-f', file, '--root-dir', env.root]);
  assert.equal(r.code, 0, r.stderr);
  // The namespace first, whatever its place in the file.
  assert.match(r.stdout, /^namespace\/filed created\nconfigmap\/cfg created\nservice\/web created\n$/);
  const got = await kubectl(a, ['get', 'namespace', 'filed', '-o', 'jsonpath={.metadata.labels.team} {.status.phase}']);
  assert.equal(got.stdout, 'web Active');
  r = await runCli(['apply', '-f', file, '--root-dir', env.root]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^namespace\/filed unchanged$/m);
  r = await runCli(['down', '-f', file, '--root-dir', env.root]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /namespace "filed" deleted\n$/);
  await waitFor('the namespace to go', async () => (await kubectl(a, ['get', 'namespace', 'filed'])).code !== 0);
});
