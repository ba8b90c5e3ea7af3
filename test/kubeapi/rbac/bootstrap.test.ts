// The bootstrap policy's reconciliation at start (kube-apiserver's rbac/bootstrap-roles with
// reconciliation's RemoveExtraPermissions false): missing roles and bindings created; rules, subjects,
// labels and the autoupdate annotation a role or binding lost given back while what was added stays;
// one annotated autoupdate "false" left alone.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterRole, ClusterRoleBinding } from '../../../src/api/validation/rbac.js';
import type { KubeObject, Storage } from '../../../src/kubeapi/backend.js';
import { ensureBootstrapPolicy } from '../../../src/kubeapi/rbac/bootstrap.js';

/** Objects by namespace and name, with create and update: the least the bootstrap writes through. */
function memoryStorage(): Storage & { writes: number } {
  const items = new Map<string, KubeObject>();
  const s = {
    writes: 0,
    list: () => ({ items: [...items.values()] }),
    get: (ns: string, name: string) => structuredClone(items.get(`${ns}/${name}`)),
    create: (o: KubeObject) => {
      s.writes++;
      items.set(`${o.metadata!.namespace ?? ''}/${o.metadata!.name!}`, structuredClone(o));
      return Promise.resolve(o);
    },
    update: (o: KubeObject) => {
      s.writes++;
      items.set(`${o.metadata!.namespace ?? ''}/${o.metadata!.name!}`, structuredClone(o));
      return Promise.resolve(o);
    },
  };
  return s;
}

test('created at the first start; nothing written at the next', async () => {
  const clusterRoles = memoryStorage();
  const clusterRoleBindings = memoryStorage();
  await ensureBootstrapPolicy({ clusterRoles, clusterRoleBindings });
  const names = clusterRoles.list().items.map((o) => o.metadata?.name);
  for (const n of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:basic-user',
    'system:discovery',
    'system:public-info-viewer',
    'system:node',
    'system:kube-scheduler',
  ]) {
    assert.ok(names.includes(n), n);
  }
  const admin = clusterRoleBindings.get('', 'cluster-admin') as ClusterRoleBinding;
  assert.deepEqual(admin.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
  const discovery = clusterRoleBindings.get('', 'system:discovery') as ClusterRoleBinding;
  assert.deepEqual(discovery.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]);
  const writes = clusterRoles.writes + clusterRoleBindings.writes;
  await ensureBootstrapPolicy({ clusterRoles, clusterRoleBindings });
  assert.equal(clusterRoles.writes + clusterRoleBindings.writes, writes);
});

test('the namespaced roles and bindings in kube-system (extension-apiserver-authentication-reader, leader locking)', async () => {
  const [clusterRoles, clusterRoleBindings, roles, roleBindings] = [memoryStorage(), memoryStorage(), memoryStorage(), memoryStorage()];
  await ensureBootstrapPolicy({ clusterRoles, clusterRoleBindings, roles, roleBindings });
  assert.deepEqual(
    roles.list().items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
    [
      'kube-system/extension-apiserver-authentication-reader',
      'kube-system/system::leader-locking-kube-controller-manager',
      'kube-system/system::leader-locking-kube-scheduler',
    ],
  );
  assert.equal(roleBindings.list().items.length, 3);
  assert.equal(
    roles.get('kube-system', 'extension-apiserver-authentication-reader')?.metadata?.annotations?.['rbac.authorization.kubernetes.io/autoupdate'],
    'true',
  );
});

test('reconciled: lost rules and subjects given back, added ones kept; autoupdate "false" left alone', async () => {
  const clusterRoles = memoryStorage();
  const clusterRoleBindings = memoryStorage();
  await ensureBootstrapPolicy({ clusterRoles, clusterRoleBindings });
  const extra = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] };
  const basic = clusterRoles.get('', 'system:basic-user') as ClusterRole & KubeObject;
  await clusterRoles.update!({ ...basic, rules: [extra] } as KubeObject, {});
  const discovery = clusterRoles.get('', 'system:discovery') as ClusterRole & KubeObject;
  await clusterRoles.update!(
    { ...discovery, metadata: { ...discovery.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [] } as KubeObject,
    {},
  );
  const binding = clusterRoleBindings.get('', 'system:basic-user') as ClusterRoleBinding & KubeObject;
  await clusterRoleBindings.update!({ ...binding, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] } as KubeObject, {});

  await ensureBootstrapPolicy({ clusterRoles, clusterRoleBindings });
  assert.deepEqual((clusterRoles.get('', 'system:basic-user') as ClusterRole).rules, [
    extra,
    { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]);
  assert.deepEqual((clusterRoles.get('', 'system:discovery') as ClusterRole).rules, []);
  assert.deepEqual(
    (clusterRoleBindings.get('', 'system:basic-user') as ClusterRoleBinding).subjects?.map((s) => s.name),
    ['alice', 'system:authenticated'],
  );
});
