// The Job controller of a real `podvisor agent` driven by the real kubectl: `kubectl wait
// --for=condition=complete` on a Job of two completions, an Indexed Job whose pods see
// JOB_COMPLETION_INDEX, and a failing Job marked Failed with BackoffLimitExceeded after its retries.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const job = (name: string, script: string, extra = '') => `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}}
spec:
${extra}  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sh, -c, '${script}']}]
`;

async function apply(a: { kubeconfig: string; dir: string }, name: string, body: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

test('kubectl wait --for=condition=complete on a Job of two completions', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'twice', job('twice', 'echo done', '  completions: 2\n'));
  let r = await kubectl(a, ['wait', '--for=condition=complete', 'job/twice', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'job', 'twice', '-o', 'jsonpath={.status.succeeded} {.status.conditions[?(@.type=="Complete")].reason}']);
  assert.equal(r.stdout, '2 CompletionsReached');
  r = await kubectl(a, ['get', 'jobs']);
  assert.match(r.stdout, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\ntwice\s+Complete\s+2\/2\s+\d+s\s+\d+s\n$/);
  r = await kubectl(a, ['get', 'pods', '-l', 'job-name=twice', '-o', 'name']);
  assert.equal(r.stdout.trim().split('\n').length, 2, r.stdout);
  r = await kubectl(a, ['delete', 'job', 'twice']);
  assert.equal(r.code, 0, r.stderr);
});

test('an Indexed Job gives each pod its JOB_COMPLETION_INDEX', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'indexed', job('indexed', 'echo index=$JOB_COMPLETION_INDEX', '  completions: 3\n  parallelism: 3\n  completionMode: Indexed\n'));
  let r = await kubectl(a, ['wait', '--for=condition=complete', 'job/indexed', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'job', 'indexed', '-o', 'jsonpath={.status.completedIndexes}']);
  assert.equal(r.stdout, '0-2');
  r = await kubectl(a, ['logs', '-l', 'job-name=indexed']);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), ['index=0', 'index=1', 'index=2']);
});

test('a failing Job is Failed with BackoffLimitExceeded once its retries are spent', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'broken', job('broken', 'exit 3', '  backoffLimit: 1\n'));
  let r = await kubectl(a, ['wait', '--for=condition=failed', 'job/broken', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'job', 'broken', '-o', 'jsonpath={.status.failed} {.status.conditions[?(@.type=="Failed")].reason}']);
  assert.equal(r.stdout, '2 BackoffLimitExceeded');
});
