// LimitRange and ResourceQuota at admission on a real `podvisor agent`, driven by the real kubectl
// ($KUBECTL, 1.20 in CI) and by kubectl 1.32 (protobuf bodies) where installed: a LimitRange's defaults
// set on a created pod and on a Deployment's pods, its max refused in upstream's words; `kubectl create
// quota` counting pods (refused once full, freed when a pod goes), `kubectl get quota`'s columns, the
// `must specify` refusal of a compute quota, and a server-side dry run that leaves the usage alone.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl, waitFor, type KubectlResult } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

function file(name: string, yaml: string): string {
  const f = join(env.dir, `${name}.yaml`);
  writeFileSync(f, yaml);
  return f;
}

async function ok(p: Promise<KubectlResult>): Promise<string> {
  const r = await p;
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

const podYaml = (name: string, ns: string, resources = '{}') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: app, image: busybox, command: [sleep, "300"], resources: ${resources}}]
`;

test('LimitRange: defaults on API pods and controller pods, max refused, kubectl get limits', { skip }, async (t) => {
  const a = env.api(t);
  await ok(kubectl(a, ['create', 'namespace', 'lr']));
  await ok(
    kubectl(a, [
      'apply',
      '-f',
      file(
        'lr',
        `apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: lr}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
    default: {cpu: 500m, memory: 128Mi}
    defaultRequest: {cpu: 100m}
