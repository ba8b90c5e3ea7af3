// Strict decoding against the generated schema: unknown fields with their full path and a
// "did you mean" hint, type errors, null handling; and the schema file matching kubernetes-types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { strictDecode, suggestField, typeMetaError } from '../../src/api/decode.js';
import { apiSchema, kindTypes } from '../../src/api/schema.js';

const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web' },
  spec: { containers, ...extra },
});

const unknownRows: [string, unknown, string[]][] = [
  [
    'probe typo with hint',
    pod([{ name: 'a', image: 'x', livenessProbe: { initialDelaySecond: 5, tcpSocket: { port: 80 } } }]),
    ['spec.containers[0].livenessProbe.initialDelaySecond: unknown field "initialDelaySecond" (did you mean "initialDelaySeconds"?)'],
  ],
  [
    'wrong case',
    pod([{ name: 'a', image: 'x', readinessprobe: {} }]),
    ['spec.containers[0].readinessprobe: unknown field "readinessprobe" (did you mean "readinessProbe"?)'],
  ],
  [
    'typo in spec',
    pod([{ name: 'a', image: 'x' }], { restartPolicyy: 'Never' }),
    ['spec.restartPolicyy: unknown field "restartPolicyy" (did you mean "restartPolicy"?)'],
  ],
  ['no close field', pod([{ name: 'a', image: 'x', replicas: 3 }]), ['spec.containers[0].replicas: unknown field "replicas"']],
  ['top level', { ...pod([{ name: 'a', image: 'x' }]), specs: {} }, ['specs: unknown field "specs" (did you mean "spec"?)']],
  ['metadata', { ...pod([]), metadata: { name: 'a', label: { a: 'b' } } }, ['metadata.label: unknown field "label" (did you mean "labels"?)']],
  [
    'inside a list of env',
    pod([{ name: 'a', image: 'x', env: [{ name: 'A', valu: '1' }] }]),
    ['spec.containers[0].env[0].valu: unknown field "valu" (did you mean "value"?)'],
  ],
  ['newer field from the overlay is known', pod([{ name: 'a', image: 'x', lifecycle: { stopSignal: 'SIGUSR1' } }]), []],
  ['status is known', { ...pod([]), status: { phase: 'Running' } }, []],
];

for (const [name, input, want] of unknownRows) {
  test(`unknown fields: ${name}`, () => {
    const r = strictDecode(input, kindTypes.Pod);
    assert.deepEqual(
      r.unknownFields.map((p) => p.message),
      want,
    );
    assert.deepEqual(r.typeErrors, []);
  });
}

test('unknown fields are dropped from the decoded value; paths come as segments too', () => {
  const r = strictDecode<{ spec: { containers: Record<string, unknown>[] } }>(
    pod([{ name: 'a', image: 'x', livenessProbe: { initialDelaySecond: 5, periodSeconds: 3 } }]),
    kindTypes.Pod,
  );
  assert.deepEqual(r.value.spec.containers[0]!.livenessProbe, { periodSeconds: 3 });
  assert.deepEqual(r.unknownFields[0]!.segments, ['spec', 'containers', 0, 'livenessProbe', 'initialDelaySecond']);
});

const typeRows: [string, unknown, string[]][] = [
  [
    'string for an integer',
    pod([{ name: 'a', image: 'x', ports: [{ containerPort: '8080' }] }]),
    ['spec.containers[0].ports[0].containerPort: Invalid value: "8080": must be an integer'],
  ],
  [
    'number for a string',
    pod([{ name: 'a', image: 'x', env: [{ name: 'A', value: 5 }] }]),
    ['spec.containers[0].env[0].value: Invalid value: 5: must be a string'],
  ],
  [
    'boolean for a string (YAML on/yes)',
    { ...pod([{ name: 'a', image: 'x' }]), metadata: { name: 'a', labels: { enabled: true } } },
    ['metadata.labels[enabled]: Invalid value: true: must be a string'],
  ],
  [
    'fraction for an integer',
    pod([{ name: 'a', image: 'x' }], { terminationGracePeriodSeconds: 1.5 }),
    ['spec.terminationGracePeriodSeconds: Invalid value: 1.5: must be an integer'],
  ],
  ['object for a list', pod([{ name: 'a', image: 'x', command: { run: 'x' } }]), ['spec.containers[0].command: Invalid value: object: must be a list']],
  ['list for an object', pod([{ name: 'a', image: 'x', livenessProbe: [] }]), ['spec.containers[0].livenessProbe: Invalid value: list: must be an object']],
  [
    'boolean for IntOrString',
    pod([{ name: 'a', image: 'x', livenessProbe: { tcpSocket: { port: true } } }]),
    ['spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: true: must be an integer or a string'],
  ],
];

for (const [name, input, want] of typeRows) {
  test(`type errors: ${name}`, () => {
    assert.deepEqual(
      strictDecode(input, kindTypes.Pod).typeErrors.map((p) => p.message),
      want,
    );
  });
}

