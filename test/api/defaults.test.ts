// v1 defaulting and the kubelet's static-pod defaults: one row per default, then UID determinism.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultImagePullPolicy, defaultPod, defaultSecret } from '../../src/api/defaults.js';
import type { Pod } from '../../src/api/types.js';

const opts = { nodeName: 'node-1', source: 'file' };

function basePod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'node:20-alpine',
          command: ['node'],
          ports: [{ containerPort: 8080 }],
          env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          livenessProbe: { httpGet: { port: 8080 } },
          readinessProbe: { grpc: { port: 9090 } },
          startupProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 0 },
          lifecycle: { preStop: { httpGet: { port: 8080 } } },
          resources: { limits: { cpu: '0.5', memory: '1.5Gi' } },
        },
      ],
      initContainers: [{ name: 'init', image: 'busybox', command: ['true'], ports: [{ containerPort: 9000 }] }],
      volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'cfg' } }],
    },
  };
}

function get(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o == null ? undefined : (o as Record<string, unknown>)[k]), obj);
}

const rows: [string, unknown][] = [
  ['metadata.namespace', 'default'],
  ['spec.restartPolicy', 'Always'],
  ['spec.terminationGracePeriodSeconds', 30],
  ['spec.dnsPolicy', 'ClusterFirst'],
  ['spec.schedulerName', 'default-scheduler'],
  ['spec.securityContext', {}],
  ['spec.enableServiceLinks', true],
  ['spec.nodeName', 'node-1'],
  ['spec.tolerations', [{ operator: 'Exists', effect: 'NoExecute' }]],
  ['spec.serviceAccountName', undefined],
  ['spec.priority', undefined],
  ['spec.preemptionPolicy', undefined],
  ['spec.containers.0.terminationMessagePath', '/dev/termination-log'],
  ['spec.containers.0.terminationMessagePolicy', 'File'],
  ['spec.containers.0.imagePullPolicy', 'IfNotPresent'],
  ['spec.containers.0.ports.0.protocol', 'TCP'],
  ['spec.containers.0.ports.0.hostPort', undefined],
  ['spec.containers.0.env.0.valueFrom.fieldRef.apiVersion', 'v1'],
  ['spec.containers.0.livenessProbe.timeoutSeconds', 1],
  ['spec.containers.0.livenessProbe.periodSeconds', 10],
  ['spec.containers.0.livenessProbe.successThreshold', 1],
  ['spec.containers.0.livenessProbe.failureThreshold', 3],
  ['spec.containers.0.livenessProbe.initialDelaySeconds', undefined],
  ['spec.containers.0.livenessProbe.httpGet.path', '/'],
  ['spec.containers.0.livenessProbe.httpGet.scheme', 'HTTP'],
  // GRPCAction.service `+default=""` (k8s.io/api core/v1 types.go, 1.24+).
  ['spec.containers.0.readinessProbe.grpc.service', ''],
  ['spec.containers.0.readinessProbe.periodSeconds', 10],
  ['spec.containers.0.startupProbe.failureThreshold', 3],
  ['spec.containers.0.startupProbe.initialDelaySeconds', 0],
  ['spec.containers.0.lifecycle.preStop.httpGet.path', '/'],
  ['spec.containers.0.lifecycle.preStop.httpGet.scheme', 'HTTP'],
  ['spec.containers.0.resources.limits', { cpu: '500m', memory: '1536Mi' }],
  ['spec.containers.0.resources.requests', { cpu: '500m', memory: '1536Mi' }],
  ['spec.initContainers.0.imagePullPolicy', 'Always'],
  ['spec.initContainers.0.terminationMessagePolicy', 'File'],
  ['spec.initContainers.0.ports.0.protocol', 'TCP'],
  ['spec.volumes.0.emptyDir', {}],
  ['spec.volumes.1.configMap.defaultMode', 420],
];

for (const [path, want] of rows) {
  test(`defaults ${path}`, () => assert.deepEqual(get(defaultPod(basePod(), opts), path), want));
}

test('sets the static-pod annotations, the hash being the UID', () => {
  const pod = defaultPod(basePod(), opts);
  assert.match(pod.metadata!.uid!, /^[0-9a-f]{32}$/);
  assert.deepEqual(pod.metadata!.annotations, { 'kubernetes.io/config.hash': pod.metadata!.uid, 'kubernetes.io/config.source': 'file' });
  assert.equal(pod.metadata!.name, 'web', 'the node name is not appended to pod names');
});

