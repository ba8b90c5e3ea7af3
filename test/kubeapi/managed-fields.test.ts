// Server-side apply's field sets, merges, conflicts and removals (structured-merge-diff's cases:
// multiple appliers, an applier and an updater, force, fields no longer applied).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podMergeSchema } from '../../src/kubeapi/kinds/pods.js';
import {
  applyConfig,
  fieldSetOf,
  fromFieldsV1,
  managerOf,
  toFieldsV1,
  updateManagedFields,
  type ManagedFieldsEntry,
  type WriteContext,
} from '../../src/kubeapi/managed-fields.js';
import { mergeSchema } from '../../src/kubeapi/patch.js';
import { ApiError } from '../../src/http/status.js';

const deploySchema = mergeSchema({ 'spec.template.spec.containers': 'name', 'spec.template.spec.containers[].ports': 'containerPort' });
const clock = () => Date.parse('2026-01-02T03:04:05Z');
const ctx = (manager: string): WriteContext => ({ manager, apiVersion: 'apps/v1', schema: deploySchema, now: clock });

const deployment = (replicas: number, image = 'nginx:1') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image, ports: [{ containerPort: 80 }] }] } },
  },
});

type Stored = ReturnType<typeof deployment> & { metadata: { managedFields?: ManagedFieldsEntry[] } };
const asStored = (o: unknown) => o as Stored;
const withFields = (o: object, managedFields: ManagedFieldsEntry[]): Stored => {
  const s = structuredClone(o) as Stored;
  s.metadata.managedFields = managedFields;
  return s;
};

test('field sets: f: fields, k: list-map items, atomic label selectors, server metadata left out', () => {
  const set = toFieldsV1(fieldSetOf(deployment(3), deploySchema));
  assert.deepEqual(set, {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80}': { '.': {}, 'f:containerPort': {} } } },
          },
        },
      },
    },
  });
});

test('FieldsV1 round-trips, set lists as v: members', () => {
  const pod = { metadata: { finalizers: ['a', 'b'] }, spec: { containers: [{ name: 'c', args: ['x', 'y'] }] } };
  const set = fieldSetOf(pod, podMergeSchema);
  const tree = toFieldsV1(set);
  assert.deepEqual(tree, {
    'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } },
    'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:name': {} } } },
  });
  assert.deepEqual([...fromFieldsV1(tree)].sort(), [...set].sort());
});

test('an apply creates the Apply entry owning what was applied', () => {
  const { object, managedFields } = applyConfig(undefined, deployment(3), ctx('kubectl'), false);
  assert.equal(asStored(object).spec.replicas, 3);
  assert.equal(managedFields.length, 1);
  assert.deepEqual(
    { ...managedFields[0], fieldsV1: undefined },
    {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2026-01-02T03:04:05Z',
      fieldsType: 'FieldsV1',
      fieldsV1: undefined,
    },
  );
});

const cases: Array<{ name: string; second: object; force: boolean; error?: string; replicas?: number }> = [
  { name: 'same value: shared ownership, no conflict', second: deployment(3), force: false, replicas: 3 },
  {
    name: 'other value: conflict',
    second: deployment(5),
    force: false,
    error: 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas',
  },
  {
    name: 'two fields: conflicts listed per manager',
    second: deployment(5, 'nginx:2'),
    force: false,
    error: 'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
  },
  { name: 'force takes the field', second: deployment(5), force: true, replicas: 5 },
];

for (const c of cases) {
  test(`two appliers: ${c.name}`, () => {
    const first = applyConfig(undefined, deployment(3), ctx('alice'), false);
    const live = withFields(first.object, first.managedFields);
    if (c.error) {
      assert.throws(
        () => applyConfig(live, c.second, ctx('bob'), c.force),
        (err: unknown) => err instanceof ApiError && err.code === 409 && err.message === c.error,
      );
      return;
    }
    const out = applyConfig(live, c.second, ctx('bob'), c.force);
    assert.equal(asStored(out.object).spec.replicas, c.replicas);
    const alice = fromFieldsV1(out.managedFields.find((e) => e.manager === 'alice')!.fieldsV1);
    const replicas = ['f:spec', 'f:replicas'].join('\n');
    assert.equal(alice.has(replicas), !c.force);
  });
}

