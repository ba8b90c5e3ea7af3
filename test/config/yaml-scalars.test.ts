// Plain scalars read as kubectl reads them, proven on a table of go-yaml's resolver cases (its
// resolve and decode tests, the YAML 1.1 types, and what lies at the edges of each: `E5`, `0b+1`,
// 2^63, overflow). Each row is what kubectl's manifest decoder makes of `v: <scalar>` and of
// `<scalar>: x`: gopkg.in/yaml.v2 v2.4.0 through sigs.k8s.io/yaml v1.4.0's YAMLToJSON, run on
// exactly these inputs; the value as its JSON (numbers compared as JSON.parse reads them), the key
// as its JSON string, or kubectl's error. The resolver, the manifest reader and the yaml package
// path must all give each row.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goFloat32String, plainKey, resolvePlainScalar, unsupportedValueMessage } from '../../src/config/yaml-scalars.js';
import { readManifestYAML } from '../../src/config/manifest-yaml.js';
import { parseSource, parseYAML } from '../../src/config/documents.js';
import { loadManifests, ManifestError } from '../../src/config/load.js';

type Expected = string | { error: string };

// [scalar, kubectl's JSON of its value or its error, kubectl's key string or its error]
const table: [string, Expected, Expected][] = [
  ['y', 'true', 'true'],
  ['Y', 'true', 'true'],
  ['yes', 'true', 'true'],
  ['Yes', 'true', 'true'],
  ['YES', 'true', 'true'],
  ['yEs', '"yEs"', 'yEs'],
  ['n', 'false', 'false'],
  ['N', 'false', 'false'],
  ['no', 'false', 'false'],
  ['No', 'false', 'false'],
  ['NO', 'false', 'false'],
  ['true', 'true', 'true'],
  ['True', 'true', 'true'],
  ['TRUE', 'true', 'true'],
  ['tRue', '"tRue"', 'tRue'],
  ['false', 'false', 'false'],
  ['False', 'false', 'false'],
  ['FALSE', 'false', 'false'],
  ['on', 'true', 'true'],
  ['On', 'true', 'true'],
  ['ON', 'true', 'true'],
  ['oN', '"oN"', 'oN'],
  ['off', 'false', 'false'],
  ['Off', 'false', 'false'],
  ['OFF', 'false', 'false'],
  ['~', 'null', { error: 'unsupported map key of type: %!s(<nil>), key: <nil>' }],
  ['null', 'null', { error: 'unsupported map key of type: %!s(<nil>), key: <nil>' }],
  ['Null', 'null', { error: 'unsupported map key of type: %!s(<nil>), key: <nil>' }],
  ['NULL', 'null', { error: 'unsupported map key of type: %!s(<nil>), key: <nil>' }],
  ['nULL', '"nULL"', 'nULL'],
  ['0', '0', '0'],
  ['-0', '0', '0'],
  ['+0', '0', '0'],
  ['1', '1', '1'],
  ['12', '12', '12'],
  ['+12', '12', '12'],
  ['-12', '-12', '-12'],
  ['012', '10', '10'],
  ['-012', '-10', '-10'],
  ['+012', '10', '10'],
  ['08', '8', '8'],
  ['09', '9', '9'],
  ['0o12', '10', '10'],
  ['0O12', '10', '10'],
  ['-0o12', '-10', '-10'],
  ['0x1A', '26', '26'],
  ['0X1a', '26', '26'],
  ['-0x1A', '-26', '-26'],
  ['+0x1A', '26', '26'],
  ['0x', '"0x"', '0x'],
  ['0b', '"0b"', '0b'],
  ['0o', '"0o"', '0o'],
  ['0b101', '5', '5'],
  ['0B101', '5', '5'],
  ['-0b101', '-5', '-5'],
  ['0b102', '"0b102"', '0b102'],
  ['0b+1', '1', '1'],
  ['0b-1', '-1', '-1'],
  ['1_000', '1000', '1000'],
  ['1__000', '1000', '1000'],
  ['_1', '"_1"', '_1'],
  ['1_', '1', '1'],
  ['-_1', '-1', '-1'],
  ['0x_1F', '31', '31'],
  ['0b1_0', '2', '2'],
  ['1,000', '"1,000"', '1,000'],
  ['.5', '0.5', '0.5'],
  ['._5', '"._5"', '._5'],
  ['.5_0', '0.5', '0.5'],
  ['.5e3', '500', '500'],
  ['.5E+3', '500', '500'],
  ['.e3', '".e3"', '.e3'],
  ['.', '"."', '.'],
  ['-.5', '-0.5', '-0.5'],
  ['+.5', '0.5', '0.5'],
  ['1.', '1', '1'],
  ['1.5', '1.5', '1.5'],
  ['-1.5', '-1.5', '-1.5'],
  ['1.0', '1', '1'],
  ['-0.0', '-0', '-0'],
  ['0.1', '0.1', '0.1'],
  ['1e3', '1000', '1000'],
  ['1E3', '1000', '1000'],
  ['1e+3', '1000', '1000'],
  ['1e-3', '0.001', '0.001'],
  ['1.5e3', '1500', '1500'],
  ['-1e3', '-1000', '-1000'],
  ['+1e3', '1000', '1000'],
  ['1e', '"1e"', '1e'],
  ['1e3.5', '"1e3.5"', '1e3.5'],
  ['E5', '"E5"', 'E5'],
  ['E99', '"E99"', 'E99'],
  ['e3', '"e3"', 'e3'],
  ['e', '"e"', 'e'],
  ['E+5', '"E+5"', 'E+5'],
  ['1e400', '"1e400"', '1e400'],
  ['-1e400', '"-1e400"', '-1e400'],
  ['1e-400', '0', '0'],
  ['.inf', { error: 'json: unsupported value: +Inf' }, '.inf'],
  ['.Inf', { error: 'json: unsupported value: +Inf' }, '.inf'],
  ['.INF', { error: 'json: unsupported value: +Inf' }, '.inf'],
  ['.iNf', '".iNf"', '.iNf'],
  ['+.inf', { error: 'json: unsupported value: +Inf' }, '.inf'],
  ['-.inf', { error: 'json: unsupported value: -Inf' }, '-.inf'],
  ['-.Inf', { error: 'json: unsupported value: -Inf' }, '-.inf'],
  ['+.INF', { error: 'json: unsupported value: +Inf' }, '.inf'],
  ['inf', '"inf"', 'inf'],
  ['Infinity', '"Infinity"', 'Infinity'],
  ['.nan', { error: 'json: unsupported value: NaN' }, '.nan'],
  ['.NaN', { error: 'json: unsupported value: NaN' }, '.nan'],
  ['.NAN', { error: 'json: unsupported value: NaN' }, '.nan'],
  ['.naN', '".naN"', '.naN'],
  ['nan', '"nan"', 'nan'],
  ['NaN', '"NaN"', 'NaN'],
  ['+.nan', '"+.nan"', '+.nan'],
  ['2001-12-14', '"2001-12-14"', '2001-12-14'],
  ['2001-12-14t21:59:43.10-05:00', '"2001-12-14t21:59:43.10-05:00"', '2001-12-14t21:59:43.10-05:00'],
  ['2001-12-14 21:59:43.10', '"2001-12-14 21:59:43.10"', '2001-12-14 21:59:43.10'],
  ['2001-12-14 21:59:43.10 -5', '"2001-12-14 21:59:43.10 -5"', '2001-12-14 21:59:43.10 -5'],
  ['2002-12-14', '"2002-12-14"', '2002-12-14'],
  ['1:20', '"1:20"', '1:20'],
  ['-1:20', '"-1:20"', '-1:20'],
  ['190:20:30', '"190:20:30"', '190:20:30'],
  ['1:20.5', '"1:20.5"', '1:20.5'],
  ['9223372036854775807', '9223372036854775807', '9223372036854775807'],
  ['9223372036854775808', '9223372036854775808', { error: 'unsupported map key of type: uint64, key: 0x8000000000000000' }],
  ['-9223372036854775808', '-9223372036854775808', '-9223372036854775808'],
  ['-9223372036854775809', '-9223372036854776000', '-9.223372e+18'],
  ['18446744073709551615', '18446744073709551615', { error: 'unsupported map key of type: uint64, key: 0xffffffffffffffff' }],
  ['18446744073709551616', '18446744073709552000', '1.8446744e+19'],
  ['+9223372036854775808', '9223372036854776000', '9.223372e+18'],
  ['0x7FFFFFFFFFFFFFFF', '9223372036854775807', '9223372036854775807'],
  ['0x8000000000000000', '9223372036854775808', { error: 'unsupported map key of type: uint64, key: 0x8000000000000000' }],
  ['0xFFFFFFFFFFFFFFFF', '18446744073709551615', { error: 'unsupported map key of type: uint64, key: 0xffffffffffffffff' }],
  ['0x10000000000000000', '"0x10000000000000000"', '0x10000000000000000'],
  ['+0x8000000000000000', '"+0x8000000000000000"', '+0x8000000000000000'],
  ['-0x8000000000000000', '-9223372036854775808', '-9223372036854775808'],
  ['-0x8000000000000001', '"-0x8000000000000001"', '-0x8000000000000001'],
  ['0777777777777777777777', '9223372036854775807', '9223372036854775807'],
  ['01777777777777777777777', '18446744073709551615', { error: 'unsupported map key of type: uint64, key: 0xffffffffffffffff' }],
  ['02000000000000000000000', '2e+21', '2e+21'],
  ['9007199254740993', '9007199254740993', '9007199254740993'],
  ['123456789012345678901234567890', '1.2345678901234568e+29', '1.2345679e+29'],
  ['0x1p-2', '"0x1p-2"', '0x1p-2'],
  ['1.5.5', '"1.5.5"', '1.5.5'],
  ['1-2', '"1-2"', '1-2'],
  ['+', '"+"', '+'],
  ['--1', '"--1"', '--1'],
  ['+-1', '"+-1"', '+-1'],
  ['0755', '493', '493'],
  ['0.5', '0.5', '0.5'],
  ['100m', '"100m"', '100m'],
  ['64Mi', '"64Mi"', '64Mi'],
  ['1Gi', '"1Gi"', '1Gi'],
  ['1e3m', '"1e3m"', '1e3m'],
  ['5e-1', '0.5', '0.5'],
  ['3.14159265358979', '3.14159265358979', '3.1415927'],
  ['=', '"="', '='],
  ['Email', '"Email"', 'Email'],
  ['E', '"E"', 'E'],
  ['e3e', '"e3e"', 'e3e'],
  ['0e0', '0', '0'],
  ['0e', '"0e"', '0e'],
  ['00', '0', '0'],
  ['000', '0', '0'],
  ['0.', '0', '0'],
  ['-.inf5', '"-.inf5"', '-.inf5'],
  ['12:30:45', '"12:30:45"', '12:30:45'],
  ['0xA', '10', '10'],
  ['4294967296', '4294967296', '4294967296'],
  ['-4294967296', '-4294967296', '-4294967296'],
  ['2147483647', '2147483647', '2147483647'],
  ['.1', '0.1', '0.1'],
  ['-.1', '-0.1', '-0.1'],
  ['6.8523e+5', '685230', '685230'],
  ['685.230_15e+03', '685230.15', '685230.1'],
  ['685_230.15', '685230.15', '685230.1'],
  ['685230', '685230', '685230'],
  ['+685_230', '685230', '685230'],
  ['02472256', '685230', '685230'],
  ['0x_0A_74_AE', '685230', '685230'],
  ['0b1010_0111_0100_1010_1110', '685230', '685230'],
  ['-0b101010', '-42', '-42'],
  ['-0b1000000000000000000000000000000000000000000000000000000000000000', '-9223372036854775808', '-9223372036854775808'],
  ['0b111111111111111111111111111111111111111111111111111111111111111', '9223372036854775807', '9223372036854775807'],
  ['-0b111111111111111111111111111111111111111111111111111111111111111', '-9223372036854775807', '-9223372036854775807'],
  [
    '0b1111111111111111111111111111111111111111111111111111111111111111',
    '18446744073709551615',
    { error: 'unsupported map key of type: uint64, key: 0xffffffffffffffff' },
  ],
  ['3.40282346638528859811704183484516925440e+38', '3.4028234663852886e+38', '3.4028235e+38'],
  ['1.401298464324817070923729583289916131280e-45', '1.401298464324817e-45', '1e-45'],
  ['1.797693134862315708145274237317043567981e+308', '1.7976931348623157e+308', '.inf'],
  ['4.940656458412465441765687928682213723651e-324', '5e-324', '0'],
  ['-b_c', '"-b_c"', '-b_c'],
  ['+b_c', '"+b_c"', '+b_c'],
  ['50cent_of_dollar', '"50cent_of_dollar"', '50cent_of_dollar'],
  ['3s', '"3s"', '3s'],
  ['1:1', '"1:1"', '1:1'],
  ['1.2.3.4', '"1.2.3.4"', '1.2.3.4'],
  ['2015-02-24T18:19:39Z', '"2015-02-24T18:19:39Z"', '2015-02-24T18:19:39Z'],
  ['2015-01-01', '"2015-01-01"', '2015-01-01'],
  ['2015-02-24T18:19:39.12Z', '"2015-02-24T18:19:39.12Z"', '2015-02-24T18:19:39.12Z'],
  ['2015-2-3T3:4:5Z', '"2015-2-3T3:4:5Z"', '2015-2-3T3:4:5Z'],
  ['2015-02-24t18:19:39Z', '"2015-02-24t18:19:39Z"', '2015-02-24t18:19:39Z'],
  ['123456e1', '1234560', '1.23456e+06'],
  ['123456E1', '1234560', '1.23456e+06'],
  ['5.5', '5.5', '5.5'],
  ['1e6', '1000000', '1e+06'],
  ['1234567.0', '1234567', '1.234567e+06'],
  ['0.0001', '0.0001', '0.0001'],
  ['0.00001', '0.00001', '1e-05'],
  ['1e39', '1e+39', '.inf'],
  ['-1e39', '-1e+39', '-.inf'],
];