`,
      ),
    ]),
  );
  const lr = JSON.parse(await ok(kubectl(a, ['get', 'limitrange', 'limits', '-n', 'lr', '-o', 'json']))) as {
    spec: { limits: Array<Record<string, unknown>> };
  };
  // SetDefaults_LimitRangeItem: defaultRequest's memory from default.
  assert.deepEqual(lr.spec.limits[0]!.defaultRequest, { cpu: '100m', memory: '128Mi' });
  assert.match(await ok(kubectl(a, ['get', 'limits', '-n', 'lr'])), /^NAME\s+CREATED AT\nlimits\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
  assert.match(await ok(kubectl(a, ['describe', 'limitrange', 'limits', '-n', 'lr'])), /Container\s+cpu\s+-\s+1\s+100m\s+500m\s+-/);

  await ok(kubectl(a, ['apply', '-f', file('p1', podYaml('p1', 'lr'))]));
  const p1 = JSON.parse(await ok(kubectl(a, ['get', 'pod', 'p1', '-n', 'lr', '-o', 'json']))) as {
    metadata: { annotations: Record<string, string> };
    spec: { containers: Array<{ resources: unknown }> };
  };
  assert.deepEqual(p1.spec.containers[0]!.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.equal(
    p1.metadata.annotations['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app',
  );

  const big = await kubectl(a, ['apply', '-f', file('p2', podYaml('p2', 'lr', '{limits: {cpu: "2"}}'))]);
  assert.notEqual(big.code, 0);
  assert.match(big.stderr, /pods "p2" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);

  // The pods a controller creates are admitted alike.
  await ok(kubectl(a, ['create', 'deployment', 'web', '-n', 'lr', '--image=busybox', '--', 'sleep', '300']));
  await waitFor(
    'the deployment pod with the defaults',
    async () =>
      (await kubectl(a, ['get', 'pods', '-n', 'lr', '-l', 'app=web', '-o', 'jsonpath={.items[0].spec.containers[0].resources.limits.cpu}'])).stdout === '500m',
    60_000,
  );
});

test('ResourceQuota: kubectl create quota counts pods, refuses the third, frees on delete; get quota columns; dry run counts nothing', { skip }, async (t) => {
  const a = env.api(t);
  await ok(kubectl(a, ['create', 'namespace', 'rq']));
  await ok(kubectl(a, ['create', 'quota', 'q', '-n', 'rq', '--hard=pods=2,configmaps=5,limits.cpu=2']));
  await waitFor('the quota status', async () => /"used"/.test((await kubectl(a, ['get', 'quota', 'q', '-n', 'rq', '-o', 'json'])).stdout), 30_000);

  // A compute quota needs the compute resources set.
  const bare = await kubectl(a, ['apply', '-f', file('bare', podYaml('bare', 'rq'))]);
  assert.match(bare.stderr, /pods "bare" is forbidden: failed quota: q: must specify limits.cpu for: app/);

  const limited = '{limits: {cpu: 500m}}';
  // dryRun=All is checked but changes no usage.
  await ok(kubectl(a, ['apply', '--dry-run=server', '-f', file('dry', podYaml('dry', 'rq', limited))]));
  await ok(kubectl(a, ['apply', '-f', file('a', podYaml('a', 'rq', limited))]));
  await ok(kubectl(a, ['apply', '-f', file('b', podYaml('b', 'rq', limited))]));
  const third = await kubectl(a, ['apply', '-f', file('c', podYaml('c', 'rq', limited))]);
  assert.notEqual(third.code, 0);
  assert.match(third.stderr, /pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2/);

  const table = await ok(kubectl(a, ['get', 'quota', '-n', 'rq']));
  assert.match(table, /^NAME\s+AGE\s+REQUEST\s+LIMIT\nq\s+\S+\s+configmaps: \d\/5, pods: 2\/2\s+limits.cpu: 1\/2\n$/);

  await ok(kubectl(a, ['delete', 'pod', 'a', '-n', 'rq', '--wait=true']));
  await waitFor('the deleted pod freed', async () => /pods: 1\/2/.test((await kubectl(a, ['get', 'quota', '-n', 'rq'])).stdout), 60_000);
  await ok(kubectl(a, ['apply', '-f', file('c', podYaml('c', 'rq', limited))]));

  // An update is charged what it adds: a Service turned NodePort needs room for its nodeport.
  await ok(kubectl(a, ['create', 'quota', 'nodeports', '-n', 'rq', '--hard=services.nodeports=0']));
  await ok(kubectl(a, ['create', 'service', 'clusterip', 's', '-n', 'rq', '--tcp=80']));
  const patched = await kubectl(a, ['patch', 'service', 's', '-n', 'rq', '-p', '{"spec":{"type":"NodePort"}}']);
  assert.notEqual(patched.code, 0);
  assert.match(
    patched.stderr,
    /services "s" is forbidden: exceeded quota: nodeports, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0/,
  );

  // Object counts: configmaps (kube-root-ca.crt may be counted too).
  for (let i = 0; ; i++) {
    const r = await kubectl(a, ['create', 'configmap', `cm${i}`, '-n', 'rq']);
    if (r.code !== 0) {
      assert.match(
        r.stderr,
        new RegExp(`configmaps "cm${i}" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=5, limited: configmaps=5`),
      );
      break;
    }
    assert.ok(i < 5, 'the quota let a sixth configmap in');
  }
});

test(
  'kubectl 1.32 (protobuf bodies): create quota, a refused deployment, LimitRange defaults and refusal',
  { skip: skip || (kubectl132Path ? false : 'no kubectl 1.32') },
  async (t) => {
    const a = env.api(t);
    const k = (args: string[]) => runKubectl(kubectl132Path!, a, args);
    await ok(k(['create', 'namespace', 'rq132']));
    await ok(k(['create', 'quota', 'q', '-n', 'rq132', '--hard=count/deployments.apps=1,pods=1']));
    await ok(k(['create', 'deployment', 'one', '-n', 'rq132', '--image=busybox', '--', 'sleep', '300']));
    const two = await k(['create', 'deployment', 'two', '-n', 'rq132', '--image=busybox']);
    assert.match(
      two.stderr,
      /deployments.apps "two" is forbidden: exceeded quota: q, requested: count\/deployments.apps=1, used: count\/deployments.apps=1, limited: count\/deployments.apps=1/,
    );
    await waitFor(
      'the quota counts the deployment and its pod',
      async () => /count\/deployments.apps: 1\/1, pods: 1\/1/.test((await k(['get', 'quota', '-n', 'rq132'])).stdout),
      60_000,
    );
  },
);

test('NetworkPolicy selecting host-process pods: a Warning on create naming them, and an event', { skip }, async (t) => {
  const a = env.api(t);
  await ok(kubectl(a, ['create', 'namespace', 'np']));
  await ok(kubectl(a, ['apply', '-f', file('hp', podYaml('hp', 'np'))]));
  const r = await kubectl(a, [
    'apply',
    '-f',
    file('netpol', 'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny, namespace: np}\nspec:\n  podSelector: {}\n'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /Warning: NetworkPolicy np\/deny selects pods no policy can isolate, whose traffic is not filtered: np\/hp \(host process, no pod network\)/,
  );
  const np = JSON.parse(await ok(kubectl(a, ['get', 'netpol', 'deny', '-n', 'np', '-o', 'json']))) as { spec: { policyTypes: string[] } };
  assert.deepEqual(np.spec.policyTypes, ['Ingress']);
  await waitFor(
    'the PodsNotIsolated event',
    async () =>
      /PodsNotIsolated.*np\/hp/.test((await kubectl(a, ['get', 'events', '-n', 'np', '--field-selector', 'involvedObject.kind=NetworkPolicy'])).stdout),
    30_000,
  );
  // Validation in the API server's words.
  const bad = await kubectl(a, [
    'apply',
    '-f',
    file(
      'badnetpol',
      'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: bad, namespace: np}\nspec:\n  podSelector: {}\n  ingress:\n  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [192.168.0.0/16]}}]\n    ports: [{port: 80, endPort: 70}]\n',
    ),
  ]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /spec.ingress\[0\].from\[0\].ipBlock.except\[0\]: Invalid value: "192.168.0.0\/16": must be a strict subset of `cidr`/);
  assert.match(bad.stderr, /spec.ingress\[0\].ports\[0\].endPort: Invalid value: 80: must be greater than or equal to `port`/);
});
