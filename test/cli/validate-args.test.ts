// The kubectl-style flag parser the commands share: one row per spelling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, UsageError, type FlagSpec } from '../../src/cli/args.js';

const specs: FlagSpec[] = [
  { name: 'filename', short: 'f', type: 'strings', usage: '', default: [] },
  { name: 'output', short: 'o', type: 'string', usage: '', values: ['yaml', 'json'] },
  { name: 'namespace', short: 'n', type: 'string', usage: '' },
  { name: 'watch', short: 'w', type: 'boolean', usage: '' },
  { name: 'timeout', type: 'int', usage: '', default: 30 },
];

const rows: [string[], Record<string, unknown>, string[]][] = [
  [[], { filename: [], timeout: 30 }, []],
  [['-f', 'a.yaml', '-f', 'b.yaml'], { filename: ['a.yaml', 'b.yaml'], timeout: 30 }, []],
  [['--filename=a.yaml', '--filename', 'b.yaml'], { filename: ['a.yaml', 'b.yaml'], timeout: 30 }, []],
  [['-fa.yaml', '-f=b.yaml'], { filename: ['a.yaml', 'b.yaml'], timeout: 30 }, []],
  [['-f', 'a.yaml,b.yaml'], { filename: ['a.yaml', 'b.yaml'], timeout: 30 }, []],
  [['-o', 'yaml'], { filename: [], output: 'yaml', timeout: 30 }, []],
  [['-ojson'], { filename: [], output: 'json', timeout: 30 }, []],
  [['-n', 'shop', 'extra'], { filename: [], namespace: 'shop', timeout: 30 }, ['extra']],
  [['--watch'], { filename: [], watch: true, timeout: 30 }, []],
  [['-w=false'], { filename: [], watch: false, timeout: 30 }, []],
  [['--watch=false'], { filename: [], watch: false, timeout: 30 }, []],
  [['-wn', 'x'], { filename: [], watch: true, namespace: 'x', timeout: 30 }, []],
  [['--timeout=5'], { filename: [], timeout: 5 }, []],
  [['--', '-f', 'x'], { filename: [], timeout: 30 }, ['-f', 'x']],
];

for (const [argv, flags, args] of rows) {
  test(`parses ${JSON.stringify(argv)}`, () => {
    const parsed = parseArgs(argv, specs);
    assert.deepEqual(parsed.flags, flags);
    assert.deepEqual(parsed.args, args);
  });
}

const errors: [string[], string][] = [
  [['--bogus'], 'unknown flag: --bogus'],
  [['-x'], "unknown shorthand flag: 'x' in -x"],
  [['-f'], "flag needs an argument: 'f' in -f"],
  [['--namespace'], 'flag needs an argument: --namespace'],
  [['-o', 'xml'], 'invalid argument "xml" for "-o, --output" flag: must be one of: yaml, json'],
  [['--timeout=soon'], 'invalid argument "soon" for "--timeout" flag: must be an integer'],
  [['--watch=maybe'], 'invalid argument "maybe" for "-w, --watch" flag: strconv.ParseBool: parsing "maybe": invalid syntax'],
];

for (const [argv, message] of errors) {
  test(`rejects ${JSON.stringify(argv)}`, () => {
    assert.throws(
      () => parseArgs(argv, specs),
      (e: unknown) => e instanceof UsageError && e.message === message,
    );
  });
}

test('remembers which flags were given', () => {
  const parsed = parseArgs(['-o', 'yaml'], specs);
  assert.deepEqual([...parsed.given], ['output']);
});
