// The rules that apply to a user in a namespace (pkg/registry/rbac/validation rule.go
// DefaultRuleResolver VisitRulesFor / RulesFor): every ClusterRoleBinding whose subjects name the
// user, then, for a namespace, every RoleBinding of it; each binding's role read from the store (a
// missing role is an error the visit reports and passes over). A ServiceAccount subject without a
// namespace means the binding's namespace.

import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject } from '../../api/validation/rbac.js';
import type { UserInfo } from '../../http/router.js';

/** Where the resolver reads roles and bindings (the object store's RBAC kinds). */
export interface RbacSource {
  clusterRoleBindings(): readonly ClusterRoleBinding[];
  roleBindings(namespace: string): readonly RoleBinding[];
  clusterRole(name: string): ClusterRole | undefined;
  role(namespace: string, name: string): Role | undefined;
}

const saPrefix = 'system:serviceaccount:';

/** system:serviceaccount:NS:NAME. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${saPrefix}${namespace}:${name}`;
}

/** The namespace and name of a service account's username; undefined for any other user. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(saPrefix)) return undefined;
  const parts = username.slice(saPrefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** appliesToUser. */
export function appliesToUser(user: UserInfo, s: Subject, namespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      return !!ns && user.username === serviceAccountUsername(ns, s.name);
    }
    default:
      return false;
  }
}

/** Where a rule came from, as the authorizer's reason names it (clusterRoleBindingDescriber / roleBindingDescriber). */
export interface RuleSource {
  describe(): string;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** A rule with its source, or an error the visit met. */
export type Visit = { rule: PolicyRule; source: RuleSource } | { error: string };

/** GetRoleReferenceRules: the rules of the role a binding names, or the error of its absence. */
function roleReferenceRules(src: RbacSource, ref: RoleRef, namespace: string): PolicyRule[] | string {
  if (ref.kind === 'Role') {
    const role = src.role(namespace, ref.name);
    return role ? (role.rules ?? []) : `role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`;
  }
  if (ref.kind === 'ClusterRole') {
    const role = src.clusterRole(ref.name);
    return role ? (role.rules ?? []) : `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`;
  }
  return `unsupported role reference kind: ${JSON.stringify(ref.kind)}`;
}

/** Calls `visit` with each rule that applies to the user in the namespace ('' for cluster scope) until it returns false. */
export function visitRulesFor(src: RbacSource, user: UserInfo, namespace: string, visit: (v: Visit) => boolean): void {
  for (const b of src.clusterRoleBindings()) {
    const subject = (b.subjects ?? []).find((s) => appliesToUser(user, s, ''));
    if (!subject) continue;
    const rules = roleReferenceRules(src, b.roleRef, '');
    if (typeof rules === 'string') {
      if (!visit({ error: rules })) return;
      continue;
    }
    const source = {
      describe: () =>
        `ClusterRoleBinding ${JSON.stringify(b.metadata?.name ?? '')} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, '')}`,
    };
    for (const rule of rules) if (!visit({ rule, source })) return;
  }
  if (!namespace) return;
  for (const b of src.roleBindings(namespace)) {
    const subject = (b.subjects ?? []).find((s) => appliesToUser(user, s, namespace));
    if (!subject) continue;
    const rules = roleReferenceRules(src, b.roleRef, namespace);
    if (typeof rules === 'string') {
      if (!visit({ error: rules })) return;
      continue;
    }
    const name = `${b.metadata?.name ?? ''}/${namespace}`;
    const source = {
      describe: () => `RoleBinding ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, namespace)}`,
    };
    for (const rule of rules) if (!visit({ rule, source })) return;
  }
}

/** RulesFor: every rule that applies, and the errors met on the way. */
export function rulesFor(src: RbacSource, user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  visitRulesFor(src, user, namespace, (v) => {
    if ('error' in v) errors.push(v.error);
    else rules.push(v.rule);
    return true;
  });
  return { rules, errors };
}
