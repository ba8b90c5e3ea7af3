// The container environment as the kubelet computes it: $(VAR) expansion rules, envFrom/env order and
// overriding, the downward API (fieldRef, resourceFieldRef) and ConfigMap/Secret references.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Container, EnvFromSource, EnvVar, Pod, Secret } from '../../src/api/types.js';
import { ContainerConfigError, expand, makeEnvironmentVariables, mappingFuncFor } from '../../src/kuberuntime/envvars.js';

test('expand: Kubernetes expansion rules', async (t) => {
  const vars = new Map([
    ['A', 'a'],
    ['EMPTY', ''],
  ]);
  const cases: Array<[string, string]> = [
    ['$(A)', 'a'],
    ['x$(A)y', 'xay'],
    ['$(A)$(A)', 'aa'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$a'],
    ['$$$$', '$$'],
    ['$(B)', '$(B)'],
    ['$(A', '$(A'],
    ['$A', '$A'],
    ['a$', 'a$'],
    ['$', '$'],
    ['$()', '$()'],
    ['$(EMPTY)x', 'x'],
    ['no refs', 'no refs'],
    ['$(A)-$(B)-$$', 'a-$(B)-$'],
  ];
  for (const [input, want] of cases) {
    await t.test(JSON.stringify(input), () => assert.equal(expand(input, mappingFuncFor(vars)), want));
  }
});

const cm = (name: string, data: Record<string, string>): ConfigMap => ({ metadata: { name, namespace: 'default' }, data });
const secret = (name: string, data: Record<string, string>): Secret => ({
  metadata: { name, namespace: 'default' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

const objects = {
  configMaps: [cm('app-config', { LOG_LEVEL: 'debug', MODE: 'fast' }), cm('other', { MODE: 'slow', EXTRA: '1' })],
  secrets: [secret('db', { password: 's3cret', user: 'admin' })],
};
const lookup = {
  configMap: (ns: string, name: string) => objects.configMaps.find((c) => c.metadata?.name === name && ns === 'default'),
  secret: (ns: string, name: string) => objects.secrets.find((s) => s.metadata?.name === name && ns === 'default'),
};

function pod(over: Partial<Pod['metadata']> = {}, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1', labels: { app: 'web', tier: 'fe' }, annotations: { 'example.com/owner': 'team' }, ...over },
    spec: { containers: [], nodeName: 'node-1', serviceAccountName: 'sa', ...spec },
  };
}

function envOf(container: Partial<Container>, p: Pod = pod(), nodeAllocatable = { cpuMilli: 4000, memoryBytes: 8 * 1024 ** 3, ephemeralStorageBytes: 1000 }) {
  const c: Container = { name: 'app', ...container };
  const withContainer: Pod = { ...p, spec: { ...p.spec!, containers: [c, ...(p.spec?.containers ?? [])] } };
  return makeEnvironmentVariables({ pod: withContainer, container: c, podIP: '127.0.0.1', hostIP: '127.0.0.1', lookup, nodeAllocatable });
}

test('env: order, overriding and references to earlier variables only', async (t) => {
  const cases: Array<{ name: string; env?: EnvVar[]; envFrom?: EnvFromSource[]; want: Array<[string, string]> }> = [
    {
      name: 'literal values in order',
      env: [
        { name: 'B', value: '2' },
        { name: 'A', value: '1' },
      ],
      want: [
        ['B', '2'],
        ['A', '1'],
      ],
    },
    {
      name: 'backward reference',
      env: [
        { name: 'B', value: 'b' },
        { name: 'A', value: 'x$(B)' },
      ],
      want: [
        ['B', 'b'],
        ['A', 'xb'],
      ],
    },
    {
      name: 'forward reference stays literal',
      env: [
        { name: 'A', value: '$(B)' },
        { name: 'B', value: 'b' },
      ],
      want: [
        ['A', '$(B)'],
        ['B', 'b'],
      ],
    },
    {
      name: 'escaped',
      env: [
        { name: 'B', value: 'b' },
        { name: 'A', value: '$$(B)' },
      ],
      want: [
        ['B', 'b'],
        ['A', '$(B)'],
      ],
    },
    { name: 'self reference', env: [{ name: 'A', value: '$(A)' }], want: [['A', '$(A)']] },
    {
      name: 'redefinition keeps first position',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
        { name: 'A', value: '$(A)3' },
      ],
      want: [
        ['A', '13'],
        ['B', '2'],
      ],
    },
    { name: 'empty value', env: [{ name: 'A' }], want: [['A', '']] },
    {
      name: 'envFrom first, env overrides, env can reference envFrom',
      envFrom: [{ configMapRef: { name: 'app-config' } }],
      env: [
        { name: 'MODE', value: 'env' },
        { name: 'LVL', value: '$(LOG_LEVEL)' },
      ],
      want: [
        ['LOG_LEVEL', 'debug'],
        ['MODE', 'env'],
        ['LVL', 'debug'],
      ],
    },
    {
      name: 'later envFrom sources override earlier ones',
      envFrom: [{ configMapRef: { name: 'app-config' } }, { configMapRef: { name: 'other' } }],
      want: [
        ['LOG_LEVEL', 'debug'],
        ['MODE', 'slow'],
        ['EXTRA', '1'],
      ],
    },
    {
      name: 'prefix',
      envFrom: [
        { prefix: 'CFG_', configMapRef: { name: 'app-config' } },
        { prefix: 'DB_', secretRef: { name: 'db' } },
      ],
      want: [
        ['CFG_LOG_LEVEL', 'debug'],
        ['CFG_MODE', 'fast'],
        ['DB_password', 's3cret'],
        ['DB_user', 'admin'],
      ],
    },
    {
      name: 'optional missing envFrom sources are skipped',
      envFrom: [{ configMapRef: { name: 'nope', optional: true } }, { secretRef: { name: 'nope', optional: true } }],
      env: [{ name: 'A', value: '1' }],
      want: [['A', '1']],
    },
    {
      name: 'configMapKeyRef and secretKeyRef',
      env: [
        { name: 'LVL', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'LOG_LEVEL' } } },
        { name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      ],
      want: [
        ['LVL', 'debug'],
        ['PW', 's3cret'],
      ],
    },
    {
      name: 'optional references to missing objects or keys are skipped',
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'B', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'NOPE', optional: true } } },
        { name: 'C', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'D', valueFrom: { secretKeyRef: { name: 'db', key: 'nope', optional: true } } },
        { name: 'E', value: 'e' },
      ],
      want: [['E', 'e']],
    },
    {
      name: 'values from references are not expanded',
      envFrom: [{ configMapRef: { name: 'app-config' } }],
      env: [
        { name: 'X', value: 'x' },
        { name: 'Y', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'MODE' } } },
      ],
      want: [
        ['LOG_LEVEL', 'debug'],
        ['MODE', 'fast'],
        ['X', 'x'],
        ['Y', 'fast'],
      ],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.deepEqual([...envOf({ env: c.env, envFrom: c.envFrom })], c.want));
  }
});

