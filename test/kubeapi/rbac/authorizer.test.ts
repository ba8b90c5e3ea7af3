// The RBAC authorizer's decisions (upstream's rbac_test.go TestAuthorizer cases, then the rule
// resolver's subjects: users, groups, service accounts with and without a namespace), its reasons
// (the binding that allowed; the missing role when nothing did), the Forbidden messages word for word
// as kube-apiserver answers them, impersonation (who may, what the impersonated user's groups are),
// and the reviews' answers (SelfSubjectRulesReview's rules, SubjectAccessReview's validation).

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding, Subject } from '../../../src/api/validation/rbac.js';
import type { UserInfo } from '../../../src/http/router.js';
import { statusOf } from '../../../src/http/status.js';
import { requestAttributes, type Attributes } from '../../../src/kubeapi/rbac/attributes.js';
import { authorize, forbidden } from '../../../src/kubeapi/rbac/authorizer.js';
import { impersonatedUser } from '../../../src/kubeapi/rbac/impersonation.js';
import { accessReviewStatus, reviewAttributes, rulesReviewStatus } from '../../../src/kubeapi/rbac/reviews.js';
import type { RbacSource } from '../../../src/kubeapi/rbac/rule-resolver.js';

const rbac = 'rbac.authorization.k8s.io';

function source(o: { roles?: Role[]; roleBindings?: RoleBinding[]; clusterRoles?: ClusterRole[]; clusterRoleBindings?: ClusterRoleBinding[] }): RbacSource {
  return {
    clusterRoleBindings: () => o.clusterRoleBindings ?? [],
    roleBindings: (ns) => (o.roleBindings ?? []).filter((b) => b.metadata?.namespace === ns),
    clusterRole: (name) => (o.clusterRoles ?? []).find((r) => r.metadata?.name === name),
    role: (ns, name) => (o.roles ?? []).find((r) => r.metadata?.namespace === ns && r.metadata?.name === name),
  };
}

function subjects(...specs: string[]): Subject[] {
  return specs.map((s) => {
    const [kind, name, namespace] = s.split(':::');
    const [k, n] = kind!.includes(':') && !name ? [kind!.slice(0, kind!.indexOf(':')), kind!.slice(kind!.indexOf(':') + 1)] : [kind!, name!];
    return { kind: k, name: n, ...(k === 'ServiceAccount' ? {} : { apiGroup: rbac }), ...(namespace ? { namespace } : {}) };
  });
}

const clusterRole = (name: string, ...rules: ClusterRole['rules'] & object): ClusterRole => ({ metadata: { name }, rules });
const crb = (name: string, role: string, subs: Subject[]): ClusterRoleBinding => ({
  metadata: { name },
  roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role },
  subjects: subs,
});
const rb = (ns: string, name: string, kind: 'Role' | 'ClusterRole', role: string, subs: Subject[]): RoleBinding => ({
  metadata: { namespace: ns, name },
  roleRef: { apiGroup: rbac, kind, name: role },
  subjects: subs,
});

function res(user: UserInfo, verb: string, resource: string, namespace: string, extra: Partial<Attributes> = {}): Attributes {
  return { user, verb, resourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', namespace, resource, subresource: '', name: '', ...extra };
}
const u = (username: string, ...groups: string[]): UserInfo => ({ username, groups });

test('upstream TestAuthorizer: a ClusterRole bound in ns1 to a user and a group', () => {
  const src = source({
    clusterRoles: [clusterRole('admin', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] })],
    roleBindings: [rb('ns1', 'admin', 'ClusterRole', 'admin', subjects('User:admin', 'Group:admins'))],
  });
  for (const a of [
    res(u('admin'), 'get', 'Pods', 'ns1'),
    res(u('admin'), 'watch', 'Pods', 'ns1'),
    res(u('admin', 'group1'), 'watch', 'Foobar', 'ns1'),
    res(u('joe', 'admins'), 'watch', 'Foobar', 'ns1'),
    res(u('joe', 'group1', 'admins'), 'watch', 'Foobar', 'ns1'),
  ]) {
    assert.equal(authorize(src, a).allowed, true, `${a.user.username} ${a.verb} ${a.resource}`);
  }
  for (const a of [res(u('admin'), 'GET', 'Pods', 'ns2'), res(u('admin'), 'GET', 'Nodes', ''), res(u('admin', 'admins'), 'GET', 'Pods', 'ns2')]) {
    assert.equal(authorize(src, a).allowed, false, `${a.user.username} ${a.verb} ${a.resource} ${a.namespace}`);
  }
});

