// The authorization step every request of the agent passes, over the bootstrap policy: an anonymous
// TCP caller reaches /healthz and /version and nothing else; a service account is refused the API's
// resources and the kubelet's paths (nodes/proxy) until bound; the read-only port is not authorized;
// impersonation changes the user the routes then see. Requests are objects carrying what the listener
// sets (the listener, the user), not sockets: the routes behind the filter are not involved.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { adminUser, anonymousUser, requestInfo, setRequestInfo, type RequestInfo, type UserInfo } from '../../../src/http/router.js';
import { statusOf } from '../../../src/http/status.js';
import type { KubeObject, ObjectsBackend, Storage } from '../../../src/kubeapi/backend.js';
import type { Attributes } from '../../../src/kubeapi/rbac/attributes.js';
import { bootstrapBindingObjects, bootstrapRoleObjects } from '../../../src/kubeapi/rbac/bootstrap.js';
import { authorizationFilter } from '../../../src/kubeapi/rbac/filter.js';

function objects(extra: KubeObject[] = []): ObjectsBackend {
  const all: KubeObject[] = [...bootstrapRoleObjects(), ...bootstrapBindingObjects(), ...extra];
  const storage = (kind: string): Storage => ({
    list: () => ({ items: all.filter((o) => o.kind === kind) }),
    get: (ns, name) => all.find((o) => o.kind === kind && (o.metadata?.namespace ?? '') === ns && o.metadata?.name === name),
  });
  return { storage };
}

function request(method: string, url: string, info: RequestInfo, headers: Record<string, string> = {}): IncomingMessage {
  const req = {
    method,
    url,
    headers,
    headersDistinct: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    resume: () => {},
  } as unknown as IncomingMessage;
  setRequestInfo(req, info);
  return req;
}

const kubeletPath = (user: UserInfo, method: string, path: string): Attributes => ({
  user,
  verb: method === 'GET' ? 'get' : 'create',
  resourceRequest: true,
  path,
  apiGroup: '',
  apiVersion: 'v1',
  namespace: '',
  resource: 'nodes',
  subresource: 'proxy',
  name: 'node1',
});

/** The Status the filter refuses with, or 'passed'. */
function outcome(filter: ReturnType<typeof authorizationFilter>, req: IncomingMessage): string {
  try {
    return filter.request(req, {} as never) === false ? 'passed' : 'taken';
  } catch (err) {
    return statusOf(err).message ?? '';
  }
}

const sa: UserInfo = {
  username: 'system:serviceaccount:default:app',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
};

test('anonymous on TCP: the public-info paths only', () => {
  const f = authorizationFilter({ objects: objects(), otherPath: kubeletPath });
  const anon: RequestInfo = { listener: 'tcp', user: anonymousUser };
  for (const p of ['/healthz', '/livez', '/readyz', '/version']) assert.equal(outcome(f, request('GET', p, anon)), 'passed', p);
  assert.equal(outcome(f, request('GET', '/api', anon)), 'forbidden: User "system:anonymous" cannot get path "/api"');
  assert.equal(
    outcome(f, request('GET', '/api/v1/namespaces/default/pods', anon)),
    'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
  );
  assert.equal(
    outcome(f, request('GET', '/pods', anon)),
    'nodes "node1" is forbidden: User "system:anonymous" cannot get resource "nodes/proxy" in API group "" at the cluster scope',
  );
  // The read-only port serves its paths to anyone, as the kubelet's :10255.
  assert.equal(outcome(f, request('GET', '/pods', { listener: 'read-only', user: anonymousUser })), 'passed');
});

test('a service account: discovery and reviews allowed, resources refused until bound; the admin passes', () => {
  const unbound = authorizationFilter({ objects: objects(), otherPath: kubeletPath });
  const info: RequestInfo = { listener: 'tcp', user: sa };
  assert.equal(outcome(unbound, request('GET', '/apis', info)), 'passed');
  assert.equal(outcome(unbound, request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', info)), 'passed');
  assert.equal(
    outcome(unbound, request('GET', '/api/v1/namespaces/default/pods?watch=true', info)),
    'pods is forbidden: User "system:serviceaccount:default:app" cannot watch resource "pods" in API group "" in the namespace "default"',
  );
  assert.match(outcome(unbound, request('POST', '/podvisor/v1/stop', info)), /cannot create resource "nodes\/proxy"/);
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { namespace: 'default', name: 'app-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:aggregate-to-view' },
    subjects: [{ kind: 'ServiceAccount', name: 'app' }],
  } as KubeObject;
  const bound = authorizationFilter({ objects: objects([binding]), otherPath: kubeletPath });
  assert.equal(outcome(bound, request('GET', '/api/v1/namespaces/default/pods?watch=true', info)), 'passed');
  assert.equal(outcome(bound, request('GET', '/api/v1/namespaces/default/pods/web/log', info)), 'passed');
  assert.match(outcome(bound, request('GET', '/api/v1/namespaces/kube-system/pods', info)), /in the namespace "kube-system"$/);
  assert.match(outcome(bound, request('POST', '/api/v1/namespaces/default/pods/web/exec', info)), /cannot create resource "pods\/exec"/);
  assert.equal(outcome(bound, request('DELETE', '/api/v1/nodes/node1', { listener: 'unix', user: adminUser })), 'passed');
});

test('impersonation: the routes see the impersonated user, who is then authorized', () => {
  const f = authorizationFilter({ objects: objects(), otherPath: kubeletPath });
  const req = request('GET', '/api/v1/namespaces/default/pods', { listener: 'unix', user: adminUser }, { 'impersonate-user': sa.username });
  assert.equal(
    outcome(f, req),
    'pods is forbidden: User "system:serviceaccount:default:app" cannot list resource "pods" in API group "" in the namespace "default"',
  );
  const seen = request('GET', '/version', { listener: 'unix', user: adminUser }, { 'impersonate-user': 'bob', 'impersonate-group': 'staff' });
  assert.equal(outcome(f, seen), 'passed');
  assert.deepEqual(requestInfo(seen)?.user, { username: 'bob', groups: ['staff', 'system:authenticated'] });
  assert.equal(
    outcome(f, request('GET', '/version', { listener: 'tcp', user: sa }, { 'impersonate-user': 'bob' })),
    'users "bob" is forbidden: User "system:serviceaccount:default:app" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
});
