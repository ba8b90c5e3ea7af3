// The names a client gives a kind, resolved against the resource table as kubectl's RESTMapper
// resolves them: plural, singular, short names, kind, group-qualified; core before other groups; the
// `all` category in discovery's order; and the paths of namespaced and cluster-scoped kinds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceTable } from '../../src/kubeapi/resource-table.js';
import { categoryMembers, resolveResource, resourcePath } from '../../src/kubeapi/resource-names.js';

test('every name of a kind resolves to its row', () => {
  for (const name of ['nodes', 'node', 'no', 'Node', 'NODES', 'nodes.']) {
    const def = resolveResource(resourceTable, name.replace(/\.$/, ''));
    assert.equal(def?.kind, 'Node', name);
  }
  assert.equal(resolveResource(resourceTable, 'deploy')?.group, 'apps');
  assert.equal(resolveResource(resourceTable, 'deployments.apps')?.kind, 'Deployment');
  assert.equal(resolveResource(resourceTable, 'deployments.batch'), undefined);
  assert.equal(resolveResource(resourceTable, 'ns')?.kind, 'Namespace');
  assert.equal(resolveResource(resourceTable, 'nosuch'), undefined);
});

test('two groups serving one name: the core group first, the other by its group', () => {
  assert.equal(resolveResource(resourceTable, 'pods')?.group, '');
  assert.equal(resolveResource(resourceTable, 'pods.metrics.k8s.io')?.group, 'metrics.k8s.io');
});

test('the all category in the order kubectl lists it', () => {
  assert.deepEqual(
    categoryMembers(resourceTable, 'all').map((d) => d.resource),
    ['pods', 'replicationcontrollers', 'services', 'daemonsets', 'deployments', 'replicasets', 'statefulsets', 'cronjobs', 'jobs', 'horizontalpodautoscalers'],
  );
});

test('paths: a cluster-scoped kind has no namespace, a namespaced one has it unless listed across all', () => {
  const node = resolveResource(resourceTable, 'node')!;
  const deploy = resolveResource(resourceTable, 'deploy')!;
  assert.equal(resourcePath(node, 'default', 'n1'), '/api/v1/nodes/n1');
  assert.equal(resourcePath(node, undefined), '/api/v1/nodes');
  assert.equal(resourcePath(deploy, 'default', 'web'), '/apis/apps/v1/namespaces/default/deployments/web');
  assert.equal(resourcePath(deploy, undefined), '/apis/apps/v1/deployments');
});