test('upstream TestAuthorizer: non-resource URLs, exact and prefixed', () => {
  const src = source({
    clusterRoles: [
      clusterRole('getter', { verbs: ['get'], nonResourceURLs: ['/apis'] }),
      clusterRole('any', { verbs: ['*'], nonResourceURLs: ['/apis'] }),
      clusterRole('prefix', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }),
    ],
    clusterRoleBindings: [
      crb('g', 'getter', subjects('User:foo', 'Group:bar')),
      crb('a', 'any', subjects('User:admin')),
      crb('p', 'prefix', subjects('User:prefixed')),
    ],
  });
  const path = (user: UserInfo, verb: string, p: string) => requestAttributes(user, verb.toUpperCase(), p, new URLSearchParams());
  assert.equal(authorize(src, path(u('foo'), 'get', '/apis')).allowed, true);
  assert.equal(authorize(src, path(u('x', 'bar'), 'get', '/apis')).allowed, true);
  assert.equal(authorize(src, path(u('admin'), 'post', '/apis')).allowed, true);
  assert.equal(authorize(src, path(u('prefixed'), 'get', '/apis/v1')).allowed, true);
  assert.equal(authorize(src, path(u('prefixed'), 'get', '/apis/v1/foobar')).allowed, true);
  // Wrong verb, wrong path, not covered by the prefix.
  assert.equal(authorize(src, path(u('foo'), 'watch', '/apis')).allowed, false);
  assert.equal(authorize(src, path(u('foo'), 'get', '/api/v1')).allowed, false);
  assert.equal(authorize(src, path(u('admin'), 'get', '/api/v1')).allowed, false);
  assert.equal(authorize(src, path(u('prefixed'), 'get', '/api/v1')).allowed, false);
});

test('service account subjects: the binding namespace when the subject names none; the SA username only', () => {
  const src = source({
    clusterRoles: [clusterRole('view', { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] })],
    roleBindings: [rb('default', 'x-view', 'ClusterRole', 'view', subjects('ServiceAccount:x'))],
    clusterRoleBindings: [crb('all-sa', 'view', subjects('ServiceAccount:::y:::kube-system'))],
  });
  const x = u('system:serviceaccount:default:x', 'system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated');
  assert.equal(authorize(src, res(x, 'list', 'pods', 'default')).allowed, true);
  assert.equal(authorize(src, res(x, 'list', 'pods', 'kube-system')).allowed, false);
  assert.equal(authorize(src, res(u('system:serviceaccount:other:x'), 'list', 'pods', 'default')).allowed, false);
  const y = u('system:serviceaccount:kube-system:y');
  assert.deepEqual(authorize(src, res(y, 'list', 'pods', 'anywhere')), {
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "all-sa" of ClusterRole "view" to ServiceAccount "y/kube-system"',
  });
  assert.deepEqual(authorize(src, res(x, 'get', 'pods', 'default')), {
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "x-view/default" of ClusterRole "view" to ServiceAccount "x/default"',
  });
});

test('system:masters is allowed everything without a rule; a binding to a missing role is the reason of a refusal', () => {
  const src = source({
    roleBindings: [rb('default', 'b', 'Role', 'gone', subjects('User:bob')), rb('default', 'c', 'ClusterRole', 'gone2', subjects('Group:g'))],
  });
  assert.deepEqual(authorize(src, res(u('system:admin', 'system:masters'), 'delete', 'nodes', '')), { allowed: true, reason: '' });
  assert.deepEqual(authorize(src, res(u('bob'), 'get', 'pods', 'default')), {
    allowed: false,
    reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found',
  });
  assert.deepEqual(authorize(src, res(u('bob', 'g'), 'get', 'pods', 'default')), {
    allowed: false,
    reason: 'RBAC: [role.rbac.authorization.k8s.io "gone" not found, clusterrole.rbac.authorization.k8s.io "gone2" not found]',
  });
});

test('Forbidden messages as kube-apiserver words them (403, reason Forbidden, details)', () => {
  const sa = u('system:serviceaccount:default:x');
  const q = new URLSearchParams();
  const status = (method: string, path: string, reason = '') => statusOf(forbidden(requestAttributes(sa, method, path, q), reason));
  const list = status('GET', '/api/v1/namespaces/default/pods');
  assert.equal(list.code, 403);
  assert.equal(list.reason, 'Forbidden');
  assert.equal(
    list.message,
    'pods is forbidden: User "system:serviceaccount:default:x" cannot list resource "pods" in API group "" in the namespace "default"',
  );
  assert.deepEqual(list.details, { kind: 'pods' });
  const get = status('GET', '/api/v1/namespaces/default/pods/web');
  assert.equal(
    get.message,
    'pods "web" is forbidden: User "system:serviceaccount:default:x" cannot get resource "pods" in API group "" in the namespace "default"',
  );
  assert.deepEqual(get.details, { name: 'web', kind: 'pods' });
  assert.equal(
    status('GET', '/apis/apps/v1/deployments').message,
    'deployments.apps is forbidden: User "system:serviceaccount:default:x" cannot list resource "deployments" in API group "apps" at the cluster scope',
  );
  assert.deepEqual(status('GET', '/apis/apps/v1/deployments').details, { group: 'apps', kind: 'deployments' });
  assert.equal(
    status('POST', '/api/v1/namespaces/default/pods/web/exec').message,
    'pods "web" is forbidden: User "system:serviceaccount:default:x" cannot create resource "pods/exec" in API group "" in the namespace "default"',
  );
  const path = status('GET', '/api');
  assert.equal(path.message, 'forbidden: User "system:serviceaccount:default:x" cannot get path "/api"');
  assert.deepEqual(path.details, {});
  assert.equal(
    status('GET', '/api/v1/namespaces/default/pods', 'RBAC: role.rbac.authorization.k8s.io "gone" not found').message,
    'pods is forbidden: User "system:serviceaccount:default:x" cannot list resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "gone" not found',
  );
});

