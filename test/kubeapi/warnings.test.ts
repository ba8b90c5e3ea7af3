// Warning headers as the API server writes them (`299 - "<text>"`, Go's strconv.Quote) and as a
// client reads them back, quotes, backslashes and non-ASCII text included.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warningHeader } from '../../src/http/negotiate.js';
import { warningTexts } from '../../src/kubeapi/warnings.js';

test('a warning is written as kube-apiserver writes it and read back as it was', () => {
  assert.equal(warningHeader('spec.template.spec.containers[0].command: Required value'), '299 - "spec.template.spec.containers[0].command: Required value"');
  const tricky = 'container "web" has a \\ and a tab\tand é';
  const header = warningHeader(tricky);
  assert.equal(header, '299 - "container \\"web\\" has a \\\\ and a tab\\tand \\u00e9"');
  assert.deepEqual(warningTexts(header), [tricky]);
  // Repeated headers, as node joins them, and as an array.
  assert.deepEqual(warningTexts(`${warningHeader('a, b')}, ${warningHeader('c')}`), ['a, b', 'c']);
  assert.deepEqual(warningTexts([warningHeader('x'), warningHeader('y')]), ['x', 'y']);
  assert.deepEqual(warningTexts(undefined), []);
});