test('quantities may be numbers and are kept as strings; null means absent', () => {
  const r = strictDecode<{ spec: { containers: { resources: unknown; workingDir?: unknown }[] } }>(
    pod([{ name: 'a', image: 'x', workingDir: null, resources: { limits: { cpu: 1, memory: '1Gi' }, requests: { cpu: 0.5 } } }]),
    kindTypes.Pod,
  );
  assert.deepEqual(r.typeErrors, []);
  assert.deepEqual(r.value.spec.containers[0]!.resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '0.5' } });
  assert.equal('workingDir' in r.value.spec.containers[0]!, false);
});

test('suggestions', () => {
  const known = ['initialDelaySeconds', 'periodSeconds', 'timeoutSeconds', 'image', 'imagePullPolicy'];
  assert.equal(suggestField('initialDelaySecond', known), 'initialDelaySeconds');
  assert.equal(suggestField('periodSecond', known), 'periodSeconds');
  assert.equal(suggestField('imag', known), 'image');
  assert.equal(suggestField('IMAGE', known), 'image');
  assert.equal(suggestField('volumes', known), undefined);
});

test('the schema knows the v1 types podvisor decodes', () => {
  for (const t of ['core/v1.Pod', 'core/v1.PodSpec', 'core/v1.Container', 'core/v1.Probe', 'core/v1.ConfigMap', 'core/v1.Secret', 'meta/v1.ObjectMeta']) {
    assert.ok(apiSchema.types[t], t);
  }
  assert.deepEqual(apiSchema.types['core/v1.HTTPGetAction']!.fields.port, { type: 'intOrString', required: true });
  assert.deepEqual(apiSchema.types['core/v1.ResourceRequirements']!.fields.limits, { type: 'map', values: { type: 'quantity' } });
});

test('schema.generated.json is what scripts/gen-schema.mjs generates from kubernetes-types', async () => {
  const root = new URL('../../../', import.meta.url);
  const gen = (await import(new URL('scripts/gen-schema.mjs', root).href)) as { renderSchema(): string };
  const checkedIn = readFileSync(new URL('src/api/schema.generated.json', root), 'utf8');
  assert.equal(gen.renderSchema(), checkedIn);
});

test('fields named like Object.prototype properties are unknown fields, and map keys like any other', () => {
  const input = JSON.parse(
    '{"apiVersion":"v1","kind":"Pod","__proto__":{"x":1},"constructor":1,"metadata":{"name":"p","labels":{"__proto__":"a","toString":"b"}},"spec":{"containers":[{"name":"c","image":"x","hasOwnProperty":1}]}}',
  ) as Record<string, unknown>;
  const got = strictDecode<{ metadata: { labels: Record<string, string> } }>(input, kindTypes.Pod);
  assert.deepEqual(
    got.unknownFields.map((p) => p.message),
    ['__proto__: unknown field "__proto__"', 'constructor: unknown field "constructor"', 'spec.containers[0].hasOwnProperty: unknown field "hasOwnProperty"'],
  );
  assert.deepEqual(got.typeErrors, []);
  const labels = got.value.metadata.labels;
  assert.deepEqual(Object.keys(labels), ['__proto__', 'toString']);
  assert.equal(Object.getPrototypeOf(labels), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(labels, '__proto__')?.value, 'a');
});

test("typeMetaError: kube-apiserver's words for an apiVersion or kind that is not a string", () => {
  const prefix = (kind: string) =>
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: json: cannot unmarshal`;
  // The body's first 30 bytes close the message (summarizeData).
  const rows: [Record<string, unknown>, string, string | undefined][] = [
    [{ apiVersion: 'v1', kind: { a: 1 } }, 'Pod', `${prefix('Pod')} object into Go struct field .kind of type string ({"apiVersion":"v1","kind":{"a" ...)`],
    [
      { apiVersion: { a: 1 }, kind: 'Pod' },
      'Pod',
      `${prefix('Pod')} object into Go struct field .apiVersion of type string ({"apiVersion":{"a":1},"kind":" ...)`,
    ],
    [{ kind: ['Pod'] }, 'Pod', `${prefix('Pod')} array into Go struct field .kind of type string ({"kind":["Pod"]})`],
    [{ kind: 1 }, 'ConfigMap', `${prefix('ConfigMap')} number into Go struct field .kind of type string ({"kind":1})`],
    // The first in the body's order, as encoding/json reports it.
    [{ kind: true, apiVersion: [] }, 'Secret', `${prefix('Secret')} bool into Go struct field .kind of type string ({"kind":true,"apiVersion":[]})`],
    [{ apiVersion: 'v1', kind: '__proto__' }, 'Pod', undefined],
    [{ apiVersion: null, kind: null }, 'Pod', undefined],
    [{ metadata: { name: 'x' } }, 'Pod', undefined],
  ];
  for (const [body, kind, want] of rows) assert.equal(typeMetaError(body, kind), want, JSON.stringify(body));
});
