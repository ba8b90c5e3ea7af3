// The resource table's rows for rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings, kept by the object store (rbac-strategy.ts) and printed as kubectl prints them
// (printRole / printClusterRole: NAME, CREATED AT; printRoleBinding / printClusterRoleBinding: NAME,
// ROLE, AGE, and USERS, GROUPS, SERVICEACCOUNTS with -o wide). Upstream: pkg/registry/rbac/*.

import type { ClusterRoleBinding, RoleBinding } from '../../api/validation/rbac.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

const group = 'rbac.authorization.k8s.io';
const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

function roleTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [col('Name', nameDescription, 0, 'string', 'name'), col('Created At', ageDescription, 0, 'date')];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', o.metadata?.creationTimestamp ?? ''],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

/** The subjects of a binding by kind, as the wide columns print them (service accounts as namespace/name). */
function subjectsOf(b: RoleBinding | ClusterRoleBinding): { users: string; groups: string; serviceAccounts: string } {
  const of = (kind: string) => (b.subjects ?? []).filter((s) => s.kind === kind);
  return {
    users: of('User')
      .map((s) => s.name)
      .join(', '),
    groups: of('Group')
      .map((s) => s.name)
      .join(', '),
    serviceAccounts: of('ServiceAccount')
      .map((s) => `${s.namespace ?? ''}/${s.name}`)
      .join(', '),
  };
}

function bindingTable(roleDescription: string, bindingWord: string) {
  return (items: readonly KubeObject[], opts: TableOptions) => {
    const columns = [
      col('Name', nameDescription, 0, 'string', 'name'),
      col('Role', roleDescription),
      col('Age', ageDescription),
      col('Users', `Users in the ${bindingWord}`, 1),
      col('Groups', `Groups in the ${bindingWord}`, 1),
      col('ServiceAccounts', `ServiceAccounts in the ${bindingWord}`, 1),
    ];
    const rows = items.map((o) => {
      const b = o as RoleBinding;
      const s = subjectsOf(b);
      return {
        cells: [
          b.metadata?.name ?? '',
          `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`,
          translateTimestampSince(b.metadata?.creationTimestamp, opts.now),
          s.users,
          s.groups,
          s.serviceAccounts,
        ],
        object: rowObject(o, opts.includeObject ?? 'Metadata'),
      };
    });
    return table(columns, rows, opts);
  };
}

export const roles = resource({
  group,
  version: 'v1',
  kind: 'Role',
  resource: 'roles',
  singular: 'role',
  namespaced: true,
  verbs,
  storage: (b) => b.objects?.storage('Role'),
  table: roleTable,
});

export const clusterRoles = resource({
  group,
  version: 'v1',
  kind: 'ClusterRole',
  resource: 'clusterroles',
  singular: 'clusterrole',
  namespaced: false,
  verbs,
  storage: (b) => b.objects?.storage('ClusterRole'),
  table: roleTable,
});

export const roleBindings = resource({
  group,
  version: 'v1',
  kind: 'RoleBinding',
  resource: 'rolebindings',
  singular: 'rolebinding',
  namespaced: true,
  verbs,
  storage: (b) => b.objects?.storage('RoleBinding'),
  table: bindingTable(
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
    'roleBinding',
  ),
});

export const clusterRoleBindings = resource({
  group,
  version: 'v1',
  kind: 'ClusterRoleBinding',
  resource: 'clusterrolebindings',
  singular: 'clusterrolebinding',
  namespaced: false,
  verbs,
  storage: (b) => b.objects?.storage('ClusterRoleBinding'),
  table: bindingTable(
    'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
    'clusterRoleBinding',
  ),
});

export const rbacResources = [roles, clusterRoles, roleBindings, clusterRoleBindings];
