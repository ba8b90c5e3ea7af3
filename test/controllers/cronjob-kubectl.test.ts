// The CronJob controller of a real `podvisor agent` driven by the real kubectl: a CronJob of
// `*/1 * * * *` makes its Job within the next minute and the Job completes; `kubectl get cronjob`
// shows SCHEDULE/SUSPEND/ACTIVE/LAST SCHEDULE; `kubectl create job --from=cronjob/x` makes a Job of its template.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlMinor, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

test('a CronJob of */1 * * * * fires within a minute and its Job completes', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(env.dir, 'tick.yaml');
  writeFileSync(
    file,
    `apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "*/1 * * * *"
  successfulJobsHistoryLimit: 2
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers: [{name: main, image: busybox, command: [sh, -c, 'echo tick']}]
`,
  );
  const applied = Date.now();
  let r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'cronjob', 'tick']);
  assert.match(
    r.stdout,
    /^NAME\s+SCHEDULE\s+(TIMEZONE\s+)?SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\ntick\s+\*\/1 \* \* \* \*\s+(<none>\s+)?False\s+0\s+<none>\s+\d+s\n$/,
  );

  // The Job of the next minute, named by that minute.
  const job = await waitFor(
    'the CronJob to make its Job',
    async () => (await kubectl(a, ['get', 'jobs', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').find((n) => n.startsWith('tick-')),
    65_000,
  );
  const firedAfter = Date.now() - applied;
  const minute = Number(job.slice('tick-'.length));
  assert.ok(Math.abs(minute * 60_000 - Date.now()) < 120_000, `${job} names the scheduled minute`);
  t.diagnostic(`the first Job came ${firedAfter} ms after apply`);
  r = await kubectl(a, ['get', 'job', job, '-o', 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.annotations}']);
  assert.match(r.stdout, /^CronJob\/tick .*batch\.kubernetes\.io\/cronjob-scheduled-timestamp/);
  r = await kubectl(a, ['wait', '--for=condition=complete', `job/${job}`, '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'jobs']);
  assert.match(r.stdout, new RegExp(`\\n${job}\\s+(Complete\\s+)?1/1\\s+\\d+s\\s+\\d+s\\n`), r.stdout);
  await waitFor(
    'the CronJob to record its last successful time and drop the Job from active',
    async () => {
      const s = (await kubectl(a, ['get', 'cronjob', 'tick', '-o', 'jsonpath={.status.lastSuccessfulTime}|{.status.active}'])).stdout;
      return /^\d{4}-.+Z\|$/.test(s);
    },
    30_000,
  );
  r = await kubectl(a, ['get', 'cronjob', 'tick']);
  assert.match(r.stdout, /\ntick\s+\*\/1 \* \* \* \*\s+(<none>\s+)?False\s+0\s+\d+s\s+\d+s\n$/);

  // A Job of the CronJob's template, made by kubectl. kubectl before 1.21 knows CronJob only as
  // batch/v1beta1 and refuses the batch/v1 object any 1.21+ server returns, as it does here.
  r = await kubectl(a, ['create', 'job', '--from=cronjob/tick', 'tick-by-hand']);
  if (kubectlMinor !== undefined && kubectlMinor < 21) {
    assert.match(r.stderr, /no kind "CronJob" is registered for version "batch\/v1"/);
    t.diagnostic(`kubectl 1.${kubectlMinor} cannot make a Job from a batch/v1 CronJob: that step is checked with a newer kubectl`);
  } else {
    assert.equal(r.code, 0, r.stderr);
    r = await kubectl(a, ['wait', '--for=condition=complete', 'job/tick-by-hand', '--timeout=60s']);
    assert.equal(r.code, 0, r.stderr);
    r = await kubectl(a, ['logs', 'job/tick-by-hand']);
    assert.equal(r.stdout.trim(), 'tick');
  }

  // Suspended, the table says so; deleted, its Jobs go with it.
  r = await kubectl(a, ['patch', 'cronjob', 'tick', '-p', '{"spec":{"suspend":true}}']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'cronjob', 'tick', '--no-headers']);
  assert.match(r.stdout, /^tick\s+\*\/1 \* \* \* \*\s+(<none>\s+)?True\s+/);
  r = await kubectl(a, ['delete', 'cronjob', 'tick']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor("the CronJob's Jobs to be deleted with it", async () => (await kubectl(a, ['get', 'jobs', '-o', 'name'])).stdout.trim() === '', 30_000);
});