const errorPrefix = 'error converting YAML to JSON: ';

/** The value a row expects, as JSON.parse reads kubectl's JSON. */
const expectedValue = (e: string) => JSON.parse(e) as unknown;

test(`the resolver gives kubectl's value and key for each of ${table.length} scalars`, () => {
  for (const [s, value, key] of table) {
    const v = resolvePlainScalar(s);
    if (typeof value === 'string') assert.deepEqual(v, expectedValue(value), `value of ${s}`);
    else {
      assert.ok(typeof v === 'number' && !Number.isFinite(v), `value of ${s}: ${String(v)} is not refused`);
      assert.equal(unsupportedValueMessage(v), errorPrefix + value.error, `value of ${s}`);
    }
    const k = plainKey(s);
    if (typeof key === 'string') assert.deepEqual(k, { key }, `key ${s}`);
    else assert.deepEqual(k, { error: errorPrefix + key.error }, `key ${s}`);
  }
});

test('the manifest reader reads every scalar of the table as kubectl, or leaves it to the yaml package', () => {
  for (const [s, value] of table) {
    const read = readManifestYAML(`v: ${s}\nw:\n- ${s}\n`);
    if (typeof value !== 'string') {
      assert.equal(read, undefined, `the reader took ${s}, which kubectl refuses`);
      continue;
    }
    // Every other scalar of the table is read in block style.
    assert.ok(read, `the reader gave up on ${s}`);
    const v = expectedValue(value);
    assert.deepEqual(read, [{ index: 0, value: { v, w: [v] } }], `value of ${s}`);
    // In a flow sequence the reader may give up (on `:`), but never reads otherwise.
    const flow = readManifestYAML(`v: [${s}]\n`);
    if (flow && !s.includes(',')) assert.deepEqual(flow, [{ index: 0, value: { v: [v] } }], `flow value of ${s}`);
  }
});

