// policy/v1 PodDisruptionBudgets on a real `podvisor agent` driven by the real kubectl: created
// (`kubectl create pdb` where kubectl writes policy/v1, else applied), their status computed by the
// disruption controller, printed with `kubectl get pdb`'s columns, and honoured by pods/eviction:
// a minAvailable of 2 over 2 Ready replicas refuses an eviction with 429 and upstream's message,
// makes `kubectl drain` retry until its timeout, and allows it once the budget allows one.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlMinor, kubectlPath, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };

async function apply(a: Api, name: string, yaml: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sleep, "300"]}]
`;

async function pdbStatus(a: Api, name: string): Promise<Record<string, unknown>> {
  const r = await kubectl(a, ['get', 'pdb', name, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { status: Record<string, unknown> }).status;
}

async function runningPods(a: Api, app: string): Promise<string[]> {
  const r = await kubectl(a, ['get', 'pods', '-l', `app=${app}`, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}']);
  return r.stdout
    .split('\n')
    .filter((l) => l.endsWith(' Running'))
    .map((l) => l.split(' ')[0]!);
}

const violation = "Cannot evict pod as it would violate the pod's disruption budget.";

test('a PDB of minAvailable 2 over 2 Ready replicas: status, kubectl get pdb, eviction refused with 429, drain retries, then allowed', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'web', deployment('web', 2));
  await waitFor('web Running', async () => (await runningPods(a, 'web')).length === 2, 60_000);
  // kubectl writes policy/v1 from 1.22; kubectl 1.20's `create pdb` writes the removed policy/v1beta1.
  if ((kubectlMinor ?? 0) >= 22) {
    const r = await kubectl(a, ['create', 'pdb', 'web', '--selector=app=web', '--min-available=2']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /poddisruptionbudget.policy\/web created/);
  } else {
    await apply(
      a,
      'pdb',
      'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: web}}\n',
    );
  }
  await waitFor('the controller counts 2 healthy pods', async () => (await pdbStatus(a, 'web')).currentHealthy === 2, 60_000);
  const status = await pdbStatus(a, 'web');
  assert.equal(status.expectedPods, 2);
  assert.equal(status.desiredHealthy, 2);
  assert.equal(status.disruptionsAllowed, 0);
  assert.equal(status.observedGeneration, 1);
  const cond = (status.conditions as Array<Record<string, string>>).find((c) => c.type === 'DisruptionAllowed');
  assert.equal(cond?.status, 'False');
  assert.equal(cond?.reason, 'InsufficientPods');

  let r = await kubectl(a, ['get', 'pdb']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\n/);
  assert.match(r.stdout, /\nweb\s+2\s+N\/A\s+0\s+\S+\n/);

  // The eviction API answers 429 with upstream's message and the budget's cause.
  const [pod] = await runningPods(a, 'web');
  const evictionFile = join(env.dir, 'eviction.json');
  writeFileSync(evictionFile, JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'default' } }));
  r = await kubectl(a, ['create', '--raw', `/api/v1/namespaces/default/pods/${pod}/eviction`, '-f', evictionFile]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Cannot evict pod as it would violate the pod's disruption budget\./);
  r = await kubectl(a, ['get', '--raw', `/api/v1/namespaces/default/pods/${pod}`]);
  assert.equal(r.code, 0, 'the refused pod is still there');

  // kubectl drain retries the refused evictions until its timeout, in upstream's words.
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  r = await kubectl(a, ['drain', node, '--timeout=8s']);
  assert.notEqual(r.code, 0);
  assert.ok((r.stdout + r.stderr).includes(`(will retry after 5s): ${violation}`), r.stdout + r.stderr);
  assert.match(r.stderr, /global timeout reached: 8s/);
  assert.equal((await runningPods(a, 'web')).length, 2, 'both replicas kept');
  r = await kubectl(a, ['uncordon', node]);
  assert.equal(r.code, 0, r.stderr);

  // minAvailable 1: one disruption allowed; the eviction succeeds and is recorded.
  r = await kubectl(a, ['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('one disruption allowed', async () => (await pdbStatus(a, 'web')).disruptionsAllowed === 1, 60_000);
  r = await kubectl(a, ['get', 'pdb', 'web']);
  assert.match(r.stdout, /\nweb\s+1\s+N\/A\s+1\s+\S+\n/);
  r = await kubectl(a, ['create', '--raw', `/api/v1/namespaces/default/pods/${pod}/eviction`, '-f', evictionFile]);
  assert.equal(r.code, 0, r.stderr);
  const after = await pdbStatus(a, 'web');
  assert.equal(after.disruptionsAllowed, 0);
  await waitFor(
    'a replacement Running',
    async () => {
      const pods = await runningPods(a, 'web');
      return pods.length === 2 && !pods.includes(pod!);
    },
    60_000,
  );
  await waitFor('the budget allows one again', async () => (await pdbStatus(a, 'web')).disruptionsAllowed === 1, 60_000);

  r = await kubectl(a, ['delete', 'pdb', 'web']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['delete', 'deploy', 'web', '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
});

test('a PDB with both minAvailable and maxUnavailable is refused in the API server’s words', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(env.dir, 'both.yaml');
  writeFileSync(
    file,
    'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both}\nspec:\n  minAvailable: 1\n  maxUnavailable: 150%\n  selector: {matchLabels: {app: x}}\n',
  );
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /The PodDisruptionBudget "both" is invalid: \n\* spec: Invalid value: policy.PodDisruptionBudgetSpec\{.*\}: minAvailable and maxUnavailable cannot be both set\n/,
  );
  assert.match(r.stderr, /\n\* spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%\n/);
});

test('discovery lists the policy group, so kubectl drain evicts through the eviction API', { skip }, async (t) => {
  const a = env.api(t);
  const r = await kubectl(a, ['get', '--raw', '/apis']);
  assert.match(r.stdout, /\{"name":"policy","versions":\[\{"groupVersion":"policy\/v1","version":"v1"\}\]/);
  const res = await kubectl(a, ['api-resources', '--api-group=policy']);
  assert.match(res.stdout, /poddisruptionbudgets\s+pdb\s+policy\/v1\s+true\s+PodDisruptionBudget/);
});
