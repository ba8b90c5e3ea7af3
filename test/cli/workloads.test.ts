// Workloads on the command line, through the real executable: `validate` of Deployments, Jobs,
// Services beside pods (every error at once, exit 2), `run -f` of a Job (exit 0 when Complete, 1 with
// the failed pod's reason and log tail when Failed) and of a Deployment (rolled out, or failing at
// once when its pod crash-loops), the agent started for the run and stopped after; `up -d` then
// `get deploy|rs|jobs|all` as kubectl prints them, and kubectl's rollout commands against that agent;
// `up` of a Deployment, its final table showing the pods stopped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { lockOwner } from '../../src/runtime/root-lock.js';
import { waitFor } from '../fixtures/wait.js';

const kubectl = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  GREETING: hello
`;
const deployment = (name: string, script: string, replicas = 2) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: busybox
        command: ["sh", "-c", ${JSON.stringify(script)}]
        envFrom:
        - configMapRef: {name: web-config, optional: true}
`;
const service = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
`;
const job = (name: string, script: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", ${JSON.stringify(script)}]
`;
const bareJob = `apiVersion: v1
kind: Pod
metadata:
  name: bare
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["true"]
`;

async function scratch(files: Record<string, string>) {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp.path, name), text);
  const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);
  return { tmp, root, cli, file: (name: string) => join(tmp.path, name) };
}

