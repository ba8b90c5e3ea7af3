// jsonEqual agrees with comparing JSON texts (key order aside) on status-like values.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonEqual } from '../../src/util/json-equal.js';

const cases: [unknown, unknown, boolean][] = [
  [1, 1, true],
  ['a', 'b', false],
  [null, null, true],
  [null, {}, false],
  [[], {}, false],
  [{ a: 1, b: undefined }, { a: 1 }, true],
  [{ a: 1 }, { a: 1, b: undefined }, true],
  [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
  [{ a: 1 }, { a: 1, b: 0 }, false],
  [{ a: undefined }, { b: undefined }, true],
  [{ a: [1, { x: 'y' }] }, { a: [1, { x: 'y' }] }, true],
  [{ a: [1, { x: 'y' }] }, { a: [1, { x: 'z' }] }, false],
  [[1, 2], [1, 2, 3], false],
  [{ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }, { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] }, false],
  [{ n: 0 }, { n: false }, false],
];

test('jsonEqual: as equal JSON, undefined members absent', () => {
  for (const [a, b, want] of cases) {
    assert.equal(jsonEqual(a, b), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(jsonEqual(b, a), want, `${JSON.stringify(b)} vs ${JSON.stringify(a)}`);
  }
});
