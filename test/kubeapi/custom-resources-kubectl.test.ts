// CustomResourceDefinitions against a real `podvisor agent` with kubectl 1.20 and 1.32: the CRD accepted
// and Established, its resources served with printer columns, short names and category all, defaulting
// and pruning, validation failures in the API server's words, a second version (conversion None),
// kubectl scale through the scale subresource, a watch, merge patches (strategic merge: 415), field
// and label selectors; the agent restarted keeps CRD and objects; the CRD deleted takes its objects.

import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectl132Path, kubectlPath, kubectlSpawn, runKubectl, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const crdFile = fileURLToPath(new URL('../../../test/fixtures/crds/crontab-crd.yaml', import.meta.url));

const cronTab = (name: string, spec: string) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
  labels: {app: ${name}}
spec:
${spec}
`;

async function startAgent(root: string): Promise<CliProcess> {
  const agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
  await agent.waitFor('stderr', /podvisor agent started/);
  return agent;
}

async function stop(agent: CliProcess): Promise<void> {
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
}

test('a CRD served to kubectl: columns, short names, defaulting, pruning, validation, scale, watch, versions, restart, deletion', { skip }, async (t) => {
  const scratch = await tempDir();
  t.after(() => scratch.remove());
  const root = join(scratch.path, 'root');
  let agent = await startAgent(root);
  t.after(() => stop(agent));
  const a = { kubeconfig: join(root, 'kubeconfig'), dir: scratch.path };
  const file = (name: string, body: string) => {
    const f = join(scratch.path, `${name}.yaml`);
    writeFileSync(f, body);
    return f;
  };

  let r = await kubectl(a, ['apply', '-f', crdFile]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
  r = await kubectl(a, ['get', 'crd']);
  assert.match(r.stdout, /^NAME\s+CREATED AT\ncrontabs\.stable\.example\.com\s+\d{4}-\d\d-\d\dT/);
  r = await kubectl(a, ['get', 'crd', 'crontabs.stable.example.com', '-o', 'jsonpath={.status.conditions[*].reason} {.status.storedVersions}']);
  assert.equal(r.stdout, 'NoConflicts InitialNamesAccepted ["v1"]');

  // Defaulting and pruning.
  r = await kubectl(a, ['apply', '-f', file('one', cronTab('one', '  cronSpec: "* * * * */5"\n  unknownField: x'))]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /crontab.stable.example.com\/one created/);
  r = await kubectl(a, ['get', 'crontab', 'one', '-o', 'jsonpath={.spec}']);
  assert.deepEqual(JSON.parse(r.stdout), { cronSpec: '* * * * */5', image: 'busybox', replicas: 1 });

  // Printer columns by the short name; category all.
  r = await kubectl(a, ['get', 'ct']);
  assert.match(r.stdout, /^NAME\s+SPEC\s+REPLICAS\s+AGE\none\s+\* \* \* \* \*\/5\s+1\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'all']);
  assert.match(r.stdout, /crontab\.stable\.example\.com\/one\s+\* \* \* \* \*\/5\s+1/);

  // Validation failures, all at once, in the API server's words.
  r = await kubectl(a, ['apply', '-f', file('bad', cronTab('bad', '  cronSpec: nope\n  replicas: 20\n  mode: c'))]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /The CronTab "bad" is invalid: /);
  assert.match(r.stderr, /spec\.cronSpec: Invalid value: "nope": spec\.cronSpec in body should match/);
  assert.match(r.stderr, /spec\.mode: Unsupported value: "c": supported values: "a", "b"/);
  assert.match(r.stderr, /spec\.replicas: Invalid value: 20: spec\.replicas in body should be less than or equal to 10/);

  // A watch sees the scale subresource's change.
  const watch = kubectlSpawn(a, ['get', 'ct', '-w', '--output-watch-events']);
  t.after(() => watch.kill());
  await waitFor('the watch to list', async () => /ADDED\s+one/.test(watch.out()), 30_000);
  r = await kubectl(a, ['scale', 'ct', 'one', '--replicas=3']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /crontab.stable.example.com\/one scaled/);
  await waitFor('the watch to see the scale', async () => /MODIFIED\s+one\s+\* \* \* \* \*\/5\s+3/.test(watch.out()), 30_000);
  watch.kill();

  // Merge patch; strategic merge is refused as upstream refuses it for custom resources.
  r = await kubectl(a, ['patch', 'ct', 'one', '--type=merge', '-p', '{"spec":{"replicas":2}}']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['patch', 'ct', 'one', '-p', '{"spec":{"replicas":4}}']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /UnsupportedMediaType|not supported/);

  // The second version serves the same object with its apiVersion; selectors.
  r = await kubectl(a, ['get', 'crontabs.v1beta1.stable.example.com', 'one', '-o', 'jsonpath={.apiVersion} {.spec.replicas}']);
  assert.equal(r.stdout, 'stable.example.com/v1beta1 2');
  r = await kubectl(a, ['get', 'ct', '--field-selector', 'metadata.name=one', '-l', 'app=one', '-o', 'name']);
  assert.equal(r.stdout, 'crontab.stable.example.com/one\n');
  r = await kubectl(a, ['get', 'ct', '--field-selector', 'metadata.name=two', '-o', 'name']);
  assert.equal(r.stdout, '');

  if (kubectl132Path) {
    r = await runKubectl(kubectl132Path, a, ['get', 'ct', 'one', '-o', 'jsonpath={.spec.replicas}']);
    assert.equal(r.stdout, '2', r.stderr);
    r = await runKubectl(kubectl132Path, a, ['scale', 'crontab', 'one', '--replicas=5']);
    assert.equal(r.code, 0, r.stderr);
  }

  // A restarted agent keeps the CRD and its objects.
  await stop(agent);
  agent = await startAgent(root);
  r = await kubectl(a, ['get', 'ct', 'one', '-o', 'jsonpath={.spec.replicas}']);
  assert.equal(r.stdout, kubectl132Path ? '5' : '2', r.stderr);

  // The CRD deleted takes its objects and their files.
  r = await kubectl(a, ['delete', 'crd', 'crontabs.stable.example.com']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the objects to be removed', async () => !existsSync(join(root, 'api-objects', 'crontabs.stable.example.com')), 30_000);
  r = await kubectl(a, ['get', 'crontabs.stable.example.com']);
  assert.equal(r.code, 1);
});

const gatewayObjects = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`;

