// RBAC validation in upstream's words (pkg/apis/rbac/validation): rules (verbs, api groups, resources,
// non-resource URLs in namespaced roles, resource names over several resources), path-segment names,
// bindings' roleRef and subjects, the v1 defaults of a binding's api groups, and an immutable roleRef.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFieldError } from '../../../src/api/field-errors.js';
import {
  defaultBinding,
  validateBindingUpdate,
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
} from '../../../src/api/validation/rbac.js';

const texts = (errs: ReturnType<typeof validateRole>) => errs.map(formatFieldError);

test('Role rules: verbs, resources, non-resource URLs, resource names', () => {
  assert.deepEqual(
    texts(
      validateRole({
        metadata: { name: 'bad', namespace: 'default' },
        rules: [{ nonResourceURLs: ['/x'] } as never, { verbs: ['get'], apiGroups: [''], resources: ['a', 'b'], resourceNames: ['n'] }, { verbs: ['get'] }],
      }),
    ),
    [
      'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[1].resourceNames: Required value: resource names cannot apply to multiple resources',
      'rules[2].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[2].resources: Required value: resource rules must supply at least one resource',
    ],
  );
  assert.deepEqual(validateClusterRole({ metadata: { name: 'system:x' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] }] }), []);
  assert.deepEqual(texts(validateClusterRole({ metadata: { name: 'x' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/a'], resources: ['pods'] }] })), [
    'rules[0].nonResourceURLs: Invalid value: []string{"/a"}: rules cannot apply to both regular resources and non-resource URLs',
  ]);
});

test('names are path segments: colons allowed, slashes and percents not', () => {
  assert.deepEqual(validateClusterRole({ metadata: { name: 'system:aggregate-to-view' } }), []);
  assert.deepEqual(texts(validateClusterRole({ metadata: { name: 'a/b%' } })), [
    'metadata.name: Invalid value: "a/b%": may not contain \'/\'',
    'metadata.name: Invalid value: "a/b%": may not contain \'%\'',
  ]);
  assert.deepEqual(texts(validateClusterRole({ metadata: { name: '..' } })), ['metadata.name: Invalid value: "..": may not be \'..\'']);
});

test('bindings: roleRef and subjects in upstream words, after the v1 defaults', () => {
  const b = defaultBinding({
    metadata: { name: 'b', namespace: 'default' },
    roleRef: { apiGroup: 'rbac', kind: 'Foo', name: '' },
    subjects: [
      { kind: 'User', name: 'u' },
      { kind: 'Robot', name: 'r' },
      { kind: 'ServiceAccount', name: 'A_b', apiGroup: 'x' },
      { kind: 'Group', name: '' },
    ],
  });
  assert.equal(b.subjects![0]!.apiGroup, 'rbac.authorization.k8s.io');
  assert.deepEqual(texts(validateRoleBinding(b)), [
    'roleRef.apiGroup: Unsupported value: "rbac": supported values: "rbac.authorization.k8s.io"',
    'roleRef.kind: Unsupported value: "Foo": supported values: "Role", "ClusterRole"',
    'roleRef.name: Required value',
    'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    'subjects[2].apiGroup: Unsupported value: "x": supported values: ""',
    "subjects[2].name: Invalid value: \"A_b\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    'subjects[3].name: Required value',
    'subjects[3].name: Invalid value: "": group name cannot be empty',
  ]);
  const crb = defaultBinding({
    metadata: { name: 'c' },
    roleRef: { apiGroup: '', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'ServiceAccount', name: 'x' }],
  });
  assert.equal(crb.roleRef.apiGroup, 'rbac.authorization.k8s.io');
  assert.deepEqual(texts(validateClusterRoleBinding(crb)), [
    'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    'subjects[0].namespace: Required value',
  ]);
});

test('a binding roleRef cannot change', () => {
  const old = { metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } };
  assert.deepEqual(validateBindingUpdate(old, old), []);
  assert.deepEqual(texts(validateBindingUpdate({ ...old, roleRef: { ...old.roleRef, name: 'edit' } }, old)), [
    'roleRef: Invalid value: {APIGroup:rbac.authorization.k8s.io Kind:ClusterRole Name:edit}: cannot change roleRef',
  ]);
});