test('keeps values that are set', () => {
  const input = basePod();
  input.spec!.restartPolicy = 'Never';
  input.spec!.terminationGracePeriodSeconds = 5;
  input.spec!.containers[0]!.imagePullPolicy = 'Never';
  input.spec!.containers[0]!.resources = { limits: { cpu: '2' }, requests: { cpu: '1' } };
  input.spec!.containers[0]!.livenessProbe = { exec: { command: ['true'] }, periodSeconds: 3, failureThreshold: 7 };
  input.metadata!.namespace = 'shop';
  const pod = defaultPod(input, opts);
  assert.equal(pod.spec!.restartPolicy, 'Never');
  assert.equal(pod.spec!.terminationGracePeriodSeconds, 5);
  assert.equal(pod.spec!.containers[0]!.imagePullPolicy, 'Never');
  assert.deepEqual(pod.spec!.containers[0]!.resources, { limits: { cpu: '2' }, requests: { cpu: '1' } });
  assert.equal(pod.spec!.containers[0]!.livenessProbe!.periodSeconds, 3);
  assert.equal(pod.spec!.containers[0]!.livenessProbe!.failureThreshold, 7);
  assert.equal(pod.metadata!.namespace, 'shop');
});

test('a negative grace period is stored as 1', () => {
  const input = basePod();
  input.spec!.terminationGracePeriodSeconds = -5;
  assert.equal(defaultPod(input, opts).spec!.terminationGracePeriodSeconds, 1);
});

test('with hostNetwork the host port defaults to the container port', () => {
  const input = basePod();
  input.spec!.hostNetwork = true;
  assert.equal(defaultPod(input, opts).spec!.containers[0]!.ports![0]!.hostPort, 8080);
});

test('does not modify its input', () => {
  const input = basePod();
  const before = JSON.stringify(input);
  defaultPod(input, opts);
  assert.equal(JSON.stringify(input), before);
});

test('imagePullPolicy by tag', () => {
  const table: [string, string][] = [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.25', 'IfNotPresent'],
    ['registry.local:5000/team/app', 'Always'],
    ['registry.local:5000/team/app:v1', 'IfNotPresent'],
    ['app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
    ['app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
    ['app:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'Always'],
  ];
  for (const [image, want] of table) assert.equal(defaultImagePullPolicy(image), want, image);
});

test('UID: same content gives the same UID, whatever the key order', () => {
  const reverseKeys = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reverseKeys)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reverseKeys(x)]),
          )
        : v;
  const a = defaultPod(basePod(), opts).metadata!.uid;
  assert.equal(defaultPod(basePod(), opts).metadata!.uid, a);
  assert.equal(defaultPod(reverseKeys(basePod()) as Pod, opts).metadata!.uid, a);
});

test('UID: an edit, another node or another file gives a new UID; an explicit uid is kept', () => {
  const uid = (p: Pod, o: Parameters<typeof defaultPod>[1] = opts) => defaultPod(p, o).metadata!.uid;
  const base = uid(basePod());
  const edited = basePod();
  edited.spec!.containers[0]!.image = 'node:22-alpine';
  assert.notEqual(uid(edited), base);
  assert.notEqual(uid(basePod(), { ...opts, nodeName: 'node-2' }), base);
  assert.notEqual(uid(basePod(), { ...opts, path: '/etc/pods/web.yaml' }), base);
  assert.equal(uid(basePod(), { ...opts, path: '/etc/pods/web.yaml' }), uid(basePod(), { ...opts, path: '/etc/pods/web.yaml' }));
  const explicit = basePod();
  (explicit.metadata as { uid?: string }).uid = 'fixed-uid';
  assert.equal(uid(explicit), 'fixed-uid');
});

test('generateName gives a stable name', () => {
  const input = basePod();
  input.metadata = { generateName: 'batch-' };
  const a = defaultPod(input, opts).metadata!.name!;
  assert.match(a, /^batch-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.equal(defaultPod(input, opts).metadata!.name, a);
});

test('Secret: type Opaque and stringData merged into data as base64', () => {
  const s = defaultSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'eA==' }, stringData: { b: 'hi', a: 'over' } } as never);
  assert.equal(s.type, 'Opaque');
  assert.equal(s.metadata!.namespace, 'default');
  assert.deepEqual(s.data, { a: Buffer.from('over').toString('base64'), b: Buffer.from('hi').toString('base64') });
  assert.equal((s as { stringData?: unknown }).stringData, undefined);
});