test('validate: workloads and Services beside pods and ConfigMaps, any order; every error at once in the API server words, exit 2', async () => {
  const s = await scratch({
    'app.yaml': [job('migrate', 'true'), configMap, deployment('web', 'sleep 9'), service, bareJob].join('---\n'),
    'bad.yaml': [
      deployment('web', 'sleep 9', -1),
      job('Bad_Name', 'true').replace('restartPolicy: Never', 'restartPolicy: Always'),
      'apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: old\n',
    ].join('---\n'),
  });
  try {
    const ok = await runCli(['validate', '-f', s.file('app.yaml')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(
      ok.stdout,
      'configmap/web-config validated\njob.batch/migrate validated\ndeployment.apps/web validated\nservice/web validated\npod/bare validated\n',
    );
    const bad = await runCli(['validate', '-f', s.file('bad.yaml')]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.equal(
      bad.stderr,
      `error: unable to recognize "${s.file('bad.yaml')}": ${s.file('bad.yaml')}:35:1: document 2: no matches for kind "Deployment" in version "extensions/v1beta1": podvisor reads Deployment in apps/v1 (extensions/v1beta1 Deployment was removed in Kubernetes 1.16; set apiVersion: apps/v1)\n` +
        'The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n' +
        'The Job "Bad_Name" is invalid: \n' +
        `* metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n` +
        '* spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"\n',
    );
  } finally {
    await s.tmp.remove();
  }
});

test('run -f of a Job: exit 0 once Complete; exit 1 with the failed pod, its exit code and log tail; the agent started for the run is stopped', async () => {
  const s = await scratch({ 'ok.yaml': job('migrate', 'echo migrated'), 'fail.yaml': job('broken', 'echo cannot reach the database >&2; exit 3') });
  try {
    const ok = await s.cli('run', '-f', s.file('ok.yaml'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /^started the podvisor agent for .* for this run/m);
    assert.match(ok.stderr, /^job\.batch\/migrate created\njob\.batch\/migrate: job "migrate" completed \(1 succeeded\)\n/m);
    assert.match(ok.stdout, /^NAME +READY +STATUS +RESTARTS +AGE\nmigrate-[a-z0-9]{5} +0\/1 +Completed +0 +\d+s\n$/);
    assert.equal(lockOwner(s.root), undefined, 'the agent the run started has stopped');

    const failed = await s.cli('run', '-f', s.file('fail.yaml'));
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /^error: job\.batch\/broken: job "broken" failed: BackoffLimitExceeded: Job has reached the specified backoff limit\n/m);
    assert.match(failed.stderr, /^ {2}container main: exit code 3 \(Error\)\n {4}last 1 log line:\n {4}\| cannot reach the database\n/m);
    assert.match(failed.stdout, /^broken-[a-z0-9]{5} +0\/1 +Error +0 /m);
    assert.equal(lockOwner(s.root), undefined);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});

test('run -f of a Deployment with its ConfigMap and Service: rolled out, then torn down; a crash-looping one fails at once with the reason and logs', async () => {
  const s = await scratch({
    'web.yaml': [configMap, deployment('web', 'echo $GREETING; sleep 300'), service].join('---\n'),
    'crash.yaml': deployment('crash', 'echo starting; echo config missing >&2; exit 1', 1),
  });
  try {
    const ok = await s.cli('run', '-f', s.file('web.yaml'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /^configmap\/web-config created\nservice\/web created\ndeployment\.apps\/web created\n/m);
    assert.match(ok.stderr, /^deployment\.apps\/web: deployment "web" successfully rolled out\n/m);
    // Said once: the progress line during the settle hold does not repeat it.
    assert.equal(ok.stderr.split('successfully rolled out').length - 1, 1, ok.stderr);
    assert.match(ok.stderr, /^stopping 2 pods gracefully\nall pods stopped\n/m);
    const rows = ok.stdout.trim().split('\n');
    assert.equal(rows.length, 3, ok.stdout);
    for (const row of rows.slice(1)) assert.match(row, /^web-[a-z0-9]+-[a-z0-9]{5} +1\/1 +Running +0 /);

    const started = Date.now();
    const crash = await s.cli('run', '-f', s.file('crash.yaml'), '--timeout', '2m');
    assert.equal(crash.code, 1, crash.stderr);
    assert.ok(Date.now() - started < 60_000, 'failed at once, not at the timeout');
    assert.match(
      crash.stderr,
      // Caught while the pod is down (Waiting...) or while it is briefly up (cannot stay available).
      /^error: deployment\.apps\/crash: (Waiting for deployment "crash" rollout to finish: 0 of 1 updated replicas are available|deployment "crash" cannot stay available): pod\/crash-\S+ cannot run: container app: CrashLoopBackOff/m,
    );
    assert.match(crash.stderr, /\| config missing\n/);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});

test('up -d of a Deployment and a Job, then get deploy|rs|jobs|all as kubectl prints them; kubectl rollout works against the agent', async () => {
  const s = await scratch({ 'app.yaml': [configMap, deployment('web', 'sleep 300'), job('migrate', 'echo migrated')].join('---\n') });
  try {
    const up = await s.cli('up', '-d', '-f', s.file('app.yaml'), '--port', '0');
    assert.equal(up.code, 0, up.stderr);
    assert.equal(up.stdout, 'configmap/web-config created\ndeployment.apps/web created\njob.batch/migrate created\n');
    const deploy = await s.cli('get', 'deploy');
    assert.match(deploy.stdout, /^NAME +READY +UP-TO-DATE +AVAILABLE +AGE\nweb +2\/2 +2 +2 +\d+s\n$/);
    const rs = await s.cli('get', 'rs');
    assert.match(rs.stdout, /^NAME +DESIRED +CURRENT +READY +AGE\nweb-[a-z0-9]+ +2 +2 +2 +\d+s\n$/);
    const jobs = await s.cli('get', 'jobs');
    assert.match(jobs.stdout, /^NAME +STATUS +COMPLETIONS +DURATION +AGE\nmigrate +Complete +1\/1 +\d+s +\d+s\n$/);
    const all = await s.cli('get', 'all');
    assert.equal(all.code, 0, all.stderr);
    // The kubernetes Service of `default` is listed as kubectl lists it; the rest are the manifests'.
    const tables = all.stdout.split('\n\n').filter((t) => !t.includes('service/kubernetes'));
    assert.deepEqual(
      tables.map((t) =>
        t
          .split('\n')[1]!
          .split(/\s+/)[0]!
          .replace(/[-a-z0-9]+$/, ''),
      ),
      ['pod/', 'deployment.apps/', 'replicaset.apps/', 'job.batch/'],
    );
    if (kubectl) {
      // The same tables from kubectl itself, and its rollout commands, against the agent.
      const env = { ...process.env, KUBECONFIG: join(s.root, 'kubeconfig') };
      const k = (...args: string[]) => spawnSync(kubectl, args, { env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(k('get', 'all').stdout.replace(/\b\d+s\b/g, 'Xs'), all.stdout.replace(/\b\d+s\b/g, 'Xs'));
      assert.equal(k('rollout', 'status', 'deployment/web', '--timeout=60s').stdout, 'deployment "web" successfully rolled out\n');
      assert.equal(k('rollout', 'restart', 'deployment/web').status, 0);
      const status = k('rollout', 'status', 'deployment/web', '--timeout=90s');
      assert.equal(status.status, 0, status.stderr);
      assert.match(k('rollout', 'history', 'deployment/web').stdout, /REVISION +CHANGE-CAUSE\n1 +<none>\n2 +<none>\n/);
      assert.match(k('rollout', 'undo', 'deployment/web').stdout, /deployment\.apps\/web rolled back/);
    }
    // down -f deletes the workloads of the manifests, and their pods go with them.
    const down = await s.cli('down', '-f', s.file('app.yaml'));
    assert.equal(down.code, 0, down.stderr);
    assert.equal(down.stdout, 'deployment.apps "web" deleted\njob.batch "migrate" deleted\n');
    await waitFor(
      "the workloads' pods to be gone",
      async () => /^NAME +TYPE .*\nservice\/kubernetes +ClusterIP .*\n$/.test((await s.cli('get', 'all')).stdout),
      60_000,
    );
  } finally {
    await s.cli('down', '--all', '--agent', '--grace-period', '0');
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
  assert.equal(existsSync(join(s.root, 'podvisor.sock')) && lockOwner(s.root) !== undefined, false);
});

test('up of a Deployment until --for: the final table shows the pods stopped, not the Running they were before the teardown', async () => {
  const s = await scratch({ 'web.yaml': deployment('web', 'sleep 300', 1) });
  try {
    const up = await s.cli('up', '-f', s.file('web.yaml'), '--for', '15s');
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stderr, /^pod\/web-\S+: Running, ready 1\/1, restarts 0\n/m);
    assert.match(up.stderr, /^--for=15s elapsed: stopping 1 pod gracefully\nall pods stopped\n/m);
    const table = up.stderr.slice(up.stderr.indexOf('all pods stopped\n'));
    assert.match(table, /\nNAME +READY +STATUS +RESTARTS +AGE\nweb-[a-z0-9]+-[a-z0-9]{5} +0\/1 +Error +0 +\d+s\n$/);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});

test('up of a Job and a pod: a state line per Job and pod change, ends once both have finished, -o json a List of the Pods then the Events; a failed Job exits 1', async () => {
  const s = await scratch({ 'app.yaml': [job('migrate', 'sleep 1; echo done'), bareJob].join('---\n'), 'fail.yaml': job('broken', 'exit 4') });
  try {
    const up = await s.cli('up', '-f', s.file('app.yaml'), '-o', 'json');
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stderr, /^job\.batch\/migrate: Running, completions 0\/1, active 1, failed 0\n/m);
    assert.match(up.stderr, /^job\.batch\/migrate: Complete, completions 1\/1, active 0, failed 0\n/m);
    assert.match(up.stderr, /^pod\/bare: Completed, ready 0\/1, restarts 0\n/m);
    assert.match(up.stderr, /^pod\/migrate-[a-z0-9]{5}: Completed, ready 0\/1, restarts 0\n/m);
    assert.match(up.stderr, /^everything has finished: stopping 0 pods gracefully\n/m);
    const list = JSON.parse(up.stdout) as { kind: string; items: { kind: string; metadata: { name: string } }[] };
    assert.equal(list.kind, 'List');
    const kinds = list.items.map((i) => i.kind);
    assert.deepEqual(kinds.slice(0, 2), ['Pod', 'Pod']);
    assert.ok(kinds.slice(2).length > 0 && kinds.slice(2).every((k) => k === 'Event'), kinds.join(' '));
    assert.equal(lockOwner(s.root), undefined, 'the agent up started has stopped');

    const failed = await s.cli('up', '-f', s.file('fail.yaml'));
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /^job\.batch\/broken: Failed \(BackoffLimitExceeded\), completions 0\/1, active 0, failed 1\n/m);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});