test('a field an applier stops applying is removed unless another manager owns it', () => {
  const first = applyConfig(undefined, { ...deployment(3), metadata: { name: 'web', labels: { app: 'web', tier: 'a', team: 't' } } }, ctx('alice'), false);
  let live = withFields(first.object, first.managedFields);
  const bob = applyConfig(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { team: 't' } } }, ctx('bob'), false);
  live = withFields(bob.object, bob.managedFields);
  const out = applyConfig(live, deployment(3), ctx('alice'), false);
  assert.deepEqual(asStored(out.object).metadata.labels, { app: 'web', team: 't' });
});

test('an Update takes the fields it changes from an applier, which then conflicts with it', () => {
  const first = applyConfig(undefined, deployment(3), ctx('kubectl'), false);
  const live = withFields(first.object, first.managedFields);
  const edited = structuredClone(live);
  edited.spec.replicas = 7;
  const managed = updateManagedFields(live, edited, live.metadata.managedFields, { ...ctx('kubectl-edit'), now: () => Date.parse('2026-01-02T03:05:00Z') });
  const edit = managed.find((e) => e.manager === 'kubectl-edit')!;
  assert.equal(edit.operation, 'Update');
  assert.deepEqual(edit.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.ok(!fromFieldsV1(managed.find((e) => e.manager === 'kubectl')!.fieldsV1).has('f:spec\nf:replicas'));
  assert.throws(
    () => applyConfig(withFields(edited, managed), deployment(3), ctx('kubectl'), false),
    (err: unknown) =>
      err instanceof ApiError &&
      err.message === 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas' &&
      err.details?.causes?.[0]?.field === '.spec.replicas',
  );
});

test('managedFields the request sets replace the stored ones (client-side apply migration)', () => {
  const created = updateManagedFields(undefined, deployment(3), undefined, ctx('kubectl-client-side-apply'));
  assert.equal(created[0]!.manager, 'kubectl-client-side-apply');
  const live = withFields(deployment(3), created);
  const migrated: ManagedFieldsEntry[] = [{ ...created[0]!, manager: 'kubectl', operation: 'Apply' }];
  const out = updateManagedFields(live, withFields(deployment(3), migrated), migrated, ctx('kubectl'));
  assert.deepEqual(
    out.map((e) => [e.manager, e.operation]),
    [['kubectl', 'Apply']],
  );
  // The migrated applier now drops a label it no longer applies.
  const applied = applyConfig(withFields(deployment(3), out), { ...deployment(3), metadata: { name: 'web' } }, ctx('kubectl'), false);
  assert.equal(asStored(applied.object).metadata.labels, undefined);
});

test('the manager of a write without fieldManager is the user agent first token', () => {
  assert.equal(managerOf(null, 'kubectl-client-side-apply/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl-client-side-apply');
  assert.equal(managerOf('mine', 'kubectl/v1.20.2'), 'mine');
});

test('an Update that creates maps owns them as members, value structs not (client-side apply of a ConfigMap)', () => {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'default', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
    data: { x: '1' },
  };
  const [entry] = updateManagedFields(undefined, cm, undefined, { ...ctx('kubectl-client-side-apply'), apiVersion: 'v1', schema: mergeSchema({}) });
  // As kube-apiserver records it.
  assert.deepEqual(entry!.fieldsV1, {
    'f:data': { '.': {}, 'f:x': {} },
    'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
  });
});

test('a scale by another manager takes the replicas: the applier then conflicts with that subresource', () => {
  const first = applyConfig(undefined, deployment(3), ctx('kubectl'), false);
  const live = withFields(first.object, first.managedFields);
  const scaled = structuredClone(live);
  scaled.spec.replicas = 4;
  const managed = updateManagedFields(live, scaled, live.metadata.managedFields, { ...ctx('kubectl-scale'), subresource: 'scale' });
  assert.throws(
    () => applyConfig(withFields(scaled, managed), deployment(3), ctx('kubectl'), false),
    (err: unknown) =>
      err instanceof ApiError &&
      err.message === 'Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using apps/v1: .spec.replicas',
  );
});