test('env: missing references fail with the kubelet messages', async (t) => {
  const cases: Array<{ name: string; env?: EnvVar[]; envFrom?: EnvFromSource[]; message: string }> = [
    { name: 'envFrom configmap', envFrom: [{ configMapRef: { name: 'app-config2' } }], message: 'configmap "app-config2" not found' },
    { name: 'envFrom secret', envFrom: [{ secretRef: { name: 'db2' } }], message: 'secret "db2" not found' },
    { name: 'configmap', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }], message: 'configmap "nope" not found' },
    {
      name: 'configmap key',
      env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'LOG_LEVEL2' } } }],
      message: "couldn't find key LOG_LEVEL2 in ConfigMap default/app-config",
    },
    { name: 'secret', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'db2', key: 'k' } } }], message: 'secret "db2" not found' },
    {
      name: 'secret key',
      env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'db', key: 'token' } } }],
      message: "couldn't find key token in Secret default/db",
    },
    {
      name: 'unsupported field',
      env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.foo' } } }],
      message: 'field label not supported: spec.foo',
    },
    {
      name: 'unsupported field version',
      env: [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } }],
      message: 'unsupported pod version: v2',
    },
    {
      name: 'unsupported resource',
      env: [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }],
      message: 'unsupported container resource : limits.gpu',
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.throws(
        () => envOf({ env: c.env, envFrom: c.envFrom }),
        (err: unknown) => err instanceof ContainerConfigError && err.message === c.message,
      );
    });
  }
});

