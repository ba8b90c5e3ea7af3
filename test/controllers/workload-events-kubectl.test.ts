// The controllers' Events through the real kubectl against a real `podvisor agent`: `kubectl
// describe deploy` lists deployment-controller's ScalingReplicaSet events, `kubectl get events` the
// ReplicaSet's SuccessfulCreate/SuccessfulDelete, the Job's Completed and BackoffLimitExceeded, and
// the StatefulSet's and DaemonSet's pod events, each with the upstream reason, message and source.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);
type Api = { kubeconfig: string; dir: string };

async function apply(a: Api, name: string, body: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

/** The events about one object as `SOURCE TYPE REASON MESSAGE` lines, in the order they were first seen. */
async function eventsOf(a: Api, kind: string, name: string): Promise<string[]> {
  const r = await kubectl(a, [
    'get',
    'events',
    '--field-selector',
    `involvedObject.kind=${kind},involvedObject.name=${name}`,
    '-o',
    'jsonpath={range .items[*]}{.source.component} {.type} {.reason} {.message}{"\\n"}{end}',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

const podSpec = (command: string) => `      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sh, -c, '${command}']}]`;

test('a Deployment: describe shows ScalingReplicaSet; its ReplicaSets record SuccessfulCreate and SuccessfulDelete', { skip }, async (t) => {
  const a = env.api(t);
  const deployment = (image: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: ${image}, command: [sleep, "300"]}]
`;
  await apply(a, 'web', deployment('busybox', 3));
  let r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'rs', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}']);
  const first = r.stdout;
  assert.match(first, /^web-[a-z0-9]+$/);
  r = await kubectl(a, ['describe', 'deploy', 'web']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`Normal\\s+ScalingReplicaSet\\s+\\S+\\s+deployment-controller\\s+Scaled up replica set ${first} to 3\\n`));
  const created = await eventsOf(a, 'ReplicaSet', first);
  assert.equal(created.length, 3, created.join('\n'));
  for (const line of created) assert.match(line, new RegExp(`^replicaset-controller Normal SuccessfulCreate Created pod: ${first}-[a-z0-9]{5}$`));

  // A new template: the new ReplicaSet is scaled up, the old one down, each step an event.
  r = await kubectl(a, ['set', 'env', 'deploy/web', 'COLOUR=blue']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'rs', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.spec.replicas}{"\\n"}{end}']);
  const second = /^(web-[a-z0-9]+) 3$/m.exec(r.stdout)?.[1];
  assert.ok(second && second !== first, r.stdout);
  const scaling = (await eventsOf(a, 'Deployment', 'web')).map((l) => l.replace(/^deployment-controller Normal ScalingReplicaSet /, ''));
  assert.equal(scaling[0], `Scaled up replica set ${first} to 3`);
  assert.equal(scaling[1], `Scaled up replica set ${second} to 1`);
  assert.ok(scaling.includes(`Scaled down replica set ${first} to 0 from 1`), scaling.join('\n'));
  assert.ok(scaling.includes(`Scaled up replica set ${second} to 3 from 2`), scaling.join('\n'));
  const deleted = (await eventsOf(a, 'ReplicaSet', first)).filter((l) => l.includes('SuccessfulDelete'));
  assert.equal(deleted.length, 3, deleted.join('\n'));
  for (const line of deleted) assert.match(line, new RegExp(`^replicaset-controller Normal SuccessfulDelete Deleted pod: ${first}-[a-z0-9]{5}$`));
  r = await kubectl(a, ['delete', 'deploy', 'web', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});

test('Jobs record SuccessfulCreate, Completed and BackoffLimitExceeded', { skip }, async (t) => {
  const a = env.api(t);
  const job = (name: string, command: string, extra = '') => `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}}
spec:
${extra}  template:
    spec:
      restartPolicy: Never
${podSpec(command)}
`;
  await apply(a, 'ok', job('ok', 'true'));
  await apply(a, 'bad', job('bad', 'exit 3', '  backoffLimit: 0\n'));
  let r = await kubectl(a, ['wait', '--for=condition=complete', 'job/ok', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['wait', '--for=condition=failed', 'job/bad', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the Jobs finished events', async () => (await eventsOf(a, 'Job', 'bad')).some((l) => l.includes('BackoffLimitExceeded')), 20_000);
  const ok = await eventsOf(a, 'Job', 'ok');
  assert.match(ok[0]!, /^job-controller Normal SuccessfulCreate Created pod: ok-[a-z0-9]{5}$/);
  assert.equal(ok.at(-1), 'job-controller Normal Completed Job completed');
  const bad = await eventsOf(a, 'Job', 'bad');
  assert.equal(bad.at(-1), 'job-controller Warning BackoffLimitExceeded Job has reached the specified backoff limit');
});

test('a StatefulSet and a DaemonSet record their pods’ creation', { skip }, async (t) => {
  const a = env.api(t);
  await apply(
    a,
    'db',
    `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
${podSpec('sleep 300')}
`,
  );
  await apply(
    a,
    'logs',
    `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: logs}
spec:
  selector: {matchLabels: {app: logs}}
  template:
    metadata: {labels: {app: logs}}
    spec:
${podSpec('sleep 300')}
`,
  );
  let r = await kubectl(a, ['rollout', 'status', 'sts/db', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'ds/logs', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await eventsOf(a, 'StatefulSet', 'db'), [
    'statefulset-controller Normal SuccessfulCreate create Pod db-0 in StatefulSet db successful',
    'statefulset-controller Normal SuccessfulCreate create Pod db-1 in StatefulSet db successful',
  ]);
  const ds = await eventsOf(a, 'DaemonSet', 'logs');
  assert.equal(ds.length, 1, ds.join('\n'));
  assert.match(ds[0]!, /^daemonset-controller Normal SuccessfulCreate Created pod: logs-[a-z0-9]{5}$/);
  r = await kubectl(a, ['scale', 'sts/db', '--replicas=1']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    'the StatefulSet scale-down event',
    async () =>
      (await eventsOf(a, 'StatefulSet', 'db')).includes('statefulset-controller Normal SuccessfulDelete delete Pod db-1 in StatefulSet db successful'),
    30_000,
  );
  r = await kubectl(a, ['delete', 'sts/db', 'ds/logs', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});