function headers(h: Record<string, string | string[]>): IncomingMessage {
  const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
  const distinct = Object.fromEntries(Object.entries(lower).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));
  return { headers: lower, headersDistinct: distinct } as unknown as IncomingMessage;
}

test('impersonation: the admin may; the impersonated groups; headers removed', () => {
  const src = source({});
  const admin = u('system:admin', 'system:masters', 'system:authenticated');
  const saReq = headers({ 'Impersonate-User': 'system:serviceaccount:default:x' });
  assert.deepEqual(
    impersonatedUser(saReq, admin, (a) => authorize(src, a)),
    {
      username: 'system:serviceaccount:default:x',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    },
  );
  assert.equal(saReq.headers['impersonate-user'], undefined);
  assert.deepEqual(
    impersonatedUser(headers({ 'Impersonate-User': 'bob', 'Impersonate-Group': ['g1', 'g2'] }), admin, (a) => authorize(src, a)),
    {
      username: 'bob',
      groups: ['g1', 'g2', 'system:authenticated'],
    },
  );
  assert.deepEqual(impersonatedUser(headers({ 'Impersonate-User': 'system:anonymous' }), admin, (a) => authorize(src, a)).groups, ['system:unauthenticated']);
  assert.deepEqual(
    impersonatedUser(headers({ 'Impersonate-User': 'bob', 'Impersonate-Extra-Scopes': ['a', 'b'], 'Impersonate-Uid': '42' }), admin, (a) => authorize(src, a)),
    { username: 'bob', groups: ['system:authenticated'], uid: '42', extra: { scopes: ['a', 'b'] } },
  );
});

test('impersonation: refused without the impersonate verb, allowed with it (users, groups, serviceaccounts)', () => {
  const sa = u('system:serviceaccount:default:x', 'system:serviceaccounts', 'system:authenticated');
  const refused = (h: Record<string, string | string[]>, src: RbacSource) => {
    try {
      impersonatedUser(headers(h), sa, (a) => authorize(src, a));
      return undefined;
    } catch (err) {
      return statusOf(err);
    }
  };
  const none = source({});
  const s = refused({ 'Impersonate-User': 'bob' }, none)!;
  assert.equal(s.code, 403);
  assert.equal(
    s.message,
    'users "bob" is forbidden: User "system:serviceaccount:default:x" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
  assert.equal(
    refused({ 'Impersonate-User': 'system:serviceaccount:kube-system:y' }, none)!.message,
    'serviceaccounts "y" is forbidden: User "system:serviceaccount:default:x" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"',
  );
  const users = source({
    clusterRoles: [clusterRole('imp', { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] })],
    clusterRoleBindings: [crb('imp', 'imp', subjects('Group:system:serviceaccounts'))],
  });
  assert.equal(refused({ 'Impersonate-User': 'bob' }, users), undefined);
  assert.equal(
    refused({ 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' }, users)!.message,
    'groups "system:masters" is forbidden: User "system:serviceaccount:default:x" cannot impersonate resource "groups" in API group "" at the cluster scope',
  );
  assert.equal(refused({ 'Impersonate-Group': 'g' }, users)!.code, 500);
});

test('reviews: a SelfSubjectRulesReview lists the rules that apply; a SubjectAccessReview answers for its user', () => {
  const src = source({
    clusterRoles: [
      clusterRole('view', { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'] }),
      clusterRole('system:discovery', { verbs: ['get'], nonResourceURLs: ['/api', '/api/*'] }),
    ],
    roleBindings: [
      rb('default', 'xv', 'ClusterRole', 'view', subjects('ServiceAccount:x')),
      rb('default', 'broken', 'Role', 'gone', subjects('ServiceAccount:x')),
    ],
    clusterRoleBindings: [crb('system:discovery', 'system:discovery', subjects('Group:system:authenticated'))],
  });
  const x = u('system:serviceaccount:default:x', 'system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated');
  assert.deepEqual(rulesReviewStatus(src, x, 'default'), {
    resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'] }],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*'] }],
    incomplete: true,
    evaluationError: 'role.rbac.authorization.k8s.io "gone" not found',
  });
  assert.deepEqual(rulesReviewStatus(src, x, 'kube-system').resourceRules, []);
  assert.deepEqual(accessReviewStatus(src, reviewAttributes(x, { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } })), {
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "xv/default" of ClusterRole "view" to ServiceAccount "x/default"',
  });
  assert.equal(accessReviewStatus(src, reviewAttributes(x, { resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'default' } })).allowed, false);
  assert.equal(
    accessReviewStatus(src, reviewAttributes(u('bob', 'system:authenticated'), { nonResourceAttributes: { verb: 'get', path: '/api/v1' } })).allowed,
    true,
  );
});