test('the yaml package path reads every scalar of the table as kubectl: values, keys and errors', () => {
  const parse = (text: string) => parseYAML({ name: 'm.yaml', text }, false);
  for (const [s, value, key] of table) {
    const asValue = parse(`v: ${s}\nw:\n- ${s}\n`);
    if (typeof value === 'string') {
      const v = expectedValue(value);
      assert.deepEqual(asValue.errors, [], `value of ${s}`);
      assert.deepEqual(
        asValue.documents.map((d) => d.value),
        [{ v, w: [v] }],
        `value of ${s}`,
      );
    } else {
      assert.deepEqual(asValue.errors, [`error: m.yaml:1:4: ${errorPrefix}${value.error}`], `value of ${s}`);
    }
    if (!s.includes(',')) {
      const flow = parse(`v: [${s}]\n`);
      if (typeof value === 'string')
        assert.deepEqual(
          flow.documents.map((d) => d.value),
          [{ v: [expectedValue(value)] }],
          `flow value of ${s}`,
        );
      else assert.equal(flow.errors.length, 1, `flow value of ${s}`);
    }
    const asKey = parse(`a: 1\n${s}: x\n`);
    if (typeof key === 'string') {
      assert.deepEqual(asKey.errors, [], `key ${s}`);
      assert.deepEqual(
        asKey.documents.map((d) => d.value),
        [{ a: 1, [key]: 'x' }],
        `key ${s}`,
      );
      // A position is found under the key kubectl names the field by.
      assert.equal(asKey.documents[0]!.locate([key], true), 'm.yaml:2:1', `key ${s}`);
    } else {
      assert.deepEqual(asKey.errors, [`error: m.yaml:2:1: ${errorPrefix}${key.error}`], `key ${s}`);
    }
  }
});

