// Pod patches and selectors: JSON merge, JSON patch, strategic merge with containers by name and
// $setElementOrder, label and field selectors.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podMergeSchema } from '../../src/kubeapi/kinds/pods.js';
import { jsonMergePatch, jsonPatch, strategicMerge } from '../../src/kubeapi/patch.js';
import { parseFieldSelector, parseLabelSelector } from '../../src/kubeapi/selectors.js';

const pod = {
  metadata: { name: 'p', labels: { a: '1', tier: 'web' } },
  spec: {
    containers: [
      { name: 'main', image: 'a:1', env: [{ name: 'X', value: '1' }] },
      { name: 'side', image: 's:1' },
    ],
  },
};

test('JSON merge patch replaces lists and removes with null', () => {
  const out = jsonMergePatch(pod, { metadata: { labels: { tier: null, b: '2' } }, spec: { containers: [{ name: 'only' }] } }) as typeof pod;
  assert.deepEqual(out.metadata.labels, { a: '1', b: '2' });
  assert.deepEqual(out.spec.containers, [{ name: 'only' }]);
});

test('JSON patch applies operations in order and fails as a whole', () => {
  const out = jsonPatch(pod, [
    { op: 'replace', path: '/spec/containers/0/image', value: 'a:2' },
    { op: 'add', path: '/metadata/labels/c', value: '3' },
    { op: 'remove', path: '/metadata/labels/a' },
    { op: 'test', path: '/metadata/name', value: 'p' },
  ]) as typeof pod;
  assert.equal(out.spec.containers[0]!.image, 'a:2');
  assert.deepEqual(out.metadata.labels, { tier: 'web', c: '3' });
  assert.throws(() => jsonPatch(pod, [{ op: 'test', path: '/metadata/name', value: 'q' }]), /test failed/);
  assert.equal(pod.spec.containers[0]!.image, 'a:1');
});

test('strategic merge merges containers by name, keeps order and deletes by directive', () => {
  const out = strategicMerge(
    pod,
    {
      metadata: { labels: { tier: null } },
      spec: {
        containers: [
          { name: 'side', image: 's:2' },
          { name: 'main', env: [{ name: 'Y', value: '2' }] },
        ],
      },
    },
    podMergeSchema,
  ) as typeof pod;
  assert.deepEqual(
    out.spec.containers.map((c) => [c.name, c.image]),
    [
      ['main', 'a:1'],
      ['side', 's:2'],
    ],
  );
  assert.deepEqual(out.spec.containers[0]!.env, [
    { name: 'X', value: '1' },
    { name: 'Y', value: '2' },
  ]);
  assert.deepEqual(out.metadata.labels, { a: '1' });
  const ordered = strategicMerge(
    pod,
    { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'main' }], containers: [{ name: 'main', image: 'a:3' }] } },
    podMergeSchema,
  ) as typeof pod;
  assert.deepEqual(
    ordered.spec.containers.map((c) => c.name),
    ['side', 'main'],
  );
  const deleted = strategicMerge(pod, { spec: { containers: [{ name: 'side', $patch: 'delete' }] } }, podMergeSchema) as typeof pod;
  assert.deepEqual(
    deleted.spec.containers.map((c) => c.name),
    ['main'],
  );
});

test('label selectors: equality, sets, existence', () => {
  const l = { app: 'web', tier: 'front' };
  assert.ok(parseLabelSelector('app=web')(l));
  assert.ok(parseLabelSelector('app==web,tier!=back')(l));
  assert.ok(parseLabelSelector('tier in (front, back)')(l));
  assert.ok(!parseLabelSelector('tier notin (front)')(l));
  assert.ok(parseLabelSelector('app,!missing')(l));
  assert.throws(() => parseLabelSelector('a b c'), /unable to parse requirement/);
});

test('field selectors over known fields; unknown fields are refused', () => {
  const sel = parseFieldSelector(
    'status.phase=Running,metadata.name!=x',
    (p: { phase: string; name: string }) => ({ 'status.phase': p.phase, 'metadata.name': p.name }),
    ['status.phase', 'metadata.name'],
    'Pod',
  );
  assert.ok(sel({ phase: 'Running', name: 'a' }));
  assert.ok(!sel({ phase: 'Pending', name: 'a' }));
  assert.throws(() => parseFieldSelector('spec.foo=1', () => ({}), ['status.phase'], 'Pod'), /not a known field selector/);
});
