// The PV binder, the local-path provisioner and pvc/pv-protection on a real object store and an
// injected clock (the pods API is a stand-in whose watch delivers the pods the test gives): a claim
// binds to a matching volume made by hand and to one named by volumeName; an Immediate claim of the
// local-path class is provisioned a directory (0777) and bound; Delete removes the directory and the
// volume when the claim goes, Retain leaves the volume Released; a claim in use keeps its
// pvc-protection finalizer until its pod is gone.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { startWorkloadControllers } from '../../src/controllers/workload-controllers.js';
import { volumeDir } from '../../src/controllers/local-path-provisioner.js';
import { EventStore } from '../../src/events/store.js';
import type { KubeBackend, KubeObject } from '../../src/kubeapi/backend.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

function harness(t: { after(fn: () => void): void }) {
  const clock = new FakeClock();
  const root = mkdtempSync(join(tmpdir(), 'podvisor-binder-'));
  const store = new ObjectStore({ now: () => clock.now() });
  const watchers: Array<(ev: { type: string; object: Pod }) => void> = [];
  const backend = {
    nodeName: 'vm',
    objects: store,
    watchPods: (_rv: string, on: (ev: { type: string; object: Pod }) => void) => {
      watchers.push(on);
      return { stop() {} };
    },
  } as unknown as KubeBackend;
  const events = new EventStore({ clock, host: 'vm' });
  const controllers = startWorkloadControllers(backend, clock, silentLogger, events, { storage: { rootDir: root, nodeName: 'vm' } });
  t.after(() => {
    controllers.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await controllers.idle();
      await clock.advance(0);
    }
  };
  const claim = (name: string) => store.get('PersistentVolumeClaim', 'default', name) as PersistentVolumeClaim | undefined;
  const volume = (name: string) => store.get('PersistentVolume', '', name) as PersistentVolume | undefined;
  const pods = (type: string, object: Pod) => watchers.forEach((w) => w({ type, object }));
  return { store, root, settle, claim, volume, pods, events };
}

const claimOf = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const volumeOf = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, storageClassName: '', ...spec },
});

test('hand-made volumes: matched by class and size, or named by volumeName; Released under Retain when the claim goes', async (t) => {
  const h = harness(t);
  await h.settle();
  // The default class exists; a claim naming class "" does not get it.
  assert.equal(h.store.get('StorageClass', '', 'standard')?.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
  await h.store.create('PersistentVolume', volumeOf('small', { capacity: { storage: '1Gi' } }));
  await h.store.create('PersistentVolume', volumeOf('large'));
  await h.store.create('PersistentVolumeClaim', claimOf('a', { storageClassName: '' }));
  await h.store.create('PersistentVolumeClaim', claimOf('b', { storageClassName: '', volumeName: 'large' }));
  await h.settle();
  assert.equal(h.claim('a')?.spec?.volumeName, 'small');
  assert.equal(h.claim('a')?.status?.phase, 'Bound');
  assert.equal(h.claim('a')?.status?.capacity?.storage, '1Gi');
  assert.equal(h.volume('small')?.status?.phase, 'Bound');
  assert.equal(h.volume('small')?.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.equal(h.claim('b')?.status?.phase, 'Bound');
  assert.equal(h.volume('large')?.spec?.claimRef?.uid, h.claim('b')?.metadata?.uid);
  // A third claim finds nothing: Pending with FailedBinding.
  await h.store.create('PersistentVolumeClaim', claimOf('c', { storageClassName: '' }));
  await h.settle();
  assert.equal(h.claim('c')?.status?.phase, 'Pending');
  assert.ok(
    h.events.list().some((e) => e.reason === 'FailedBinding' && e.message === 'no persistent volumes available for this claim and no storage class is set'),
  );
  // The claim goes: its volume is Released and kept (Retain).
  await h.store.delete('PersistentVolumeClaim', 'default', 'a');
  await h.settle();
  assert.equal(h.claim('a'), undefined);
  assert.equal(h.volume('small')?.status?.phase, 'Released');
});

test('local-path: an Immediate claim is provisioned a 0777 directory and bound; Delete removes both when the claim goes; pvc-protection holds a claim in use', async (t) => {
  const h = harness(t);
  await h.settle();
  await h.store.create('StorageClass', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'now' },
    provisioner: 'podvisor.io/local-path',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  });
  await h.store.create('PersistentVolumeClaim', claimOf('data', { storageClassName: 'now' }));
  await h.settle();
  const claim = h.claim('data')!;
  assert.equal(claim.status?.phase, 'Bound');
  const pvName = `pvc-${claim.metadata!.uid!}`;
  const pv = h.volume(pvName)!;
  assert.equal(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'], 'podvisor.io/local-path');
  assert.equal(pv.spec?.persistentVolumeReclaimPolicy, 'Delete');
  assert.deepEqual(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values, ['vm']);
  const dir = volumeDir(h.root, pvName, 'default', 'data');
  assert.equal(pv.spec?.hostPath?.path, dir);
  assert.equal(statSync(dir).mode & 0o777, 0o777);
  assert.throws(() => volumeDir(h.root, '../x', 'default', 'data'), /invalid volume name/);

  // Expansion: recorded on the volume and the claim's status.
  await h.store.update('PersistentVolumeClaim', { ...(h.claim('data') as KubeObject), spec: { ...claim.spec, resources: { requests: { storage: '3Gi' } } } });
  await h.settle();
  assert.equal(h.volume(pvName)?.spec?.capacity?.storage, '3Gi');
  assert.equal(h.claim('data')?.status?.capacity?.storage, '3Gi');

  // In use by a pod: deleting the claim leaves it Terminating until the pod is gone.
  const user = {
    metadata: { name: 'user', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'c' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] },
    status: { phase: 'Running' },
  } as Pod;
  h.pods('ADDED', user);
  await h.store.delete('PersistentVolumeClaim', 'default', 'data');
  await h.settle();
  assert.ok(h.claim('data')?.metadata?.deletionTimestamp);
  assert.deepEqual(h.claim('data')?.metadata?.finalizers, ['kubernetes.io/pvc-protection']);
  assert.ok(existsSync(dir));
  h.pods('DELETED', user);
  await h.settle();
  assert.equal(h.claim('data'), undefined);
  assert.equal(h.volume(pvName), undefined);
  assert.ok(!existsSync(dir));
});
