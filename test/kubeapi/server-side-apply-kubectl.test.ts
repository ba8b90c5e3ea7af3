// Server-side apply with the real kubectl (1.32 and 1.20): objects created and updated by
// `kubectl apply --server-side`, a second manager's conflicting apply refused in the API server's
// words, `--force-conflicts` taking the field, both managers in managedFields, a field dropped from
// the applied manifest removed, and an object created by client-side apply taken over server-side.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl132Path, kubectlPath, runKubectl } from './harness.js';

const skip = kubectlPath && kubectl132Path ? false : 'kubectl 1.20 and 1.32 are needed';
const env = useKubectlAgent(skip);

const deployment = (replicas: number, labels: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {${labels}}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: busybox, command: [sleep, "600"]}]}
`;

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}

for (const [version, bin] of [
  ['1.32', kubectl132Path],
  ['1.20', kubectlPath],
] as const) {
  test(`kubectl ${version} apply --server-side: conflicts, force, managedFields, removed fields`, { skip }, async (t) => {
    const a = env.api(t);
    const ns = `ssa-${version.replace('.', '-')}`;
    const k = (args: string[], input?: string) => runKubectl(bin!, a, ['-n', ns, ...args], input);
    assert.equal((await k(['create', 'namespace', ns])).code, 0);
    let r = await k(['apply', '--server-side', '-f', '-'], deployment(2, 'app: web, tier: front'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment\.apps\/web serverside-applied/);
    r = await k(['apply', '--server-side', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1", b: "2"}\n');
    assert.equal(r.code, 0, r.stderr);

    // Another manager sets the same field to another value: refused, then forced.
    r = await k(['apply', '--server-side', '--field-manager=scaler', '-f', '-'], deployment(5, 'app: web'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.replicas/);
    r = await k(['apply', '--server-side', '--field-manager=scaler', '--force-conflicts', '-f', '-'], deployment(5, 'app: web'));
    assert.equal(r.code, 0, r.stderr);

    // kubectl 1.21 and later drop managedFields from what they print unless asked.
    r = await k(['get', 'deployment', 'web', '-o', 'json', ...(version === '1.32' ? ['--show-managed-fields'] : [])]);
    const obj = JSON.parse(r.stdout) as { spec: { replicas: number }; metadata: { managedFields: Entry[]; labels: Record<string, string> } };
    assert.equal(obj.spec.replicas, 5);
    const managers = obj.metadata.managedFields.map((e) => `${e.manager}/${e.operation}`);
    assert.ok(managers.includes('kubectl/Apply') && managers.includes('scaler/Apply'), managers.join(','));
    const kubectlFields = JSON.stringify(obj.metadata.managedFields.find((e) => e.manager === 'kubectl')!.fieldsV1);
    assert.doesNotMatch(kubectlFields, /f:replicas/);

    // The first manager drops a label from its manifest (and the replicas it no longer owns): the label goes.
    r = await k(['apply', '--server-side', '-f', '-'], deployment(5, 'app: web').replace('  replicas: 5\n', ''));
    assert.equal(r.code, 0, r.stderr);
    r = await k(['get', 'deployment', 'web', '-o', 'jsonpath={.metadata.labels.tier}/{.spec.replicas}']);
    assert.equal(r.stdout, '/5');
    r = await k(['apply', '--server-side', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1"}\n');
    assert.equal(r.code, 0, r.stderr);
    r = await k(['get', 'configmap', 'settings', '-o', 'jsonpath={.data}']);
    assert.equal(r.stdout, '{"a":"1"}');
    if (version === '1.32') {
      // A scale takes the replicas through the scale subresource: the applier that owned them now conflicts with it.
      r = await k(['scale', 'deployment', 'web', '--replicas=3']);
      assert.equal(r.code, 0, r.stderr);
      r = await k(['apply', '--server-side', '--field-manager=scaler', '-f', '-'], deployment(5, 'app: web'));
      assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl[^"]*" with subresource "scale" using apps\/v1: \.spec\.replicas/);
    }
  });
}

test('kubectl 1.32 get -o yaml --show-managed-fields shows every manager; a client-side-applied object taken over server-side', { skip }, async (t) => {
  const a = env.api(t);
  const k = (args: string[], input?: string) => runKubectl(kubectl132Path!, a, args, input);
  const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa, namespace: default}\ndata: {${data}}\n`;
  let r = await k(['apply', '-f', '-'], cm('x: "1", y: "2"'));
  assert.equal(r.code, 0, r.stderr);
  r = await k(['get', 'configmap', 'csa', '-o', 'yaml', '--show-managed-fields']);
  assert.match(r.stdout, /manager: kubectl-client-side-apply\n\s+operation: Update/);
  r = await k(['get', 'configmap', 'csa', '-o', 'yaml']);
  assert.doesNotMatch(r.stdout, /managedFields/);
  // kubectl migrates the client-side applier's fields to its Apply manager, then applies: y goes.
  r = await k(['apply', '--server-side', '-f', '-'], cm('x: "1"'));
  assert.equal(r.code, 0, r.stderr);
  r = await k(['get', 'configmap', 'csa', '-o', 'json', '--show-managed-fields']);
  const obj = JSON.parse(r.stdout) as { data: Record<string, string>; metadata: { managedFields: Entry[] } };
  assert.deepEqual(obj.data, { x: '1' });
  const managers = obj.metadata.managedFields.map((e) => `${e.manager}/${e.operation}`);
  assert.ok(managers.includes('kubectl/Apply'), managers.join(','));
  assert.ok(!managers.includes('kubectl-client-side-apply/Update'), managers.join(','));
});

test('kubectl 1.32 apply --server-side of a Pod: created, then updated, with its manager', { skip }, async (t) => {
  const a = env.api(t);
  const k = (args: string[], input?: string) => runKubectl(kubectl132Path!, a, args, input);
  const pod = (labels: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ssa-pod, namespace: default, labels: {${labels}}}\nspec: {containers: [{name: main, image: busybox, command: [sleep, "600"]}]}\n`;
  let r = await k(['apply', '--server-side', '-f', '-'], pod('a: "1", b: "2"'));
  assert.equal(r.code, 0, r.stderr);
  r = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], pod('a: "9"'));
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.metadata\.labels\.a/);
  r = await k(['apply', '--server-side', '-f', '-'], pod('a: "1"'));
  assert.equal(r.code, 0, r.stderr);
  r = await k(['get', 'pod', 'ssa-pod', '-o', 'json', '--show-managed-fields']);
  const obj = JSON.parse(r.stdout) as { metadata: { labels: Record<string, string>; managedFields: Entry[] } };
  assert.deepEqual(obj.metadata.labels, { a: '1' });
  assert.ok(obj.metadata.managedFields.some((e) => e.manager === 'kubectl' && e.operation === 'Apply'));
  assert.equal((await k(['delete', 'pod', 'ssa-pod', '--grace-period=0', '--force'])).code, 0);
});
