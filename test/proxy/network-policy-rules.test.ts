// The NetworkPolicy → filter computation (network-policy-rules.ts), pure: which pods are isolated
// for which direction, the union of the policies' rules, pod and namespace selectors alone and
// combined, ipBlock with except, named ports (the receiving pod's), endPort, policyTypes defaults,
// pods off the pod network never isolated; and the iptables-restore input the filters make.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NetworkPolicy } from '../../src/api/validation/network-policy.js';
import { computePodFilters, filterRestoreInput, podChain, unisolatedPods, type PolicyNamespace, type PolicyPod } from '../../src/proxy/network-policy-rules.js';

const pod = (ns: string, name: string, ip: string, labels: Record<string, string>, extra: Partial<PolicyPod> = {}): PolicyPod => ({
  namespace: ns,
  name,
  uid: `uid-${ns}-${name}`,
  labels,
  ip,
  onPodNetwork: true,
  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
  ...extra,
});

const web = pod('app', 'web', '10.85.0.2', { app: 'web' });
const client = pod('app', 'client', '10.85.0.3', { app: 'client' });
const other = pod('other', 'probe', '10.85.0.4', { app: 'client' });
const hostPod = pod('app', 'hostnet', '192.168.1.10', { app: 'hostnet' }, { onPodNetwork: false });
const pods = [web, client, other, hostPod];
const namespaces: PolicyNamespace[] = [
  { name: 'app', labels: { 'kubernetes.io/metadata.name': 'app' } },
  { name: 'other', labels: { 'kubernetes.io/metadata.name': 'other', team: 'ops' } },
];

const np = (name: string, spec: NetworkPolicy['spec'], ns = 'app'): NetworkPolicy => ({ metadata: { name, namespace: ns }, spec });

test('a deny-all policy isolates every pod of its namespace on the pod network, for Ingress by default', () => {
  const f = computePodFilters([np('deny', { podSelector: {} })], pods, namespaces);
  assert.deepEqual(
    f.map((x) => [x.pod, x.direction, x.allow]),
    [
      ['app/client', 'ingress', []],
      ['app/web', 'ingress', []],
    ],
  );
  assert.deepEqual(
    unisolatedPods(np('deny', { podSelector: {} }), pods).map((p) => p.name),
    ['hostnet'],
  );
});

test('pod selector, namespace selector, both, with a named port resolved on the receiving pod', () => {
  const f = computePodFilters(
    [
      np('web', {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [
          { from: [{ podSelector: { matchLabels: { app: 'client' } } }], ports: [{ protocol: 'TCP', port: 'http' }] },
          { from: [{ namespaceSelector: { matchLabels: { team: 'ops' } } }], ports: [{ port: 9000, endPort: 9010 }] },
          { from: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: 'client' } } }], ports: [{ protocol: 'UDP', port: 53 }] },
        ],
      }),
    ],
    pods,
    namespaces,
  );
  assert.equal(f.length, 1);
  assert.deepEqual(f[0]!.allow, [
    { cidr: '10.85.0.3/32', protocol: 'TCP', port: 8080 },
    { cidr: '10.85.0.4/32', protocol: 'TCP', port: 9000, endPort: 9010 },
    { cidr: '10.85.0.3/32', protocol: 'UDP', port: 53 },
    { cidr: '10.85.0.4/32', protocol: 'UDP', port: 53 },
  ]);
});

test('egress with ipBlock and except; policies of both types make a union; an empty rule allows all', () => {
  const f = computePodFilters(
    [
      np('egress', {
        podSelector: { matchLabels: { app: 'client' } },
        policyTypes: ['Egress'],
        egress: [
          { to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.85.0.0/24'] } }] },
          { to: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port: 'http' }] },
        ],
      }),
      np('in', { podSelector: { matchLabels: { app: 'client' } }, ingress: [{}] }),
    ],
    pods,
    namespaces,
  );
  assert.deepEqual(
    f.map((x) => [x.pod, x.direction, x.allow]),
    [
      ['app/client', 'ingress', [{}]],
      [
        'app/client',
        'egress',
        [
          { cidr: '10.0.0.0/8', except: ['10.85.0.0/24'] },
          { cidr: '10.85.0.2/32', protocol: 'TCP', port: 8080 },
        ],
      ],
    ],
  );
  const input = filterRestoreInput('PVNP-test', f);
  const e = podChain('PVNP-test', f[1]!);
  assert.match(input, /^\*filter\n:PVNP-test - \[0:0\]\n/);
  assert.ok(input.includes('-A PVNP-test -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN\n'));
  assert.ok(input.includes(`-A PVNP-test -s 10.85.0.3/32 -j ${e}\n`));
  assert.ok(input.includes(`-A ${e} -d 10.0.0.0/8 -j ${e}-0\n-A ${e}-0 -d 10.85.0.0/24 -j RETURN\n-A ${e}-0 -j MARK --set-xmark 0x20000/0x20000\n`));
  assert.ok(input.includes(`-A ${e} -d 10.85.0.2/32 -p tcp -m tcp --dport 8080 -j MARK --set-xmark 0x20000/0x20000\n`));
  assert.ok(input.includes(`-A ${e} -m mark --mark 0x20000/0x20000 -j RETURN\n-A ${e} -j REJECT\n`));
  // Chains no longer wanted are emptied and deleted in the same transaction.
  const later = filterRestoreInput('PVNP-test', [], [e, `${e}-0`]);
  assert.ok(later.includes(`:${e} - [0:0]\n`));
  assert.ok(later.endsWith(`-X ${e}\n-X ${e}-0\nCOMMIT\n`));
});

test('a policy of another namespace, or whose selector misses, isolates nothing', () => {
  assert.deepEqual(
    computePodFilters([np('x', { podSelector: { matchLabels: { app: 'none' } } }), np('y', { podSelector: {} }, 'third')], pods, namespaces),
    [],
  );
});
