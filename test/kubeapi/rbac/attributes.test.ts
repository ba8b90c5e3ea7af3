// Request attributes as the apiserver's RequestInfoFactory derives them (cases of upstream's
// endpoints/request/requestinfo_test.go): verbs by method and query, namespaces and their
// subresources, the deprecated /watch/ and /proxy/ paths, deletecollection, field-selected names,
// and non-resource paths (discovery, /version, /healthz) with the method as the verb.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestAttributes } from '../../../src/kubeapi/rbac/attributes.js';

const user = { username: 'u', groups: [] };

const cases: Array<
  [method: string, url: string, verb: string, group: string, version: string, namespace: string, resource: string, sub: string, name: string]
> = [
  ['GET', '/api/v1/namespaces', 'list', '', 'v1', '', 'namespaces', '', ''],
  ['GET', '/api/v1/namespaces/other', 'get', '', 'v1', 'other', 'namespaces', '', 'other'],
  ['GET', '/api/v1/namespaces/other/pods', 'list', '', 'v1', 'other', 'pods', '', ''],
  ['GET', '/api/v1/namespaces/other/pods/foo', 'get', '', 'v1', 'other', 'pods', '', 'foo'],
  ['HEAD', '/api/v1/namespaces/other/pods/foo', 'get', '', 'v1', 'other', 'pods', '', 'foo'],
  ['GET', '/api/v1/pods', 'list', '', 'v1', '', 'pods', '', ''],
  ['POST', '/api/v1/namespaces/other/pods', 'create', '', 'v1', 'other', 'pods', '', ''],
  ['PUT', '/api/v1/namespaces/other/pods/foo', 'update', '', 'v1', 'other', 'pods', '', 'foo'],
  ['PATCH', '/api/v1/namespaces/other/pods/foo', 'patch', '', 'v1', 'other', 'pods', '', 'foo'],
  ['DELETE', '/api/v1/namespaces/other/pods/foo', 'delete', '', 'v1', 'other', 'pods', '', 'foo'],
  ['DELETE', '/api/v1/namespaces/other/pods', 'deletecollection', '', 'v1', 'other', 'pods', '', ''],
  ['GET', '/api/v1/proxy/namespaces/other/pods/foo', 'proxy', '', 'v1', 'other', 'pods', '', 'foo'],
  ['GET', '/api/v1/watch/pods', 'watch', '', 'v1', '', 'pods', '', ''],
  ['GET', '/api/v1/pods?watch=true', 'watch', '', 'v1', '', 'pods', '', ''],
  ['GET', '/api/v1/pods?watch=1', 'watch', '', 'v1', '', 'pods', '', ''],
  ['GET', '/api/v1/pods?watch=false', 'list', '', 'v1', '', 'pods', '', ''],
  ['GET', '/api/v1/watch/namespaces/other/pods', 'watch', '', 'v1', 'other', 'pods', '', ''],
  ['GET', '/api/v1/namespaces/other/pods/foo/log', 'get', '', 'v1', 'other', 'pods', 'log', 'foo'],
  ['POST', '/api/v1/namespaces/other/pods/foo/exec', 'create', '', 'v1', 'other', 'pods', 'exec', 'foo'],
  ['PUT', '/api/v1/namespaces/other/finalize', 'update', '', 'v1', 'other', 'namespaces', 'finalize', 'other'],
  ['PUT', '/api/v1/namespaces/other/status', 'update', '', 'v1', 'other', 'namespaces', 'status', 'other'],
  ['GET', '/apis/apps/v1/namespaces/other/deployments', 'list', 'apps', 'v1', 'other', 'deployments', '', ''],
  ['PUT', '/apis/apps/v1/namespaces/other/deployments/web/scale', 'update', 'apps', 'v1', 'other', 'deployments', 'scale', 'web'],
  ['GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view', 'get', 'rbac.authorization.k8s.io', 'v1', '', 'clusterroles', '', 'view'],
  ['GET', '/api/v1/namespaces/other/pods?fieldSelector=metadata.name%3Dfoo', 'list', '', 'v1', 'other', 'pods', '', 'foo'],
  ['GET', '/api/v1/namespaces/other/pods?watch=true&fieldSelector=metadata.name%3D%3Dfoo', 'watch', '', 'v1', 'other', 'pods', '', 'foo'],
  ['GET', '/api/v1/namespaces/other/pods?fieldSelector=metadata.name%3Dfoo,status.phase%3DRunning', 'list', '', 'v1', 'other', 'pods', '', ''],
];

test('resource requests: verb, group, version, namespace, resource, subresource and name', () => {
  for (const [method, url, verb, apiGroup, apiVersion, namespace, resource, subresource, name] of cases) {
    const u = new URL(url, 'http://x');
    const a = requestAttributes(user, method, u.pathname, u.searchParams);
    assert.deepEqual(
      {
        resourceRequest: a.resourceRequest,
        verb: a.verb,
        apiGroup: a.apiGroup,
        apiVersion: a.apiVersion,
        namespace: a.namespace,
        resource: a.resource,
        subresource: a.subresource,
        name: a.name,
      },
      { resourceRequest: true, verb, apiGroup, apiVersion, namespace, resource, subresource, name },
      `${method} ${url}`,
    );
  }
});

test('non-resource requests: the path, and the method in lower case as the verb', () => {
  for (const [method, path] of [
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/apis'],
    ['GET', '/apis/apps'],
    ['GET', '/apis/apps/v1'],
    ['GET', '/version'],
    ['GET', '/healthz'],
    ['GET', '/openapi/v2'],
    ['POST', '/logs'],
  ] as const) {
    const a = requestAttributes(user, method, path, new URLSearchParams());
    assert.equal(a.resourceRequest, false, path);
    assert.equal(a.path, path);
    assert.equal(a.verb, method.toLowerCase());
  }
});
