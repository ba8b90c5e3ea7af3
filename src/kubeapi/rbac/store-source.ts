// The RBAC authorizer's view of the object store: its Roles, ClusterRoles and their bindings.

import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from '../../api/validation/rbac.js';
import type { ObjectsBackend } from '../backend.js';
import type { RbacSource } from './rule-resolver.js';

/** The store's RBAC kinds as the rule resolver reads them; kinds the store does not keep are empty. */
export function storeRbacSource(objects: ObjectsBackend | undefined): RbacSource {
  const list = <T>(kind: string): T[] => (objects?.storage(kind)?.list().items ?? []) as T[];
  return {
    clusterRoleBindings: () => list<ClusterRoleBinding>('ClusterRoleBinding'),
    roleBindings: (ns) => list<RoleBinding>('RoleBinding').filter((b) => b.metadata?.namespace === ns),
    clusterRole: (name) => objects?.storage('ClusterRole')?.get('', name) as ClusterRole | undefined,
    role: (ns, name) => objects?.storage('Role')?.get(ns, name) as Role | undefined,
  };
}
