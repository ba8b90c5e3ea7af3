// The CRD schema's pruning, defaulting and validation, and the CRD's own validation and status, as pure functions.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFieldError } from '../../../src/api/field-errors.js';
import { crdStatus, defaultCRD, validateCRD, type CustomResourceDefinition } from '../../../src/kubeapi/apiextensions/crd.js';
import { applyDefaults, celRulePaths, prune, validateValue, type JSONSchemaProps } from '../../../src/kubeapi/apiextensions/structural-schema.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 5 },
        name: { type: 'string', minLength: 2, maxLength: 4, pattern: '^[a-z]+$' },
        mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', maxItems: 2, minItems: 1, items: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
};

test('pruning drops what the schema does not name, keeps preserved and embedded type meta', () => {
  const o = {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'n' },
    extra: 1,
    spec: { size: 1, junk: true, free: { any: { thing: 1 } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: {}, other: 1 }, labels: { a: 'b' } },
  };
  prune(o, schema);
  assert.deepEqual(o, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'n' },
    spec: { size: 1, free: { any: { thing: 1 } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: {} }, labels: { a: 'b' } },
  });
});

test('defaults fill absent fields only', () => {
  const o = { spec: { size: 1 } };
  applyDefaults(o, schema);
  assert.deepEqual(o, { spec: { size: 1, mode: 'a' } });
  const p = { spec: { size: 1, mode: 'b' } };
  applyDefaults(p, schema);
  assert.equal(p.spec.mode, 'b');
});

test('validation words errors as the API server does', () => {
  const errs = validateValue({ spec: { size: 9, name: 'ABCDEF', mode: 'c', port: 1.5, tags: ['a', 'b', 'c'], template: { spec: {} } } }, schema).map(
    formatFieldError,
  );
  assert.deepEqual(errs.sort(), [
    'spec.mode: Unsupported value: "c": supported values: "a", "b"',
    'spec.name: Invalid value: "ABCDEF": spec.name in body should match \'^[a-z]+$\'',
    'spec.name: Too long: may not be more than 4 bytes',
    'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
    'spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5',
    'spec.tags: Too many: 3: must have at most 2 items',
    'spec.template.apiVersion: Required value: must not be empty',
    'spec.template.kind: Required value: must not be empty',
  ]);
  assert.deepEqual(validateValue({ spec: {} }, schema).map(formatFieldError), ['spec.size: Required value']);
  assert.deepEqual(validateValue({ spec: { size: 'x' } }, schema).map(formatFieldError), [
    'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
  ]);
  assert.deepEqual(validateValue({ spec: { size: 1, port: 'http' } }, schema), []);
});

test('CEL rules are listed by path', () => {
  assert.deepEqual(celRulePaths({ type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] } } }), ['spec']);
});

const crd = (over: Partial<CustomResourceDefinition['spec']> = {}, name = 'widgets.example.com'): CustomResourceDefinition =>
  defaultCRD({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      ...over,
    },
  });

test('a CRD is validated as apiextensions validates it', () => {
  assert.deepEqual(validateCRD(crd()), []);
  assert.equal(crd().spec.names.listKind, 'WidgetList');
  const errs = validateCRD(
    crd(
      {
        scope: 'Global' as never,
        versions: [
          { name: 'v1', served: false, storage: true, schema: { openAPIV3Schema: { type: 'string', properties: { a: {} } } } },
          { name: 'v2', served: false, storage: true },
        ],
      },
      'wrong.example.com',
    ),
  ).map(formatFieldError);
  assert.deepEqual(errs, [
    'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group',
    'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
    'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    'spec.versions[0].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields',
    'spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required',
    errs[5]!,
    errs[6]!,
  ]);
  assert.match(errs[5]!, /^spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/);
  assert.match(errs[6]!, /^spec\.versions: Invalid value: .*: must have at least one version marked as served$/);
});

test('status: names accepted and established, or a conflict with another CRD of the group', () => {
  const a = crd();
  const s = crdStatus(a, [], '2024-01-01T00:00:00Z');
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['NamesAccepted', 'True', 'NoConflicts'],
      ['Established', 'True', 'InitialNamesAccepted'],
    ],
  );
  assert.deepEqual(s.storedVersions, ['v1']);
  a.status = s;
  const b = crd({ names: { plural: 'widgets', kind: 'Other' } }, 'other.example.com');
  const sb = crdStatus(b, [a], '2024-01-01T00:00:00Z');
  assert.deepEqual(
    sb.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['NamesAccepted', 'False', 'PluralConflict', '"widgets" is already in use'],
      ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
    ],
  );
});