test('explicit tags decode as go-yaml decodes them, or fail with its words', () => {
  const parse = (text: string) => parseYAML({ name: 'm.yaml', text }, false);
  const cases: [string, unknown][] = [
    ['!!int 0x1F', 31],
    ['!!int "12"', 12],
    ['!!float 1', 1],
    ['!!str 012', '012'],
    ['!!bool yes', true],
    ['!!null ~', null],
    ['!!timestamp 2001-12-14', '2001-12-14'],
  ];
  for (const [text, v] of cases) {
    const parsed = parse(`v: ${text}\n`);
    assert.deepEqual(parsed.errors, [], text);
    assert.deepEqual(parsed.documents[0]!.value, { v }, text);
  }
  const failing: [string, string][] = [
    ['!!int abc', 'yaml: cannot decode !!str `abc` as a !!int'],
    ['!!int 1.5', 'yaml: cannot decode !!float `1.5` as a !!int'],
    ['!!int true', 'yaml: cannot decode !!bool `true` as a !!int'],
    ['!!float abc', 'yaml: cannot decode !!str `abc` as a !!float'],
    ['!!float .inf', 'json: unsupported value: +Inf'],
  ];
  for (const [text, message] of failing) {
    const errors = parse(`v: ${text}\n`).errors;
    assert.equal(errors.length, 1, text);
    assert.match(errors[0]!, /^error: m\.yaml:1:\d+: /, text);
    assert.ok(errors[0]!.endsWith(errorPrefix + message), `${text}: ${errors[0]}`);
  }
});

