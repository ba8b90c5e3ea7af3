// Admission by the kubelet's predicate rules: effective requests (init max, sidecars, overhead),
// fit against node allocatable with the exact rejection messages, and declared host-port conflicts;
// the ports pods hold on a runtime whose pods share the host's network.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { admitPod, boundHostPorts, hostPorts, podRequests } from '../../src/kubelet/admission.js';
import { HostPortClaims, portConflictMessage } from '../../src/kubelet/host-ports.js';

type Res = { cpu?: string; memory?: string };

function ctr(name: string, requests?: Res, extra: Partial<Container> = {}): Container {
  return { name, image: 'busybox', command: ['true'], ...(requests ? { resources: { requests } } : {}), ...extra };
}

function pod(name: string, containers: Container[], initContainers: Container[] = [], specExtra: Record<string, unknown> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers, initContainers, ...specExtra },
  };
}

const sidecar = (name: string, requests: Res, extra: Partial<Container> = {}) => ctr(name, requests, { restartPolicy: 'Always', ...extra });
const node = { cpuMilli: 2000, memoryBytes: 1024 ** 3 };

test('effective pod requests follow resourcehelper.PodRequests', () => {
  const cases: { name: string; pod: Pod; cpuMilli: number; memoryBytes: number }[] = [
    { name: 'no requests', pod: pod('a', [ctr('app')]), cpuMilli: 0, memoryBytes: 0 },
    {
      name: 'sum of app containers',
      pod: pod('a', [ctr('a', { cpu: '250m', memory: '64Mi' }), ctr('b', { cpu: '1', memory: '64Mi' })]),
      cpuMilli: 1250,
      memoryBytes: 128 * 1024 ** 2,
    },
    {
      name: 'largest init container wins over a smaller sum',
      pod: pod('a', [ctr('a', { cpu: '500m' }), ctr('b', { cpu: '500m' })], [ctr('i1', { cpu: '2' }), ctr('i2', { cpu: '1500m' })]),
      cpuMilli: 2000,
      memoryBytes: 0,
    },
    {
      name: 'init max is taken per resource',
      pod: pod('a', [ctr('a', { cpu: '100m', memory: '1Gi' })], [ctr('i', { cpu: '1', memory: '10Mi' })]),
      cpuMilli: 1000,
      memoryBytes: 1024 ** 3,
    },
    {
      name: 'sidecar before a plain init container adds to what that init container needs',
      pod: pod('a', [ctr('app', { cpu: '200m' })], [sidecar('proxy', { cpu: '500m' }), ctr('migrate', { cpu: '1' })]),
      cpuMilli: 1500,
      memoryBytes: 0,
    },
    {
      name: 'sidecar after a plain init container only adds to the running total',
      pod: pod('a', [ctr('app', { cpu: '200m' })], [ctr('migrate', { cpu: '1' }), sidecar('proxy', { cpu: '300m' })]),
      cpuMilli: 1000,
      memoryBytes: 0,
    },
    {
      name: 'sidecars are summed with app containers when that is larger',
      pod: pod('a', [ctr('app', { cpu: '1' })], [ctr('migrate', { cpu: '100m' }), sidecar('s1', { cpu: '300m' }), sidecar('s2', { cpu: '200m' })]),
      cpuMilli: 1500,
      memoryBytes: 0,
    },
    {
      name: 'each init container sees the sidecars started before it',
      pod: pod('a', [ctr('app')], [sidecar('s1', { cpu: '300m' }), ctr('i1', { cpu: '1' }), sidecar('s2', { cpu: '400m' }), ctr('i2', { cpu: '1' })]),
      cpuMilli: 1700,
      memoryBytes: 0,
    },
    {
      name: 'overhead is added',
      pod: pod('a', [ctr('app', { cpu: '1', memory: '100Mi' })], [], { overhead: { cpu: '250m', memory: '20Mi' } }),
      cpuMilli: 1250,
      memoryBytes: 120 * 1024 ** 2,
    },
    {
      name: 'limits stand in for missing requests',
      pod: pod('a', [ctr('app', undefined, { resources: { limits: { cpu: '750m', memory: '1G' } } })]),
      cpuMilli: 750,
      memoryBytes: 1e9,
    },
  ];
  for (const c of cases) {
    assert.deepEqual(podRequests(c.pod), { cpuMilli: c.cpuMilli, memoryBytes: c.memoryBytes }, c.name);
  }
});