test('env: fieldRef (downward API)', async (t) => {
  const cases: Array<[string, string, Pod?]> = [
    ['metadata.name', 'web'],
    ['metadata.namespace', 'default'],
    ['metadata.namespace', 'default', pod({ namespace: undefined })],
    ['metadata.uid', 'uid-1'],
    ["metadata.labels['app']", 'web'],
    ["metadata.labels['missing']", ''],
    ["metadata.annotations['example.com/owner']", 'team'],
    ['metadata.labels', 'app="web"\ntier="fe"'],
    ['spec.nodeName', 'node-1'],
    ['spec.serviceAccountName', 'sa'],
    ['status.podIP', '127.0.0.1'],
    ['status.podIPs', '127.0.0.1'],
    ['status.hostIP', '127.0.0.1'],
    ['status.hostIPs', '127.0.0.1'],
    ['spec.terminationGracePeriodSeconds', '30'],
    ['spec.terminationGracePeriodSeconds', '5', pod({}, { terminationGracePeriodSeconds: 5 })],
  ];
  for (const [fieldPath, want, p] of cases) {
    await t.test(`${fieldPath}${p ? ' (variant)' : ''}`, () => {
      const env = envOf({ env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath } } }] }, p);
      assert.equal(env.get('V'), want);
    });
  }
});

test('env: resourceFieldRef with divisors and node-allocatable defaults', async (t) => {
  type Res = NonNullable<Container['resources']>;
  const cases: Array<{ name: string; resources?: Res; resource: string; divisor?: string; containerName?: string; want: string }> = [
    { name: 'cpu limit rounded up', resources: { limits: { cpu: '500m' } }, resource: 'limits.cpu', want: '1' },
    { name: 'cpu limit in millicores', resources: { limits: { cpu: '500m' } }, resource: 'limits.cpu', divisor: '1m', want: '500' },
    { name: 'fractional cpu', resources: { limits: { cpu: '1.5' } }, resource: 'limits.cpu', want: '2' },
    { name: 'cpu request', resources: { requests: { cpu: '250m' } }, resource: 'requests.cpu', divisor: '1m', want: '250' },
    { name: 'memory request in Mi', resources: { requests: { memory: '64Mi' } }, resource: 'requests.memory', divisor: '1Mi', want: '64' },
    { name: 'memory limit in bytes', resources: { limits: { memory: '1Gi' } }, resource: 'limits.memory', want: '1073741824' },
    { name: 'memory rounded up', resources: { limits: { memory: '1500' } }, resource: 'limits.memory', divisor: '1k', want: '2' },
    { name: 'unset cpu limit = allocatable', resource: 'limits.cpu', want: '4' },
    { name: 'unset memory limit = allocatable', resource: 'limits.memory', divisor: '1Gi', want: '8' },
    { name: 'zero cpu limit = allocatable', resources: { limits: { cpu: '0' } }, resource: 'limits.cpu', want: '4' },
    { name: 'unset ephemeral-storage limit = allocatable', resource: 'limits.ephemeral-storage', want: '1000' },
    { name: 'unset request defaults to the limit', resources: { limits: { cpu: '2' } }, resource: 'requests.cpu', want: '2' },
    { name: 'unset request without limit', resource: 'requests.memory', want: '0' },
    { name: 'another container', resource: 'limits.memory', divisor: '1Mi', containerName: 'side', want: '128' },
  ];
  const p = pod({}, { containers: [{ name: 'side', resources: { limits: { memory: '128Mi' } } }] });
  for (const c of cases) {
    await t.test(c.name, () => {
      const env = envOf(
        {
          resources: c.resources,
          env: [{ name: 'R', valueFrom: { resourceFieldRef: { resource: c.resource, divisor: c.divisor, containerName: c.containerName } } }],
        },
        p,
      );
      assert.equal(env.get('R'), c.want);
    });
  }
});
