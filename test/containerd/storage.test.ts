// Storage on containerd pods, driven by real kubectl against a real agent: a StatefulSet of 3 with
// volumeClaimTemplates on the default `standard` class (local-path, WaitForFirstConsumer) writes
// per-ordinal data; its claims wait Pending until their pods are scheduled; a deleted pod comes back
// with its data, and so does one deleted after an agent restart; scale-down keeps claims under
// Retain and removes them (and their directories) under Delete; a claim in use stays Terminating
// (pvc-protection) until its pod is gone; a hostPath PersistentVolume made by hand is bound by
// volumeName and mounted; a pod bound by hand to a claim that is missing or unbound gets FailedMount.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl132Path, kubectlPath, runKubectl } from '../kubeapi/harness.js';
import { waitFor } from '../fixtures/wait.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const skipContainerd = await containerdSuite((e) => (env = e));
const skip = skipContainerd || (kubectlPath && kubectl132Path ? false : 'kubectl 1.20 and 1.32 are needed');

const statefulSet = (image: string, replicas: number, whenScaled: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: ${replicas}
  podManagementPolicy: Parallel
  persistentVolumeClaimRetentionPolicy: {whenScaled: ${whenScaled}}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext: {runAsUser: 1000}
      containers:
      - name: main
        image: ${image}
        command: [sh, -c, 'test -f /data/id || (hostname > /data/id; cat /proc/sys/kernel/random/uuid >> /data/id); exec sleep 3600']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`;

test('StatefulSet claims on containerd: per-ordinal data kept across pod deletion, agent restart and scale-down by retention policy', { skip }, async (t) => {
  const dir = await tempDir();
  const hostDir = mkdtempSync(join(tmpdir(), 'podvisor-pv-'));
  let agent: CliProcess | undefined;
  const root = join(dir.path, 'root');
  const agentArgs = [
    'agent',
    '--runtime=containerd',
    `--container-runtime-endpoint=${env.endpoint}`,
    '--root-dir',
    root,
    '--port',
    '0',
    '--address',
    '127.0.0.1',
  ];
  t.after(async () => {
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent?.exited;
    await dir.remove();
    rmSync(hostDir, { recursive: true, force: true });
  });
  agent = startCli(agentArgs);
  await agent.waitFor('stderr', /podvisor agent started/);
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const run = async (bin: string, args: string[], input?: string) => {
    const r = await runKubectl(bin, api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const k = (args: string[], input?: string) => run(kubectlPath!, args, input);
  const k132 = (args: string[], input?: string) => run(kubectl132Path!, args, input);
  const jp = async (args: string[]) => (await k([...args])).trim();
  const bb = env.images.busybox!;

  // The default class, as kind has its own.
  await waitFor('the standard StorageClass', async () =>
    /standard \(default\)\s+podvisor\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/.test(await k132(['get', 'sc'])),
  );

  // WaitForFirstConsumer: a claim no pod uses stays Pending.
  await k(
    ['apply', '-f', '-'],
    'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: lonely}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Mi}}\n',
  );
  await waitFor('lonely WaitForFirstConsumer event', async () =>
    /WaitForFirstConsumer/.test(await k(['get', 'events', '--field-selector', 'involvedObject.name=lonely'])),
  );
  assert.equal(await jp(['get', 'pvc', 'lonely', '-o', 'jsonpath={.status.phase}']), 'Pending');
  assert.equal(await jp(['get', 'pvc', 'lonely', '-o', 'jsonpath={.spec.storageClassName}']), 'standard');

  await k(['apply', '-f', '-'], statefulSet(bb, 3, 'Retain'));
  const ready = async (name: string) =>
    (await k(['get', 'pod', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).catch(() => '')).trim() === 'True';
  const allReady = async (n: number) => {
    for (let i = 0; i < n; i++) if (!(await ready(`db-${i}`))) return false;
    return true;
  };
  await waitFor('db-0..2 Ready', () => allReady(3), 120_000);
  const ids = new Map<number, string>();
  for (let i = 0; i < 3; i++) {
    const id = (await k(['exec', `db-${i}`, '--', 'cat', '/data/id'])).trim();
    assert.match(id, new RegExp(`^db-${i}\\n[0-9a-f-]+$`));
    ids.set(i, id);
  }
  // Claims, volumes and classes as kubectl 1.32 prints them.
  const pvc = await k132(['get', 'pvc', 'data-db-1']);
  assert.match(pvc, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE$/m);
  assert.match(pvc, /^data-db-1\s+Bound\s+pvc-[0-9a-f-]+\s+1Gi\s+RWO\s+standard\s+<unset>\s+\d+s$/m);
  const pvName = await jp(['get', 'pvc', 'data-db-1', '-o', 'jsonpath={.spec.volumeName}']);
  const pv = await k132(['get', 'pv', pvName]);
  assert.match(pv, /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+REASON\s+AGE$/m);
  assert.match(pv, new RegExp(`^${pvName}\\s+1Gi\\s+RWO\\s+Delete\\s+Bound\\s+default/data-db-1\\s+standard\\s+<unset>\\s+\\d+s$`, 'm'));
  const pvJson = JSON.parse(await k(['get', 'pv', pvName, '-o', 'json'])) as {
    metadata: { annotations: Record<string, string>; finalizers: string[] };
    spec: { hostPath: { path: string }; nodeAffinity: unknown };
  };
  assert.equal(pvJson.metadata.annotations['pv.kubernetes.io/provisioned-by'], 'podvisor.io/local-path');
  assert.deepEqual(pvJson.metadata.finalizers, ['kubernetes.io/pv-protection']);
  assert.ok(pvJson.spec.hostPath.path.startsWith(join(root, 'local-path', `${pvName}_default_data-db-1`)));
  assert.equal(readFileSync(join(pvJson.spec.hostPath.path, 'id'), 'utf8').trim(), ids.get(1));
  assert.equal((await jp(['get', 'pvc', 'data-db-1', '-o', 'jsonpath={.metadata.annotations.volume\\.kubernetes\\.io/selected-node}'])) !== '', true);
  // The lonely claim is still Pending: no pod uses it.
  assert.equal(await jp(['get', 'pvc', 'lonely', '-o', 'jsonpath={.status.phase}']), 'Pending');

  // A deleted pod comes back with its data.
  const uid1 = await jp(['get', 'pod', 'db-1', '-o', 'jsonpath={.metadata.uid}']);
  await k(['delete', 'pod', 'db-1', '--wait=false']);
  await waitFor(
    'db-1 back',
    async () => (await jp(['get', 'pod', 'db-1', '-o', 'jsonpath={.metadata.uid}']).catch(() => uid1)) !== uid1 && (await ready('db-1')),
    90_000,
  );
  assert.equal((await k(['exec', 'db-1', '--', 'cat', '/data/id'])).trim(), ids.get(1));

  // An agent restart keeps the claims, their volumes and the data; a pod deleted then comes back with it.
  agent.child.kill('SIGTERM');
  await agent.exited;
  agent = startCli(agentArgs);
  await agent.waitFor('stderr', /podvisor agent started/);
  await waitFor('db-0..2 Ready after the restart', () => allReady(3), 90_000);
  assert.equal(await jp(['get', 'pvc', 'data-db-2', '-o', 'jsonpath={.status.phase}']), 'Bound');
  const uid2 = await jp(['get', 'pod', 'db-2', '-o', 'jsonpath={.metadata.uid}']);
  await k(['delete', 'pod', 'db-2', '--wait=false']);
  await waitFor(
    'db-2 back after the restart',
    async () => (await jp(['get', 'pod', 'db-2', '-o', 'jsonpath={.metadata.uid}']).catch(() => uid2)) !== uid2 && (await ready('db-2')),
    90_000,
  );
  assert.equal((await k(['exec', 'db-2', '--', 'cat', '/data/id'])).trim(), ids.get(2));

  // Scale-down under whenScaled: Retain keeps the claim; scaled up again, the pod has its data.
  await k(['scale', 'statefulset', 'db', '--replicas=2']);
  await waitFor('db-2 gone', async () => !(await k(['get', 'pods', '-o', 'name'])).includes('pod/db-2'), 60_000);
  assert.equal(await jp(['get', 'pvc', 'data-db-2', '-o', 'jsonpath={.status.phase}']), 'Bound');
  await k(['scale', 'statefulset', 'db', '--replicas=3']);
  await waitFor('db-2 Ready again', () => ready('db-2'), 90_000);
  assert.equal((await k(['exec', 'db-2', '--', 'cat', '/data/id'])).trim(), ids.get(2));

  // Under whenScaled: Delete the condemned ordinal's claim goes with its pod, and its directory with the claim.
  await k(['patch', 'statefulset', 'db', '--type=merge', '-p', '{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenScaled":"Delete"}}}']);
  const pv2 = await jp(['get', 'pvc', 'data-db-2', '-o', 'jsonpath={.spec.volumeName}']);
  const dir2 = JSON.parse(await k(['get', 'pv', pv2, '-o', 'json'])).spec.hostPath.path as string;
  assert.ok(existsSync(dir2));
  await k(['scale', 'statefulset', 'db', '--replicas=2']);
  await waitFor('data-db-2 deleted', async () => !(await k(['get', 'pvc', '-o', 'name'])).includes('data-db-2'), 60_000);
  await waitFor('its volume deleted', async () => !(await k(['get', 'pv', '-o', 'name'])).includes(pv2), 30_000);
  await waitFor('its directory removed', () => !existsSync(dir2), 30_000);
  assert.ok(existsSync(join(root, 'local-path')) && readdirSync(join(root, 'local-path')).some((d) => d.endsWith('_default_data-db-0')));

  // pvc-protection: deleting a claim in use leaves it Terminating until its pod is gone.
  await k(['delete', 'pvc', 'data-db-1', '--wait=false']);
  await waitFor('data-db-1 Terminating', async () => /data-db-1\s+Terminating/.test(await k132(['get', 'pvc', 'data-db-1'])));
  assert.equal(await jp(['get', 'pvc', 'data-db-1', '-o', 'jsonpath={.metadata.finalizers[0]}']), 'kubernetes.io/pvc-protection');
  await k(['delete', 'statefulset', 'db', '--wait=false']);
  await waitFor('data-db-1 gone with its pods', async () => !(await k(['get', 'pvc', '-o', 'name'])).includes('data-db-1'), 60_000);

  // A hostPath PersistentVolume made by hand, bound by volumeName and mounted.
  writeFileSync(join(hostDir, 'hello'), 'from the host\n');
  await k(
    ['apply', '-f', '-'],
    [
      `apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: manual}\nspec:\n  capacity: {storage: 2Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: ""\n  hostPath: {path: ${hostDir}}\n`,
      'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: manual}\nspec:\n  storageClassName: ""\n  volumeName: manual\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n',
      `apiVersion: v1\nkind: Pod\nmetadata: {name: reader}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: ${bb}, command: [sh, -c, 'cat /mnt/hello; echo pod > /mnt/back; exec sleep 3600'], volumeMounts: [{name: v, mountPath: /mnt}]}\n  volumes: [{name: v, persistentVolumeClaim: {claimName: manual}}]\n`,
    ].join('---\n'),
  );
  await waitFor('reader Ready', () => ready('reader'), 60_000);
  assert.match(await k132(['get', 'pv', 'manual']), /^manual\s+2Gi\s+RWO\s+Retain\s+Bound\s+default\/manual\s+<unset>\s+\d+s$/m);
  await waitFor('the pod wrote through the volume', () => existsSync(join(hostDir, 'back')));
  // Released under Retain once the claim goes: the host's files stay.
  await k(['delete', 'pod', 'reader', '--wait=false']);
  await k(['delete', 'pvc', 'manual']);
  await waitFor('manual Released', async () => (await jp(['get', 'pv', 'manual', '-o', 'jsonpath={.status.phase}'])) === 'Released', 60_000);
  assert.ok(existsSync(join(hostDir, 'hello')));

  // Pods bound by hand (nodeName) skip the scheduler: the kubelet reports FailedMount in the volume manager's words.
  const nodeName = (await k(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
  const pinned = (name: string, claim: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  nodeName: ${nodeName}\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: main, image: ${bb}, command: [sleep, '60'], volumeMounts: [{name: v, mountPath: /v}]}\n  volumes: [{name: v, persistentVolumeClaim: {claimName: ${claim}}}]\n`;
  await k(['apply', '-f', '-'], [pinned('pinned-unbound', 'lonely'), pinned('pinned-missing', 'nosuch')].join('---\n'));
  const failedMount = async (pod: string) =>
    k(['get', 'events', '--field-selector', `involvedObject.name=${pod},reason=FailedMount`, '-o', 'jsonpath={.items[*].message}']);
  await waitFor('FailedMount of the unbound claim', async () =>
    (await failedMount('pinned-unbound')).includes(
      'Unable to attach or mount volumes: unmounted volumes=[v], unattached volumes=[], failed to process volumes=[v]: error processing PVC default/lonely: PVC is not bound',
    ),
  );
  await waitFor('FailedMount of the missing claim', async () =>
    (await failedMount('pinned-missing')).includes(
      'error processing PVC default/nosuch: failed to fetch PVC from API server: persistentvolumeclaims "nosuch" not found',
    ),
  );
  await k(['delete', 'pod', 'pinned-unbound', 'pinned-missing', '--wait=false']);

  // A pod whose claim does not exist stays Pending with the scheduler's words.
  await k(
    ['apply', '-f', '-'],
    `apiVersion: v1\nkind: Pod\nmetadata: {name: orphan}\nspec:\n  containers:\n  - {name: main, image: ${bb}, command: [sleep, '1']}\n  volumes: [{name: v, persistentVolumeClaim: {claimName: nosuch}}]\n`,
  );
  await waitFor('FailedScheduling for the missing claim', async () =>
    /0\/1 nodes are available: persistentvolumeclaim "nosuch" not found\. preemption: 0\/1 nodes are available: 1 Preemption is not helpful for scheduling\./.test(
      await k(['get', 'events', '--field-selector', 'involvedObject.name=orphan,reason=FailedScheduling', '-o', 'jsonpath={.items[*].message}']),
    ),
  );
});
