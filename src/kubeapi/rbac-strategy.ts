// How the object store keeps rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding} strategies):
// validated by api/validation/rbac.ts; a binding's roleRef never changes.

import { kindTypes } from '../api/schema.js';
import {
  defaultBinding,
  validateBindingUpdate,
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
  type ClusterRole,
  type ClusterRoleBinding,
  type Role,
  type RoleBinding,
} from '../api/validation/rbac.js';
import type { ObjectStrategy } from './backend.js';

const apiVersion = 'rbac.authorization.k8s.io/v1';

export const roleStrategy: ObjectStrategy = {
  kind: 'Role',
  resource: 'roles',
  apiVersion,
  namespaced: true,
  schemaType: kindTypes.Role,
  validate: (o) => validateRole(o as Role),
  validateUpdate: (next) => validateRole(next as Role),
};

export const clusterRoleStrategy: ObjectStrategy = {
  kind: 'ClusterRole',
  resource: 'clusterroles',
  apiVersion,
  namespaced: false,
  schemaType: kindTypes.ClusterRole,
  validate: (o) => validateClusterRole(o as ClusterRole),
  validateUpdate: (next) => validateClusterRole(next as ClusterRole),
};

export const roleBindingStrategy: ObjectStrategy = {
  kind: 'RoleBinding',
  resource: 'rolebindings',
  apiVersion,
  namespaced: true,
  schemaType: kindTypes.RoleBinding,
  defaults: (o) => defaultBinding(o as RoleBinding) as typeof o,
  validate: (o) => validateRoleBinding(o as RoleBinding),
  validateUpdate: (next, old) => [...validateRoleBinding(next as RoleBinding), ...validateBindingUpdate(next as RoleBinding, old as RoleBinding)],
};

export const clusterRoleBindingStrategy: ObjectStrategy = {
  kind: 'ClusterRoleBinding',
  resource: 'clusterrolebindings',
  apiVersion,
  namespaced: false,
  schemaType: kindTypes.ClusterRoleBinding,
  defaults: (o) => defaultBinding(o as ClusterRoleBinding) as typeof o,
  validate: (o) => validateClusterRoleBinding(o as ClusterRoleBinding),
  validateUpdate: (next, old) => [
    ...validateClusterRoleBinding(next as ClusterRoleBinding),
    ...validateBindingUpdate(next as ClusterRoleBinding, old as ClusterRoleBinding),
  ],
};

export const rbacStrategies: readonly ObjectStrategy[] = [roleStrategy, clusterRoleStrategy, roleBindingStrategy, clusterRoleBindingStrategy];
