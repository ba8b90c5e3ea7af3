// The object store's finalizers and namespace lifecycle, on an in-memory store: a DELETE of an object
// held by finalizers (its own, or the propagation policy's orphan/foregroundDeletion) marks it with a
// deletionTimestamp until an update removes the last; a client cannot set a deletionTimestamp; a
// Namespace is Terminating until its spec.finalizers are gone; creation in a missing or Terminating
// namespace is refused in the API server's words.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import type { KubeObject, WatchEvent } from '../../src/kubeapi/backend.js';

const cm = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { a: '1' } });

test('an object held by a finalizer is marked on delete and goes when the last finalizer is removed', async () => {
  const store = new ObjectStore({ now: () => Date.parse('2026-01-01T00:00:00Z') });
  const events: string[] = [];
  store.watch('ConfigMap', '', (ev: WatchEvent<KubeObject>) => events.push(`${ev.type} ${ev.object.metadata?.name}`));
  await store.create('ConfigMap', cm('held', { finalizers: ['example.com/hold'] }));
  const marked = await store.delete('ConfigMap', 'default', 'held');
  assert.equal(marked.metadata?.deletionTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(marked.metadata?.deletionGracePeriodSeconds, 0);
  assert.ok(store.get('ConfigMap', 'default', 'held'));
  // A second delete changes nothing; an update keeps the deletionTimestamp.
  await store.delete('ConfigMap', 'default', 'held');
  const current = store.get('ConfigMap', 'default', 'held')!;
  await store.update('ConfigMap', { ...current, data: { a: '2' } });
  assert.equal(store.get('ConfigMap', 'default', 'held')!.metadata?.deletionTimestamp, '2026-01-01T00:00:00Z');
  const latest = store.get('ConfigMap', 'default', 'held')!;
  await store.update('ConfigMap', { ...latest, metadata: { ...latest.metadata, finalizers: [] } });
  assert.equal(store.get('ConfigMap', 'default', 'held'), undefined);
  assert.deepEqual(events, ['ADDED held', 'MODIFIED held', 'MODIFIED held', 'DELETED held']);
});

test('the propagation policy adds orphan or foregroundDeletion; Background deletes at once; clients cannot set a deletionTimestamp', async () => {
  const store = new ObjectStore();
  await store.create('ConfigMap', cm('o'));
  assert.deepEqual((await store.delete('ConfigMap', 'default', 'o', { propagationPolicy: 'Orphan' })).metadata?.finalizers, ['orphan']);
  // Deleted again in the foreground: the finalizer is swapped.
  assert.deepEqual((await store.delete('ConfigMap', 'default', 'o', { propagationPolicy: 'Foreground' })).metadata?.finalizers, ['foregroundDeletion']);
  await store.create('ConfigMap', cm('b'));
  await store.delete('ConfigMap', 'default', 'b', { propagationPolicy: 'Background' });
  assert.equal(store.get('ConfigMap', 'default', 'b'), undefined);
  const created = await store.create('ConfigMap', cm('c', { deletionTimestamp: '2020-01-01T00:00:00Z' }));
  assert.equal(created.metadata?.deletionTimestamp, undefined);
});

test('a Namespace is Terminating until its finalizers are gone; nothing is created in a missing or Terminating one', async () => {
  const store = new ObjectStore();
  store.enforceNamespaceLifecycle(() => ['static-ns']);
  await assert.rejects(store.create('ConfigMap', cm('x', { namespace: 'nowhere' })), { code: 404, message: 'namespaces "nowhere" not found' });
  await store.create('ConfigMap', cm('x', { namespace: 'kube-system' }));
  await store.create('ConfigMap', cm('x', { namespace: 'static-ns' }));
  const ns = await store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  assert.deepEqual((ns as { spec?: unknown }).spec, { finalizers: ['kubernetes'] });
  assert.deepEqual((ns as { status?: unknown }).status, { phase: 'Active' });
  assert.deepEqual(ns.metadata?.labels, { 'kubernetes.io/metadata.name': 'shop' });
  await store.create('ConfigMap', cm('x', { namespace: 'shop' }));
  const terminating = await store.delete('Namespace', '', 'shop');
  assert.equal((terminating as { status?: { phase?: string } }).status?.phase, 'Terminating');
  await assert.rejects(
    store.create('ConfigMap', cm('y', { namespace: 'shop' })),
    (err: { code: number; message: string; details?: { causes?: unknown[] } }) => {
      assert.equal(err.code, 403);
      assert.equal(err.message, 'configmaps "y" is forbidden: unable to create new content in namespace shop because it is being terminated');
      assert.deepEqual(err.details?.causes, [{ reason: 'NamespaceTerminating', message: 'namespace shop is being terminated', field: 'metadata.namespace' }]);
      return true;
    },
  );
  const current = store.get('Namespace', '', 'shop')!;
  await store.update('Namespace', { ...current, spec: { finalizers: [] } } as KubeObject);
  assert.equal(store.get('Namespace', '', 'shop'), undefined);
});