test("keys: floats as Go's float32 %g; a null key and a collection key refused; booleans and numbers collide as kubectl's do", () => {
  assert.deepEqual(
    ['1e6', '123456789', '0.00001', '1e39', '-0.0', '3.14159265358979', '1e-46'].map((v) => goFloat32String(Number(v))),
    ['1e+06', '1.2345679e+08', '1e-05', '.inf', '-0', '3.1415927', '0'],
  );
  const parse = (text: string) => parseYAML({ name: 'm.yaml', text }, false);
  assert.deepEqual(parse('a: 1\n? [x]\n: y\n').errors, [`error: m.yaml:2:3: ${errorPrefix}yaml: invalid map key: a mapping or sequence`]);
  assert.deepEqual(parse('a:\n  ~: y\n').errors, [`error: m.yaml:2:3: ${errorPrefix}unsupported map key of type: %!s(<nil>), key: <nil>`]);
  assert.deepEqual(parse('y: 1\n0x1F: 2\n1.50: 3\n').documents[0]!.value, { true: 1, 31: 2, '1.5': 3 });
});

test('a %YAML directive other than 1.1 fails the document, as go-yaml v2 fails it', () => {
  const parse = (text: string) => parseYAML({ name: 'm.yaml', text }, false);
  assert.deepEqual(parse('%YAML 1.2\n---\na: e3\n').errors, [`error: m.yaml:2:1: ${errorPrefix}yaml: found incompatible YAML document`]);
  assert.deepEqual(
    parse('%YAML 1.1\n---\na: e3\nb: on\n').documents.map((d) => d.value),
    [{ a: 'e3', b: true }],
  );
});

