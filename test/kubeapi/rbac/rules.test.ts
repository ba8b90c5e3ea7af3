// RBAC rule matching, table-driven from upstream's own cases (plugin/pkg/auth/authorizer/rbac
// rbac_test.go TestRuleMatches): star verbs, groups and resources, tuple expansion, subresources
// (and `*/subresource`), resourceNames, non-resource URLs with `*` and trailing-`*` prefixes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PolicyRule } from '../../../src/api/validation/rbac.js';
import type { Attributes } from '../../../src/kubeapi/rbac/attributes.js';
import { ruleAllows } from '../../../src/kubeapi/rbac/rules.js';

const user = { username: 'u', groups: [] };

function res(verb: string, apiGroup: string, resource: string, subresource = '', name = ''): Attributes {
  return { user, verb, resourceRequest: true, path: '', apiGroup, apiVersion: 'v1', namespace: '', resource, subresource, name };
}
function url(verb: string, path: string): Attributes {
  return { user, verb, resourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

const cases: Array<{ name: string; rule: PolicyRule; expect: Array<[Attributes, boolean]> }> = [
  {
    name: 'star verb, exact match other',
    rule: { verbs: ['*'], apiGroups: ['group1'], resources: ['resource1'] },
    expect: [
      [res('verb1', 'group1', 'resource1'), true],
      [res('verb1', 'group2', 'resource1'), false],
      [res('verb1', 'group1', 'resource2'), false],
      [res('verb2', 'group1', 'resource1'), true],
      [res('verb2', 'group2', 'resource2'), false],
    ],
  },
  {
    name: 'star group, exact match other',
    rule: { verbs: ['verb1'], apiGroups: ['*'], resources: ['resource1'] },
    expect: [
      [res('verb1', 'group1', 'resource1'), true],
      [res('verb1', 'group2', 'resource1'), true],
      [res('verb1', 'group1', 'resource2'), false],
      [res('verb2', 'group1', 'resource1'), false],
    ],
  },
  {
    name: 'star resource, exact match other',
    rule: { verbs: ['verb1'], apiGroups: ['group1'], resources: ['*'] },
    expect: [
      [res('verb1', 'group1', 'resource1'), true],
      [res('verb1', 'group2', 'resource1'), false],
      [res('verb1', 'group1', 'resource2'), true],
      [res('verb2', 'group1', 'resource1'), false],
    ],
  },
  {
    name: 'tuple expansion',
    rule: { verbs: ['verb1', 'verb2'], apiGroups: ['group1', 'group2'], resources: ['resource1', 'resource2'] },
    expect: [
      [res('verb1', 'group1', 'resource1'), true],
      [res('verb1', 'group2', 'resource2'), true],
      [res('verb2', 'group1', 'resource2'), true],
      [res('verb2', 'group2', 'resource1'), true],
    ],
  },
  {
    name: 'subresource expansion',
    rule: { verbs: ['*'], apiGroups: ['*'], resources: ['resource1/subresource1'] },
    expect: [
      [res('verb1', 'group1', 'resource1', 'subresource1'), true],
      [res('verb1', 'group2', 'resource1', 'subresource2'), false],
      [res('verb1', 'group1', 'resource2', 'subresource1'), false],
      [res('verb2', 'group1', 'resource1', 'subresource1'), true],
      [res('verb1', 'group1', 'resource1'), false],
    ],
  },
  {
    name: 'a resource does not cover its subresources',
    rule: { verbs: ['*'], apiGroups: ['*'], resources: ['pods'] },
    expect: [
      [res('get', '', 'pods'), true],
      [res('get', '', 'pods', 'status'), false],
    ],
  },
  {
    name: '*/subresource covers that subresource of any resource',
    rule: { verbs: ['get'], apiGroups: [''], resources: ['*/scale'] },
    expect: [
      [res('get', '', 'deployments', 'scale'), true],
      [res('get', '', 'replicasets', 'scale'), true],
      [res('get', '', 'deployments', 'status'), false],
      [res('get', '', 'deployments'), false],
    ],
  },
  {
    name: 'resourceNames',
    rule: { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b'] },
    expect: [
      [res('get', '', 'configmaps', '', 'a'), true],
      [res('get', '', 'configmaps', '', 'b'), true],
      [res('get', '', 'configmaps', '', 'c'), false],
      // A list names no object: a rule with resourceNames does not allow it.
      [res('list', '', 'configmaps'), false],
      [res('get', '', 'configmaps'), false],
    ],
  },
  {
    name: 'star nonresource, exact match other',
    rule: { verbs: ['verb1'], nonResourceURLs: ['*'] },
    expect: [
      [url('verb1', '/foo'), true],
      [url('verb1', '/foo/bar/one'), true],
      [url('verb2', '/foo'), false],
    ],
  },
  {
    name: 'star nonresource subpath',
    rule: { verbs: ['verb1'], nonResourceURLs: ['/foo/*'] },
    expect: [
      [url('verb1', '/foo'), false],
      [url('verb1', '/foo/bar'), true],
      [url('verb1', '/foo/baz/one'), true],
      [url('verb1', '/notfoo'), false],
      [url('verb1', '/notfoo/bar'), false],
    ],
  },
  {
    name: 'star verb, exact nonresource',
    rule: { verbs: ['*'], nonResourceURLs: ['/foo', '/foo/bar/one'] },
    expect: [
      [url('verb1', '/foo'), true],
      [url('verb1', '/foo/bar'), false],
      [url('verb1', '/foo/bar/one'), true],
      [url('verb2', '/foo'), true],
      [url('verb2', '/foo/baz/one'), false],
    ],
  },
  {
    name: 'a resource rule never allows a path, nor a URL rule a resource',
    rule: { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    expect: [
      [url('get', '/api'), false],
      [res('get', 'apps', 'deployments'), true],
    ],
  },
];

for (const c of cases) {
  test(`ruleAllows: ${c.name}`, () => {
    for (const [attrs, expected] of c.expect) {
      const what = attrs.resourceRequest
        ? `${attrs.verb} ${attrs.apiGroup}/${attrs.resource}/${attrs.subresource} ${attrs.name}`
        : `${attrs.verb} ${attrs.path}`;
      assert.equal(ruleAllows(attrs, c.rule), expected, what);
    }
  });
}
