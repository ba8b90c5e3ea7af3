// The field error text, as apimachinery's field.Error prints it, and path building.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  duplicate,
  forbidden,
  formatFieldError,
  internalError,
  invalid,
  newPath,
  notFound,
  notSupported,
  required,
  sortFieldErrors,
  tooLong,
  tooMany,
  ValidationError,
} from '../../src/api/field-errors.js';
import { goQuote } from '../../src/util/go-format.js';

const p = newPath('spec').child('containers').index(0);

const table: [string, ReturnType<typeof required>, string][] = [
  ['required without detail', required(p.child('image')), 'spec.containers[0].image: Required value'],
  ['required with detail', required(p.child('name'), 'must be set'), 'spec.containers[0].name: Required value: must be set'],
  [
    'forbidden',
    forbidden(p.child('restartPolicy'), 'may not be set for non-init containers'),
    'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
  ],
  [
    'invalid int',
    invalid(p.child('ports').index(1).child('containerPort'), 0, 'must be between 1 and 65535, inclusive'),
    'spec.containers[0].ports[1].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive',
  ],
  ['invalid string', invalid('metadata.name', 'Web_1', 'bad'), 'metadata.name: Invalid value: "Web_1": bad'],
  ['invalid bool', invalid('spec.x', true, 'no'), 'spec.x: Invalid value: true: no'],
  ['invalid nil', invalid('spec.x', null, 'no'), 'spec.x: Invalid value: null: no'],
  ['invalid without detail', invalid('spec.x', 'v'), 'spec.x: Invalid value: "v"'],
  [
    'not supported',
    notSupported('spec.restartPolicy', 'X', ['Always', 'OnFailure', 'Never']),
    'spec.restartPolicy: Unsupported value: "X": supported values: "Always", "OnFailure", "Never"',
  ],
  ['duplicate', duplicate(p.child('name'), 'app'), 'spec.containers[0].name: Duplicate value: "app"'],
  ['not found', notFound('spec.volumes', 'data'), 'spec.volumes: Not found: "data"'],
  ['too long', tooLong('metadata.annotations', '', 262144), 'metadata.annotations: Too long: must have at most 262144 bytes'],
  ['too many', tooMany('spec.x', 5, 3), 'spec.x: Too many: 5: must have at most 3 items'],
  ['internal', internalError('spec.x', new Error('boom')), 'spec.x: Internal error: boom'],
  ['map key path', invalid(p.child('resources', 'limits').key('cpu'), '-1', 'neg'), 'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": neg'],
  ['quoted escapes', invalid('a', 'x"y\\z\n\t\x01', 'd'), 'a: Invalid value: "x\\"y\\\\z\\n\\t\\x01": d'],
];

for (const [name, err, want] of table) {
  test(`formats ${name}`, () => assert.equal(formatFieldError(err), want));
}

test('goQuote keeps printable unicode', () => assert.equal(goQuote('héllo'), '"héllo"'));

test('sorts by path with numeric indices', () => {
  const sorted = sortFieldErrors([
    required('spec.containers[10].image'),
    required('spec.containers[2].image'),
    required('metadata.name'),
    required('spec.containers[2]'),
  ]).map((e) => e.field);
  assert.deepEqual(sorted, ['metadata.name', 'spec.containers[2]', 'spec.containers[2].image', 'spec.containers[10].image']);
});

test('ValidationError aggregates like utilerrors', () => {
  const one = new ValidationError([required('a')]);
  assert.equal(one.message, 'a: Required value');
  const two = new ValidationError([required('a'), required('b')], { kind: 'Pod', name: 'web' });
  assert.equal(two.message, 'Pod "web" is invalid: [a: Required value, b: Required value]');
  assert.equal(two.errors.length, 2);
});