test("a manifest with `.inf` deep inside is refused where it is, with kubectl's words", () => {
  const text = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n    args: [-.inf]\n';
  assert.equal(readManifestYAML(text), undefined);
  assert.deepEqual(parseSource({ name: 'p.yaml', text }).errors, [`error: p.yaml:9:12: ${errorPrefix}json: unsupported value: -Inf`]);
});

test('the manifests of the report load: `E5`, `E99` and `e3` are strings, as kubectl reads them, on either path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-scalars-'));
  try {
    const pod = `apiVersion: v1
kind: Pod
metadata:
  name: scalars
  labels:
    version: 1e3m
spec:
  containers:
  - name: c
    image: busybox
    args: [e3, 1e3]
    env:
    - name: E5
      value: E99
    - name: e3
      value: 2001-12-14
    - name: X
      value: 1:20
`;
    // The anchor sends the same manifest down the yaml package path.
    const fast = pod.replace('[e3, 1e3]', '[e3, "1e3"]');
    const slow = fast.replace('name: scalars', 'name: &n scalars-2');
    assert.ok(readManifestYAML(fast));
    assert.equal(readManifestYAML(slow), undefined);
    writeFileSync(join(dir, 'fast.yaml'), fast);
    writeFileSync(join(dir, 'slow.yaml'), slow);
    const loaded = await loadManifests([dir], { nodeName: 'node-1' }).catch((err: unknown) =>
      assert.fail(err instanceof ManifestError ? err.problems.join('\n') : String(err)),
    );
    assert.equal(loaded.pods.length, 2);
    for (const p of loaded.pods) {
      const c = p.spec!.containers[0]!;
      assert.deepEqual(c.args, ['e3', '1e3']);
      assert.deepEqual(c.env, [
        { name: 'E5', value: 'E99' },
        { name: 'e3', value: '2001-12-14' },
        { name: 'X', value: '1:20' },
      ]);
      assert.deepEqual(p.metadata?.labels, { version: '1e3m' });
    }
    // Unquoted, `1e3` is the number 1000 to kubectl as well: a list of strings refuses it.
    writeFileSync(join(dir, 'fast.yaml'), pod);
    writeFileSync(join(dir, 'slow.yaml'), pod.replace('name: scalars', 'name: &n scalars-2'));
    const err = await loadManifests([dir], { nodeName: 'node-1' }).then(
      () => assert.fail('expected the number 1e3 in args to be refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ManifestError);
    assert.deepEqual(
      err.problems,
      ['fast.yaml', 'slow.yaml'].map((f) => `error: ${join(dir, f)}:11:16: spec.containers[0].args[1]: Invalid value: 1000: must be a string`),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
