// The workload kinds served by a real `podvisor agent` to the real kubectl: apply of apps/v1 and
// batch/v1 objects with the API server's defaults, validation errors in its words, kubectl's Table
// columns, the scale subresource (`kubectl scale`), strategic merge on the pod template (`set image`,
// `set env`) counted in metadata.generation, the batch versions of 1.30 (no batch/v1beta1), and the objects kept across an
// agent restart.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess | undefined;

async function startAgent(): Promise<void> {
  agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
  await agent.waitFor('stderr', /podvisor agent started/);
}

async function stopAgent(): Promise<void> {
  if (!agent) return;
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  agent = undefined;
}

before(async () => {
  if (skip) return;
  dir = await tempDir();
  root = join(dir.path, 'root');
  await startAgent();
});

after(async () => {
  if (skip) return;
  await stopAgent();
  await dir.remove();
});

function api(t: { after(fn: () => void): void }): { kubeconfig: string; dir: string } {
  const d = mkdtempSync(join(dir.path, 'kubectl-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return { kubeconfig: join(root, 'kubeconfig'), dir: d };
}

function manifest(name: string, body: string): string {
  const file = join(dir.path, `${name}.yaml`);
  writeFileSync(file, body);
  return file;
}

const workloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop}
spec:
  replicas: 0
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers: [{name: main, image: busybox, command: [sleep, "300"]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: main, image: busybox}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {disk: ssd}
      containers: [{name: main, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "0 3 * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: main, image: busybox}]
`;

test('kubectl apply of workloads: defaults, Tables, scale, set image and env, the batch versions of 1.30, kept across a restart', { skip }, async (t) => {
  const a = api(t);
  let r = await kubectl(a, ['apply', '-f', manifest('workloads', workloads)]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /deployment\.apps\/shop created\nstatefulset\.apps\/db created\ndaemonset\.apps\/agent created\ncronjob\.batch\/tick created/);

  r = await kubectl(a, [
    'get',
    'deploy',
    'shop',
    '-o',
    'jsonpath={.spec.strategy.rollingUpdate.maxSurge} {.spec.revisionHistoryLimit} {.spec.progressDeadlineSeconds} {.metadata.generation}',
  ]);
  assert.equal(r.stdout, '25% 10 600 1');
  r = await kubectl(a, ['get', 'sts', 'db', '-o', 'jsonpath={.spec.podManagementPolicy} {.spec.updateStrategy.rollingUpdate.partition}']);
  assert.equal(r.stdout, 'OrderedReady 0');
  r = await kubectl(a, ['get', 'cj', 'tick', '-o', 'jsonpath={.spec.concurrencyPolicy} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit}']);
  assert.equal(r.stdout, 'Allow 3 1');

  r = await kubectl(a, ['get', 'deploy']);
  assert.match(r.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nshop\s+0\/0\s+0\s+0\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'sts']);
  assert.match(r.stdout, /^NAME\s+READY\s+AGE\ndb\s+0\/0\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'ds']);
  assert.match(r.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+0\s+0\s+0\s+0\s+0\s+disk=ssd\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'cronjobs']);
  assert.match(r.stdout, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\ntick\s+0 3 \* \* \*\s+<none>\s+True\s+0\s+<none>\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'deploy', '-o', 'wide']);
  assert.match(r.stdout, /CONTAINERS\s+IMAGES\s+SELECTOR\nshop\s.*main\s+busybox\s+app=shop\n$/);

  // The scale subresource, then strategic merges on the template: each spec change is a generation.
  r = await kubectl(a, ['scale', 'deploy/shop', '--replicas=0']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', '--raw', '/apis/apps/v1/namespaces/default/deployments/shop/scale']);
  const scale = JSON.parse(r.stdout) as { spec: { replicas: number }; status: { selector: string } };
  assert.deepEqual([scale.spec.replicas, scale.status.selector], [0, 'app=shop']);
  r = await kubectl(a, ['set', 'image', 'deploy/shop', 'main=busybox:1.36']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['set', 'env', 'deploy/shop', 'MODE=fast']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, [
    'get',
    'deploy',
    'shop',
    '-o',
    'jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[0].value} {.metadata.generation}',
  ]);
  assert.equal(r.stdout, 'busybox:1.36 fast 3');

  // The status subresource writes the status alone.
  r = await kubectl(a, ['get', '--raw', '/apis/apps/v1/namespaces/default/deployments/shop/status']);
  assert.equal(JSON.parse(r.stdout).kind, 'Deployment');

  // The versions of the release the agent reports (1.30): batch/v1 alone; batch/v1beta1 CronJob went in 1.25.
  r = await kubectl(a, ['get', '--raw', '/apis/batch']);
  assert.deepEqual(JSON.parse(r.stdout).versions, [{ groupVersion: 'batch/v1', version: 'v1' }]);
  r = await kubectl(a, ['get', '--raw', '/apis/batch/v1beta1/namespaces/default/cronjobs/tick']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /NotFound|could not find the requested resource/);

  await stopAgent();
  await startAgent();
  r = await kubectl(a, ['get', 'deploy,sts,ds,cronjob', '-o', 'name']);
  assert.equal(r.stdout, 'deployment.apps/shop\nstatefulset.apps/db\ndaemonset.apps/agent\ncronjob.batch/tick\n');
  r = await kubectl(a, ['get', 'deploy', 'shop', '-o', 'jsonpath={.metadata.generation}']);
  assert.equal(r.stdout, '3');
  r = await kubectl(a, ['delete', '-f', manifest('workloads', workloads)]);
  assert.equal(r.code, 0, r.stderr);
});

test('workloads are validated as the API server validates them', { skip }, async (t) => {
  const a = api(t);
  const bad = `apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`;
  let r = await kubectl(a, ['apply', '-f', manifest('bad', bad)]);
  assert.notEqual(r.code, 0);
  // kubectl prints the causes on one line (1.20) or one per line (newer): each is checked.
  assert.match(r.stderr, /Deployment "bad" is invalid/);
  for (const cause of [
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"bad"}: `selector` does not match template `labels`',
    'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
  ]) {
    assert.ok(r.stderr.includes(cause), `${cause} in ${r.stderr}`);
  }
  const job = `apiVersion: batch/v1
kind: Job
metadata: {name: nojob}
spec:
  template:
    spec:
      containers: [{name: main, image: busybox}]
`;
  r = await kubectl(a, ['apply', '-f', manifest('job', job)]);
  assert.match(r.stderr, /Job "nojob" is invalid: spec\.template\.spec\.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"/);
  const cron = `apiVersion: batch/v1
kind: CronJob
metadata: {name: badcron}
spec:
  schedule: "every minute"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox}]
`;
  r = await kubectl(a, ['apply', '-f', manifest('cron', cron)]);
  assert.match(r.stderr, /CronJob "badcron" is invalid: spec\.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: \[every minute\]/);
});