test('admission against node allocatable and admitted pods', () => {
  const cases: { name: string; pod: Pod; admitted: Pod[]; node?: typeof node & { pods?: number }; reason?: string; message?: string }[] = [
    { name: 'fits', pod: pod('p', [ctr('app', { cpu: '1', memory: '512Mi' })]), admitted: [] },
    { name: 'fits exactly', pod: pod('p', [ctr('app', { cpu: '1500m' })]), admitted: [pod('q', [ctr('app', { cpu: '500m' })])] },
    { name: 'best-effort pod always fits resources', pod: pod('p', [ctr('app')]), admitted: [pod('q', [ctr('app', { cpu: '2', memory: '1Gi' })])] },
    {
      name: 'cpu over allocatable with what is used',
      pod: pod('p', [ctr('app', { cpu: '3' })]),
      admitted: [pod('q', [ctr('app', { cpu: '500m' })])],
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 3000, used: 500, capacity: 2000",
    },
    {
      name: 'cpu fits alone but not with admitted pods',
      pod: pod('p', [ctr('app', { cpu: '1' })]),
      admitted: [pod('q', [ctr('app', { cpu: '600m' })]), pod('r', [ctr('app', { cpu: '600m' })])],
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1000, used: 1200, capacity: 2000",
    },
    {
      name: 'memory',
      pod: pod('p', [ctr('app', { memory: '2Gi' })]),
      admitted: [pod('q', [ctr('app', { memory: '1Mi' })])],
      reason: 'OutOfmemory',
      message: "Node didn't have enough resource: memory, requested: 2147483648, used: 1048576, capacity: 1073741824",
    },
    {
      name: 'cpu is reported before memory',
      pod: pod('p', [ctr('app', { cpu: '4', memory: '4Gi' })]),
      admitted: [],
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 4000, used: 0, capacity: 2000",
    },
    {
      name: 'init container peak counts',
      pod: pod('p', [ctr('app', { cpu: '100m' })], [sidecar('proxy', { cpu: '1' }), ctr('migrate', { cpu: '1500m' })]),
      admitted: [],
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000",
    },
    {
      name: 'admitted pods count with their own effective requests',
      pod: pod('p', [ctr('app', { cpu: '1' })]),
      admitted: [pod('q', [ctr('app', { cpu: '100m' })], [ctr('init', { cpu: '1500m' })])],
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
    },
    {
      name: 'pod count',
      pod: pod('p', [ctr('app')]),
      admitted: [pod('q', [ctr('app')])],
      node: { ...node, pods: 1 },
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
    },
  ];
  for (const c of cases) {
    const r = admitPod(c.pod, c.admitted, c.node ?? node);
    if (!c.reason) assert.deepEqual(r, { admit: true }, c.name);
    else assert.deepEqual(r, { admit: false, reason: c.reason, message: c.message }, c.name);
  }
});

