// A Job's podFailurePolicy on a real `podvisor agent` driven by the real kubectl: a FailJob rule
// fails the Job at the first matching exit code (reason PodFailurePolicy) without spending its
// retries; an Ignore rule lets a pod fail without counting against a backoffLimit of 0.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

async function apply(a: { kubeconfig: string; dir: string }, name: string, script: string, extra: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}}
spec:
${extra}  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sh, -c, '${script}']}]
`,
  );
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

test('a FailJob rule fails the Job at the first matching exit code', { skip }, async (t) => {
  const a = env.api(t);
  await apply(
    a,
    'fatal',
    'exit 42',
    `  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
`,
  );
  let r = await kubectl(a, ['wait', '--for=condition=failed', 'job/fatal', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, [
    'get',
    'job',
    'fatal',
    '-o',
    'jsonpath={.status.failed} {.status.conditions[?(@.type=="Failed")].reason}: {.status.conditions[?(@.type=="Failed")].message}',
  ]);
  assert.match(r.stdout, /^1 PodFailurePolicy: Container main for pod default\/fatal-\w{5} failed with exit code 42 matching FailJob rule at index 0$/);
});

test('an Ignore rule lets a pod fail without counting against backoffLimit 0', { skip }, async (t) => {
  const a = env.api(t);
  const marker = join(env.dir, 'tried-once');
  await apply(
    a,
    'retry',
    `if [ -e ${marker} ]; then echo second; exit 0; fi; touch ${marker}; exit 3`,
    `  backoffLimit: 0
  podFailurePolicy:
    rules:
    - action: Ignore
      onExitCodes: {operator: In, values: [3]}
`,
  );
  let r = await kubectl(a, ['wait', '--for=condition=complete', 'job/retry', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'job', 'retry', '-o', 'jsonpath={.status.succeeded}/{.status.failed}']);
  assert.equal(r.stdout, '1/');
  r = await kubectl(a, ['get', 'pods', '-l', 'job-name=retry', '-o', 'jsonpath={.items[*].status.phase}']);
  assert.deepEqual(r.stdout.split(' ').sort(), ['Failed', 'Succeeded']);
});
