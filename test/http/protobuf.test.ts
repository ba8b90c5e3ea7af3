// The Kubernetes protobuf codec: objects in their JSON form encoded in the `k8s\0` runtime.Unknown
// envelope and decoded back unchanged (times, int-or-strings, quantities, bytes, inlined structs,
// raw JSON), zeros of non-pointer fields read as unset and of pointers as values.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeProtobuf, encodeProtobuf, isProtobufBody, ProtobufDecodeError } from '../../src/http/protobuf.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, creationTimestamp: '2026-01-02T03:04:05Z' },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'busybox',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        resources: { limits: { cpu: '500m', memory: '64Mi' } },
        readinessProbe: { grpc: { port: 9555, service: '' }, periodSeconds: 5 },
        livenessProbe: { httpGet: { path: '/', port: 'http' }, initialDelaySeconds: 0 },
        volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
      },
    ],
    volumes: [{ name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } }],
    terminationGracePeriodSeconds: 0,
  },
};

test('a Pod goes through protobuf unchanged', () => {
  const body = encodeProtobuf(pod)!;
  assert.ok(isProtobufBody(body));
  assert.deepEqual(body.subarray(0, 4), Buffer.from('k8s\0', 'latin1'));
  const back = decodeProtobuf(body);
  // grpc.service is a pointer (kept at ""), terminationGracePeriodSeconds a pointer (kept at 0);
  // initialDelaySeconds is not (its 0 is unset, as JSON's omitempty leaves it out).
  const expected = structuredClone(pod);
  delete (expected.spec.containers[0]!.livenessProbe as Record<string, unknown>).initialDelaySeconds;
  assert.deepEqual(back, expected);
});

test('bytes, raw JSON and micro times', () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: Buffer.from([0, 1, 254, 255]).toString('base64') }, type: 'Opaque' };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(secret)!), secret);
  const rev = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, data: { spec: { template: { x: [1, 'a'] } } }, revision: 2 };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(rev)!), rev);
  const ev = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web' },
    eventTime: '2026-01-02T03:04:05.123456Z',
    count: 3,
  };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(ev)!), ev);
});

test('kinds of every vendored group, and the options kinds of any group', () => {
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 0, strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } },
  };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(deploy)!), deploy);
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'x' },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: false } }],
  };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(slice)!), slice);
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'r' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(role)!), role);
  const del = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', gracePeriodSeconds: 0 };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(del)!), del);
  const status = { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success', details: { name: 'x', kind: 'configmaps', uid: 'u' } };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(status)!), status);
});

test('what is not a Kubernetes protobuf body is refused with the reason', () => {
  assert.throws(() => decodeProtobuf(Buffer.from('{"kind":"Pod"}')), ProtobufDecodeError);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
  const unknownKind = encodeProtobuf(cm)!;
  // The same envelope naming a kind no group has.
  const renamed = Buffer.from(unknownKind.toString('latin1').replace('ConfigMap', 'ConfigMop'), 'latin1');
  assert.throws(() => decodeProtobuf(renamed), /no kind "ConfigMop" is registered for version "v1"/);
  assert.equal(encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget' }), undefined);
});