test('the Gateway API v1.2.1 standard CRDs applied whole, their objects defaulted by their schemas', { skip }, async (t) => {
  const scratch = await tempDir();
  t.after(() => scratch.remove());
  const root = join(scratch.path, 'root');
  const agent = await startAgent(root);
  t.after(() => stop(agent));
  const a = { kubeconfig: join(root, 'kubeconfig'), dir: scratch.path };
  const crds = fileURLToPath(new URL('../../../test/fixtures/crds/gateway-api-v1.2.1-standard-install.yaml', import.meta.url));
  let r = await kubectl(a, ['apply', '-f', crds]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.match(/customresourcedefinition.apiextensions.k8s.io\/\S+ created/g)?.length, 5, r.stdout);
  // The CEL rules are said to be skipped.
  assert.match(r.stderr, /Warning: version v1: the x-kubernetes-validations rules at .* are not evaluated by this server \(no CEL evaluator\)/);
  const objects = join(scratch.path, 'gw.yaml');
  writeFileSync(objects, gatewayObjects);
  r = await kubectl(a, ['apply', '-f', objects]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /httproute.gateway.networking.k8s.io\/route created/);
  r = await kubectl(a, ['get', 'httproute', 'route', '-o', 'jsonpath={.spec.rules[0].matches[0].path.type} {.spec.parentRefs[0].kind}']);
  assert.equal(r.stdout, 'PathPrefix Gateway');
  r = await kubectl(a, ['get', 'gatewayclass', 'example']);
  assert.match(r.stdout, /^NAME\s+CONTROLLER\s+ACCEPTED\s+AGE\nexample\s+example.com\/gateway-controller\s+Unknown\s+\d+s\n$/);
});
