// `podvisor wait` on workloads against a real agent: a Deployment whose pods the API refuses (the
// process runtime refuses a container without a command, which the Deployment's template is only
// warned about) fails the wait at once with its ReplicaFailure reason, exit 1, instead of waiting out
// --timeout; a StatefulSet named in a file whose pods are refused likewise, with its FailedCreate
// event; a Deployment that rolls out meets the wait.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from '../agent/helpers.js';

let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess;

before(async () => {
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
});

after(async () => {
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  await dir.remove();
});

const deployment = (name: string, container: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'busybox', ...container }] } },
  },
});

// A wait that ran out its 10 minutes would be killed by runCli's deadline (code null).
const wait = (...args: string[]) => runCli(['wait', '--root-dir', root, '--timeout=10m', ...args], 180_000);

test('wait on a Deployment whose pods are refused fails at once with the ReplicaFailure reason', async () => {
  const r = await call(join(root, 'podvisor.sock'), 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('nocmd', {}));
  assert.equal(r.status, 201, r.body);
  const w = await wait('deployment/nocmd', '--for=auto');
  assert.equal(w.code, 1, w.stderr);
  assert.match(
    w.stderr,
    /error: deployment\.apps\/nocmd: deployment "nocmd" cannot create its pods: FailedCreate: Pod "nocmd-\S+" is invalid: spec\.containers\[0\]\.command: Required value/,
  );
  assert.equal(w.stdout, '');
});

test('wait -f on a StatefulSet whose pods are refused fails at once with the FailedCreate reason', async () => {
  const name = 's'.repeat(62);
  const file = join(dir.path, 'sts.yaml');
  writeFileSync(
    file,
    `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}}
spec:
  serviceName: x
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      containers: [{name: main, image: busybox, command: [sleep, "100"]}]
`,
  );
  const r = await call(join(root, 'podvisor.sock'), 'POST', '/apis/apps/v1/namespaces/default/statefulsets', {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      serviceName: 'x',
      selector: { matchLabels: { app: 's' } },
      template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'main', image: 'busybox', command: ['sleep', '100'] }] } },
    },
  });
  assert.equal(r.status, 201, r.body);
  const w = await wait('-f', file, '--for=auto');
  assert.equal(w.code, 1, w.stderr);
  assert.match(
    w.stderr,
    new RegExp(`error: statefulset.apps/${name}: statefulset "${name}" cannot create its pods: FailedCreate: .*must be no more than 63 characters`),
  );
});

test('wait on a Deployment that rolls out is met; a missing one and a kubectl --for on a workload are refused', async () => {
  const r = await call(join(root, 'podvisor.sock'), 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('good', { command: ['sleep', '300'] }));
  assert.equal(r.status, 201, r.body);
  const w = await wait('deploy/good', '--for=running');
  assert.equal(w.code, 0, w.stderr);
  assert.equal(w.stdout, 'deployment.apps/good condition met\n');
  const missing = await wait('deployment/nope', '--for=auto');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /Error from server \(NotFound\): deployments\.apps "nope" not found/);
  const bad = await wait('deployment/good', '--for=condition=Available');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /a workload is waited for with --for=running, ready, completed or auto/);
});
