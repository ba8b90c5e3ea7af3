// CI flags of `run -f` for manifests with workloads, through the real executable: --exit-code-from a
// Job (its failed pod's exit code) or a pod, --logs with every container's output prefixed by
// pod/container (controllers' pods included; on stderr with -o json), --junit with the workloads' pods,
// and an --exit-code-from that names nothing refused with exit 2.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';

/** A database stand-in that says it is up and leaves a file saying so (a readiness a test pod can wait for). */
const db = (upFile: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: db
        image: busybox
        command: ["sh", "-c", "echo db up; touch ${upFile}; sleep 300"]
`;
const e2eJob = (script: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: e2e
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: test
        image: busybox
        command: ["sh", "-c", ${JSON.stringify(script)}]
`;
/** A test pod that waits for the database, as a CI test would, then passes. */
const smokePod = (upFile: string) => `apiVersion: v1
kind: Pod
metadata:
  name: smoke
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "until [ -f ${upFile} ]; do sleep 0.1; done; echo smoke ok"]
`;

async function scratch(files: (dir: string) => Record<string, string>) {
  const tmp = await tempDir();
  for (const [name, text] of Object.entries(files(tmp.path))) writeFileSync(join(tmp.path, name), text);
  const cli = (...args: string[]) => runCli([...args, '--root-dir', join(tmp.path, 'root')]);
  return { tmp, cli, file: (name: string) => join(tmp.path, name) };
}

test('run -f --exit-code-from job/e2e --logs --junit: the Job pod exit code is the command exit code, every container output prefixed, a testcase per pod', async () => {
  const s = await scratch((dir) => ({ 'ci.yaml': [db(join(dir, 'db-up')), e2eJob('echo testing; echo 2 tests failed >&2; exit 3')].join('---\n') }));
  try {
    const r = await s.cli('run', '-f', s.file('ci.yaml'), '--exit-code-from', 'job/e2e', '--logs', '--junit', s.file('report.xml'));
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /^db-[a-z0-9]+-[a-z0-9]{5}\/db \| db up$/m);
    // One container's lines in their order; another pod's lines may come between them.
    const e2eLines = r.stdout.split('\n').filter((l) => /^e2e-[a-z0-9]{5}\/test \| /.test(l));
    assert.deepEqual(
      e2eLines.map((l) => l.replace(/^e2e-[a-z0-9]{5}\/test \| /, '')),
      ['testing', '2 tests failed'],
      r.stdout,
    );
    assert.match(r.stderr, /^error: job\.batch\/e2e: job "e2e" failed: BackoffLimitExceeded/m);
    assert.match(r.stderr, /^all pods stopped$/m);
    const xml = readFileSync(s.file('report.xml'), 'utf8');
    assert.match(xml, /<testsuite name="podvisor run" tests="2" failures="1"/);
    assert.match(xml, /<testcase classname="Pod" name="default\/db-[a-z0-9]+-[a-z0-9]{5}" time="[\d.]+"\/>/);
    assert.match(xml, /<failure message="Failed: exit code 3 \(Error\)" type="PodFailed">pod\/e2e-[a-z0-9]{5}: Failed: exit code 3/);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});

test('run -f --exit-code-from a pod beside a Deployment, -o json --logs: exit 0, the output on stderr, stdout only the List; a name of nothing is exit 2', async () => {
  const s = await scratch((dir) => ({ 'ci.yaml': [db(join(dir, 'db-up')), smokePod(join(dir, 'db-up'))].join('---\n') }));
  try {
    const r = await s.cli('run', '-f', s.file('ci.yaml'), '--exit-code-from', 'smoke/main', '--logs', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^smoke\/main \| smoke ok$/m);
    assert.match(r.stderr, /^db-[a-z0-9]+-[a-z0-9]{5}\/db \| db up$/m);
    const list = JSON.parse(r.stdout) as { kind: string; items: { kind: string }[] };
    assert.equal(list.kind, 'List');
    assert.deepEqual(list.items.map((i) => i.kind).sort(), ['Deployment', 'Pod', 'Pod']);

    const none = await s.cli('run', '-f', s.file('ci.yaml'), '--exit-code-from', 'job/nothere');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^error: --exit-code-from: no Job "nothere" in the manifests$/m);
  } finally {
    await stopRuntimeServices(s.tmp.path);
    await s.tmp.remove();
  }
});