test('host ports: the declared ones (hostPort, or containerPort on the host network) are what admission compares', () => {
  const port = (containerPort: number, extra: Record<string, unknown> = {}) => ({ containerPort, ...extra });
  const web = (name: string, ports: ReturnType<typeof port>[], spec: Record<string, unknown> = {}) => pod(name, [ctr('app', undefined, { ports })], [], spec);
  const host = { hostNetwork: true };
  const conflict = { reason: 'NodePorts', message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" };
  const cases: { name: string; pod: Pod; admitted: Pod[]; conflict: boolean }[] = [
    // Each pod has its own network namespace: a kubelet runs both (the upstream probe tests do).
    { name: 'same containerPort in pod networks', pod: web('b', [port(8080)]), admitted: [web('a', [port(8080)])], conflict: false },
    { name: 'same hostPort', pod: web('b', [port(80, { hostPort: 8080 })]), admitted: [web('a', [port(81, { hostPort: 8080 })])], conflict: true },
    { name: 'same containerPort on the host network', pod: web('b', [port(8080)], host), admitted: [web('a', [port(8080)], host)], conflict: true },
    { name: 'a host-network pod against a hostPort', pod: web('b', [port(8080)], host), admitted: [web('a', [port(80, { hostPort: 8080 })])], conflict: true },
    {
      name: 'a hostPort against a pod-network containerPort',
      pod: web('b', [port(80, { hostPort: 8080 })]),
      admitted: [web('a', [port(8080)])],
      conflict: false,
    },
    { name: 'different ports', pod: web('b', [port(8081)], host), admitted: [web('a', [port(8080)], host)], conflict: false },
    {
      name: 'different protocols',
      pod: web('b', [port(53, { protocol: 'UDP' })], host),
      admitted: [web('a', [port(53, { protocol: 'TCP' })], host)],
      conflict: false,
    },
    { name: 'TCP is the default protocol', pod: web('b', [port(53, { protocol: 'TCP' })], host), admitted: [web('a', [port(53)], host)], conflict: true },
    {
      name: 'wildcard against a specific address',
      pod: web('b', [port(80, { hostPort: 80 })]),
      admitted: [web('a', [port(80, { hostPort: 80, hostIP: '127.0.0.1' })])],
      conflict: true,
    },
    {
      name: 'specific address against the wildcard',
      pod: web('b', [port(80, { hostPort: 80, hostIP: '127.0.0.1' })]),
      admitted: [web('a', [port(80, { hostPort: 80, hostIP: '0.0.0.0' })])],
      conflict: true,
    },
    {
      name: 'two different specific addresses',
      pod: web('b', [port(80, { hostPort: 80, hostIP: '127.0.0.2' })]),
      admitted: [web('a', [port(80, { hostPort: 80, hostIP: '127.0.0.1' })])],
      conflict: false,
    },
    {
      name: 'within one pod',
      pod: pod('b', [ctr('x', undefined, { ports: [port(7000, { hostPort: 7000 })] }), ctr('y', undefined, { ports: [port(7001, { hostPort: 7000 })] })]),
      admitted: [],
      conflict: true,
    },
    {
      name: 'a sidecar holds its ports',
      pod: web('b', [port(7001, { hostPort: 7001 })]),
      admitted: [pod('a', [ctr('app')], [sidecar('proxy', {}, { ports: [port(7001, { hostPort: 7001 })] })])],
      conflict: true,
    },
    {
      name: 'a plain init container does not hold its ports',
      pod: web('b', [port(7002, { hostPort: 7002 })]),
      admitted: [pod('a', [ctr('app')], [ctr('init', undefined, { ports: [port(7002, { hostPort: 7002 })] })])],
      conflict: false,
    },
  ];
  for (const c of cases) {
    const r = admitPod(c.pod, c.admitted, node);
    assert.deepEqual(r, c.conflict ? { admit: false, ...conflict } : { admit: true }, c.name);
  }
  assert.deepEqual(hostPorts(web('x', [port(80, { hostIP: '127.0.0.1', protocol: 'UDP' })], host)), [{ hostIP: '127.0.0.1', protocol: 'UDP', port: 80 }]);
  assert.deepEqual(hostPorts(web('x', [port(80)])), [], 'a containerPort in a pod network is no host port');
  // On a runtime whose pods share the host network every containerPort is bound on the host.
  assert.deepEqual(boundHostPorts(web('x', [port(80)]), 'host'), [{ hostIP: '0.0.0.0', protocol: 'TCP', port: 80 }]);
  assert.deepEqual(boundHostPorts(web('x', [port(80)]), 'pod'), []);
});

test('host port claims: the first pod holds its ports; the next waits, and is woken when they are released', () => {
  const web = (name: string, containerPort: number) => pod(name, [ctr('app', undefined, { ports: [{ containerPort }] })]);
  const claims = new HostPortClaims();
  const woken: string[] = [];
  assert.equal(
    claims.claim(web('a', 8080), () => woken.push('a')),
    undefined,
  );
  const conflict = claims.claim(web('b', 8080), () => woken.push('b'));
  assert.deepEqual(conflict, { port: { hostIP: '0.0.0.0', protocol: 'TCP', port: 8080 }, holder: 'default/a' });
  assert.match(portConflictMessage(conflict!), /^port 8080\/TCP is bound by pod default\/a on this node's network: the pod waits until it is free/);
  assert.equal(
    claims.claim(web('c', 8081), () => woken.push('c')),
    undefined,
    'another port is free',
  );
  assert.equal(
    claims.claim(web('a', 8080), () => woken.push('a')),
    undefined,
    'claiming again is a no-op',
  );
  claims.release('uid-a');
  assert.deepEqual(woken, ['b']);
  assert.equal(
    claims.claim(web('b', 8080), () => woken.push('b')),
    undefined,
  );
});

test('resources are checked before host ports', () => {
  const a = pod('a', [ctr('app', { cpu: '1500m' }, { ports: [{ containerPort: 8080 }] })]);
  const b = pod('b', [ctr('app', { cpu: '1' }, { ports: [{ containerPort: 8080 }] })]);
  assert.equal(admitPod(b, [a], node).reason, 'OutOfcpu');
});
