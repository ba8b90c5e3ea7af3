// Quantity parsing by Kubernetes' grammar: accepted forms with their milli/unit values, rejected
// forms with the API server's messages, comparison and canonical printing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, parseQuantity, QuantityError } from '../../src/api/quantity.js';

const formatWrong = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const suffixWrong = "unable to parse quantity's suffix";

const valid: [string, bigint, bigint][] = [
  // text, milliValue, value (rounded away from zero)
  ['0', 0n, 0n],
  ['1', 1000n, 1n],
  ['100m', 100n, 1n],
  ['0.5', 500n, 1n],
  ['.5', 500n, 1n],
  ['1.', 1000n, 1n],
  ['+1', 1000n, 1n],
  ['-1', -1000n, -1n],
  ['-100m', -100n, -1n],
  ['128Mi', 128n * 1024n * 1024n * 1000n, 128n * 1024n * 1024n],
  ['1Ki', 1024000n, 1024n],
  ['1Gi', 1073741824000n, 1073741824n],
  ['1.5Gi', 1610612736000n, 1610612736n],
  ['1G', 1000000000000n, 1000000000n],
  ['1k', 1000000n, 1000n],
  ['1M', 1000000000n, 1000000n],
  ['2T', 2000000000000000n, 2000000000000n],
  ['1E', 1000000000000000000000n, 1000000000000000000n],
  ['1e3', 1000000n, 1000n],
  ['1E3', 1000000n, 1000n],
  ['1e-3', 1n, 1n],
  ['1.5e+2', 150000n, 150n],
  ['250u', 1n, 1n],
  ['1n', 1n, 1n],
  ['007', 7000n, 7n],
];

for (const [text, milli, value] of valid) {
  test(`parses ${text}`, () => {
    const q = parseQuantity(text);
    assert.equal(q.text, text);
    assert.equal(q.milliValue(), milli);
    assert.equal(q.value(), value);
  });
}

const invalid: [string, string][] = [
  ['', formatWrong],
  ['abc', formatWrong],
  ['1.5.5', formatWrong],
  ['1 Gi', formatWrong],
  ['1Mi3x', formatWrong],
  ['1K', suffixWrong],
  ['1mi', suffixWrong],
  ['1e', suffixWrong],
  ['1m3', suffixWrong],
  ['1KiB', formatWrong],
];

for (const [text, message] of invalid) {
  test(`rejects ${JSON.stringify(text)}`, () => {
    assert.throws(
      () => parseQuantity(text),
      (err: unknown) => err instanceof QuantityError && err.message === message,
    );
  });
}

test('compares across suffixes', () => {
  const table: [string, string, number][] = [
    ['1', '1000m', 0],
    ['1Ki', '1024', 0],
    ['1k', '1Ki', -1],
    ['2', '1500m', 1],
    ['1e3', '1k', 0],
    ['-1', '0', -1],
  ];
  for (const [a, b, want] of table) assert.equal(parseQuantity(a).cmp(parseQuantity(b)), want, `${a} vs ${b}`);
});

test('prints canonical form rounded to milli, as the API server serializes', () => {
  const table: [string, string][] = [
    ['0.5', '500m'],
    ['1.5Gi', '1536Mi'],
    ['1024Mi', '1Gi'],
    ['1000Ki', '1000Ki'],
    ['1500', '1500'],
    ['2000', '2k'],
    ['1e3', '1e3'],
    ['0.1m', '1m'],
    ['100m', '100m'],
    ['512', '512'],
    ['0', '0'],
    ['-0.5', '-500m'],
    ['1G', '1G'],
  ];
  for (const [input, want] of table) assert.equal(canonicalQuantity(input), want, input);
});
