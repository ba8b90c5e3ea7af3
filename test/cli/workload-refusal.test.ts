// `podvisor up -d --wait` on a StatefulSet and a Job whose pods the API refuses (a name that makes
// the pod's hostname longer than 63 characters, which the workload's own validation lets through, as
// kube-apiserver's does) against a real agent: the wait fails at once with the controller's
// FailedCreate reason, instead of waiting out its timeout.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../fixtures/cli/cli-process.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';

const env = useKubectlAgent(false);

async function upWait(name: string, yaml: string) {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  // A wait that ran out its 10 minutes would be killed by runCli's deadline (code null).
  return runCli(['up', '-d', '--wait=auto', '--timeout', '10m', '-f', file, '--root-dir', env.root], 180_000);
}

test('a StatefulSet whose pods are refused: up --wait fails at once with the reason', async () => {
  const name = 's'.repeat(62);
  const r = await upWait(
    'sts',
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
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `error: statefulset.apps/${name}: statefulset "${name}" cannot create its pods: FailedCreate: create Pod ${name}-0 in StatefulSet ${name} failed error: Pod "${name}-0" is invalid: .*spec.hostname: Invalid value: "${name}-0": must be no more than 63 characters`,
    ),
  );
});

test('an Indexed Job whose pods are refused: up --wait fails at once with the reason', async () => {
  const name = 'j'.repeat(62);
  const r = await upWait(
    'job',
    `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "exit 0"]}]
`,
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `error: job.batch/${name}: job "${name}" cannot create its pods: FailedCreate: Error creating: Pod "${name}-\\d-\\w+" is invalid: spec.hostname: Invalid value: "${name}-\\d": must be no more than 63 characters`,
    ),
  );
});
