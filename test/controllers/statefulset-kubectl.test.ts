// The StatefulSet controller of a real `podvisor agent` driven by the real kubectl: OrderedReady
// creation (pod N+1 only once pod N is Ready, readiness flipped through a file the probe tests),
// stable identity (hostname, subdomain, labels), `rollout status`, scale-down from the highest
// ordinal one pod at a time, a rolling update held at a partition then completed from the highest
// ordinal down, Parallel creation, and delete taking the pods and revisions with it.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { holdsFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath, kubectlSpawn, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

/** A StatefulSet whose pods are Ready while the file `<readyDir>/<pod name>.v<$VERSION>` exists. */
const statefulSet = (name: string, readyDir: string, extra = '') => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}}
spec:
  serviceName: ${name}
  replicas: 3
${extra}  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 0.1; done']
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        readinessProbe:
          exec: {command: [sh, -c, 'test -f ${readyDir}/$POD_NAME.v$VERSION']}
          periodSeconds: 1
`;

type Api = { kubeconfig: string; dir: string };

async function apply(a: Api, name: string, body: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

async function podNames(a: Api, app: string): Promise<string[]> {
  const r = await kubectl(a, ['get', 'pods', '-l', `app=${app}`, '-o', 'jsonpath={.items[*].metadata.name}']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split(' ').filter(Boolean).sort();
}

/** The files that make pods Ready: per pod name and the VERSION in the pod's environment ('' when unset). */
function readyDir(name: string): { dir: string; ready(pod: string, version?: string): void } {
  const dir = join(env.dir, `ready-${name}`);
  mkdirSync(dir, { recursive: true });
  return { dir, ready: (pod, version = '') => writeFileSync(join(dir, `${pod}.v${version}`), '') };
}

test('OrderedReady: each ordinal waits for the previous to be Ready; scale-down goes from the highest ordinal, one at a time', { skip }, async (t) => {
  const a = env.api(t);
  const ready = readyDir('web');
  await apply(a, 'web', statefulSet('web', ready.dir));
  await waitFor('web-0 is created', async () => (await podNames(a, 'web')).includes('web-0'), 30_000);
  await holdsFor('web-1 is not created while web-0 is not Ready', async () => (await podNames(a, 'web')).join() === 'web-0', 3000);
  ready.ready('web-0');
  await waitFor('web-1 is created once web-0 is Ready', async () => (await podNames(a, 'web')).includes('web-1'), 30_000);
  await holdsFor('web-2 is not created while web-1 is not Ready', async () => (await podNames(a, 'web')).join() === 'web-0,web-1', 2000);
  ready.ready('web-1');
  ready.ready('web-2');
  let r = await kubectl(a, ['rollout', 'status', 'sts/web', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /roll out complete: 3 new pods have been updated/);

  r = await kubectl(a, [
    'get',
    'pod',
    'web-1',
    '-o',
    'jsonpath={.spec.hostname} {.spec.subdomain} {.metadata.labels.statefulset\\.kubernetes\\.io/pod-name} {.metadata.labels.controller-revision-hash} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}',
  ]);
  const [hostname, subdomain, podName, revision, owner, controller] = r.stdout.split(' ');
  assert.deepEqual([hostname, subdomain, podName, owner, controller], ['web-1', 'web', 'web-1', 'StatefulSet/web', 'true'], r.stdout);
  r = await kubectl(a, ['get', 'controllerrevisions', '-o', 'jsonpath={.items[*].metadata.name} {.items[*].revision}']);
  assert.equal(r.stdout, `${revision} 1`);
  r = await kubectl(a, [
    'get',
    'sts',
    'web',
    '-o',
    'jsonpath={.status.replicas} {.status.readyReplicas} {.status.currentReplicas} {.status.updatedReplicas} {.status.availableReplicas} {.status.observedGeneration} {.status.currentRevision} {.status.updateRevision}',
  ]);
  assert.equal(r.stdout, `3 3 3 3 3 1 ${revision} ${revision}`);
  r = await kubectl(a, ['get', 'sts']);
  assert.match(r.stdout, /^NAME\s+READY\s+AGE\nweb\s+3\/3\s+\d+s\n$/);

  // Scale-down: the watch records each pod's deletion; web-1 is touched only once web-2 is gone.
  const watch = kubectlSpawn(a, [
    'get',
    'pods',
    '-l',
    'app=web',
    '--watch-only',
    '--output-watch-events',
    '-o',
    'jsonpath={.type} {.object.metadata.name} {.object.metadata.deletionTimestamp}{"\\n"}',
  ]);
  t.after(() => watch.kill());
  // The watch is established once it reports a change: a label on web-0 makes one.
  await waitFor(
    'the pod watch reports a change',
    async () => {
      await kubectl(a, ['label', 'pod', 'web-0', `seen=${Date.now()}`, '--overwrite']);
      return /MODIFIED web-0/.test(watch.out());
    },
    30_000,
  );
  r = await kubectl(a, ['scale', 'sts/web', '--replicas=1']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('web-1 and web-2 are gone', async () => (await podNames(a, 'web')).join() === 'web-0', 60_000);
  await waitFor('the watch saw web-1 deleted', () => /DELETED web-1/.test(watch.out()), 10_000);
  const lines = watch.out().split('\n');
  const firstTouch = (pod: string) => lines.findIndex((l) => new RegExp(`^MODIFIED ${pod} \\S+`).test(l));
  const deleted = (pod: string) => lines.findIndex((l) => l.startsWith(`DELETED ${pod} `));
  assert.ok(firstTouch('web-2') >= 0 && deleted('web-2') < firstTouch('web-1'), `web-2 deleted before web-1 is marked:\n${watch.out()}`);
  r = await kubectl(a, ['get', 'sts', 'web', '-o', 'jsonpath={.status.replicas} {.status.readyReplicas}']);
  assert.equal(r.stdout, '1 1');
  r = await kubectl(a, ['delete', 'sts', 'web']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the pods and revisions of web are gone', async () => {
    const pods = await podNames(a, 'web');
    const revs = await kubectl(a, ['get', 'controllerrevisions', '-o', 'name']);
    return pods.length === 0 && revs.stdout.trim() === '';
  });
});

test('RollingUpdate with a partition updates the ordinals above it, highest first, each once the previous is Ready', { skip }, async (t) => {
  const a = env.api(t);
  const ready = readyDir('db');
  for (const p of ['db-0', 'db-1', 'db-2']) ready.ready(p);
  await apply(a, 'db', statefulSet('db', ready.dir));
  let r = await kubectl(a, ['rollout', 'status', 'sts/db', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'sts', 'db', '-o', 'jsonpath={.status.currentRevision}']);
  const first = r.stdout;

  // The new pods (VERSION=2) are not Ready until told: db-2 is replaced, db-1 waits for it.
  r = await kubectl(a, ['patch', 'sts', 'db', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['set', 'env', 'sts/db', 'VERSION=2']);
  assert.equal(r.code, 0, r.stderr);
  const revisions = async () => {
    const out = await kubectl(a, [
      'get',
      'pods',
      '-l',
      'app=db',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.controller-revision-hash} {end}',
    ]);
    return Object.fromEntries(
      out.stdout
        .trim()
        .split(' ')
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    );
  };
  const second = await waitFor(
    'db-2 is recreated at the new revision',
    async () => {
      const revs = await revisions();
      return revs['db-2'] && revs['db-2'] !== first ? revs['db-2'] : undefined;
    },
    60_000,
  );
  await holdsFor('db-1 keeps the old revision while db-2 is not Ready', async () => (await revisions())['db-1'] === first, 3000);
  ready.ready('db-2', '2');
  await waitFor('db-1 is updated once db-2 is Ready', async () => (await revisions())['db-1'] === second, 60_000);
  ready.ready('db-1', '2');
  r = await kubectl(a, ['rollout', 'status', 'sts/db', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /partitioned roll out complete: 2 new pods have been updated/);
  await holdsFor('db-0, below the partition, keeps the old revision', async () => (await revisions())['db-0'] === first, 2000);
  r = await kubectl(a, [
    'get',
    'sts',
    'db',
    '-o',
    'jsonpath={.status.currentReplicas} {.status.updatedReplicas} {.status.currentRevision} {.status.updateRevision}',
  ]);
  assert.equal(r.stdout, `1 2 ${first} ${second}`);

  // Partition 0: db-0 follows, and the update revision becomes the current one.
  ready.ready('db-0', '2');
  r = await kubectl(a, ['patch', 'sts', 'db', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('db-0 is updated', async () => (await revisions())['db-0'] === second, 60_000);
  await waitFor(
    'the status names the new revision current',
    async () => {
      const s = await kubectl(a, ['get', 'sts', 'db', '-o', 'jsonpath={.status.currentRevision} {.status.currentReplicas} {.status.readyReplicas}']);
      return s.stdout === `${second} 3 3`;
    },
    60_000,
  );
  r = await kubectl(a, ['rollout', 'history', 'sts/db']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^1\s/m);
  assert.match(r.stdout, /^2\s/m);
  r = await kubectl(a, ['delete', 'sts', 'db']);
  assert.equal(r.code, 0, r.stderr);
});

test('Parallel creates every ordinal at once, Ready or not; rollout restart and undo move every pod', { skip }, async (t) => {
  const a = env.api(t);
  const ready = readyDir('par');
  await apply(a, 'par', statefulSet('par', ready.dir, '  podManagementPolicy: Parallel\n'));
  await waitFor('the three pods exist before any is Ready', async () => (await podNames(a, 'par')).join() === 'par-0,par-1,par-2', 30_000);
  let r = await kubectl(a, ['get', 'sts', 'par', '-o', 'jsonpath={.status.readyReplicas}']);
  assert.equal(r.stdout, '');
  for (const p of ['par-0', 'par-1', 'par-2']) ready.ready(p);
  r = await kubectl(a, ['rollout', 'status', 'sts/par', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'sts', 'par', '-o', 'jsonpath={.status.currentRevision}']);
  const first = r.stdout;

  // rollout restart makes a new revision that every pod moves to; rollout undo goes back to the first.
  const revisions = async () => {
    const out = await kubectl(a, ['get', 'pods', '-l', 'app=par', '-o', 'jsonpath={.items[*].metadata.labels.controller-revision-hash}']);
    return out.stdout.split(' ').filter(Boolean);
  };
  const settled = async (rev: string) => {
    const s = await kubectl(a, ['get', 'sts', 'par', '-o', 'jsonpath={.status.currentRevision} {.status.updatedReplicas} {.status.readyReplicas}']);
    const revs = await revisions();
    return s.stdout === `${rev} 3 3` && revs.length === 3 && revs.every((x) => x === rev);
  };
  r = await kubectl(a, ['rollout', 'restart', 'sts/par']);
  assert.equal(r.code, 0, r.stderr);
  const second = await waitFor(
    'a new update revision',
    async () => {
      const s = await kubectl(a, ['get', 'sts', 'par', '-o', 'jsonpath={.status.updateRevision}']);
      return s.stdout !== first && s.stdout;
    },
    30_000,
  );
  await waitFor('every pod at the restarted revision', () => settled(second), 90_000);
  r = await kubectl(a, ['rollout', 'undo', 'sts/par']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('every pod back at the first revision', () => settled(first), 90_000);
  r = await kubectl(a, ['get', 'controllerrevisions', '-l', 'app=par', '-o', 'jsonpath={range .items[*]}{.metadata.name}:{.revision} {end}']);
  assert.deepEqual(r.stdout.trim().split(' ').sort(), [`${first}:3`, `${second}:2`].sort());
  r = await kubectl(a, ['delete', 'sts', 'par']);
  assert.equal(r.code, 0, r.stderr);
});

test(
  'volumeClaimTemplates: each ordinal gets its claim, labelled by the selector, provisioned and bound before its pod runs; claims outlive the set',
  { skip },
  async (t) => {
    const a = env.api(t);
    const claims = (mount: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: data}
spec:
  serviceName: data
  replicas: 2
  selector: {matchLabels: {app: data}}
  template:
    metadata: {labels: {app: data}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sleep, "300"]
${mount}  volumeClaimTemplates:
  - metadata: {name: store}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`;
    // The containers may mount a claim by name: the API accepts the set.
    let r = await kubectl(a, ['apply', '--dry-run=server', '-f', '-'], claims('        volumeMounts: [{name: store, mountPath: /data}]\n'));
    assert.equal(r.code, 0, r.stderr);
    await apply(a, 'data', claims(''));
    await waitFor(
      'both pods Running',
      async () => {
        const out = await kubectl(a, ['get', 'pods', '-l', 'app=data', '-o', 'jsonpath={.items[*].status.phase}']);
        return out.stdout === 'Running Running';
      },
      60_000,
    );
    r = await kubectl(a, ['get', 'pvc', '-l', 'app=data', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}']);
    assert.equal(r.stdout.trim(), 'store-data-0=Bound store-data-1=Bound');
    r = await kubectl(a, ['get', 'pod', 'data-0', '-o', 'jsonpath={.spec.volumes[?(@.name=="store")].persistentVolumeClaim.claimName}']);
    assert.equal(r.stdout, 'store-data-0');
    r = await kubectl(a, ['delete', 'sts', 'data']);
    assert.equal(r.code, 0, r.stderr);
    // whenDeleted: Retain (the default): the claims stay.
    await waitFor('the pods gone', async () => (await podNames(a, 'data')).length === 0, 30_000);
    r = await kubectl(a, ['get', 'pvc', 'store-data-0', 'store-data-1', '-o', 'name']);
    assert.equal(r.code, 0, r.stderr);
    r = await kubectl(a, ['delete', 'pvc', 'store-data-0', 'store-data-1']);
    assert.equal(r.code, 0, r.stderr);
  },
);
