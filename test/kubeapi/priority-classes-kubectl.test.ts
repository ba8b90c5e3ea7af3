// scheduling.k8s.io/v1 PriorityClasses on a real `podvisor agent --node-cpu 1` driven by the real
// kubectl: the system classes in `kubectl get pc`'s columns, a class applied, the Priority admission
// (a pod's priority resolved from its class, also in a Deployment's pods; an unknown class refused
// with upstream's Forbidden), and a pod whose class says preemptionPolicy Never left Pending rather
// than preempting. Preemption by priorityClassName is in test/scheduler/scheduler-kubectl.test.ts.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip, ['--node-cpu', '1']);

type Api = { kubeconfig: string; dir: string };

function file(name: string, yaml: string): string {
  const f = join(env.dir, `${name}.yaml`);
  writeFileSync(f, yaml);
  return f;
}

const pod = (name: string, cpu: string, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: ${name}}}
spec:
  terminationGracePeriodSeconds: 0
${extra}  containers: [{name: main, image: busybox, command: [sleep, "300"], resources: {requests: {cpu: ${cpu}}}}]
`;

async function jsonpath(a: Api, what: string[], path: string): Promise<string> {
  const r = await kubectl(a, ['get', ...what, '-o', `jsonpath=${path}`]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test('kubectl get pc lists the system classes; a class applied; pods get its priority, an unknown class is Forbidden', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['get', 'pc']);
  assert.equal(r.code, 0, r.stderr);
  const [header, ...rows] = r.stdout.trim().split('\n');
  assert.match(header!, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/);
  assert.ok(
    rows.some((l) => /^system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority$/.test(l)),
    r.stdout,
  );
  assert.ok(
    rows.some((l) => /^system-cluster-critical\s+2000000000\s+false\s+/.test(l)),
    r.stdout,
  );

  r = await kubectl(a, ['apply', '-f', file('pc', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 500\n')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /priorityclass.scheduling.k8s.io\/batch created/);
  r = await kubectl(a, ['apply', '-f', file('huge', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 2000000000\n')]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /PriorityClass "huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000/);

  r = await kubectl(a, ['apply', '-f', file('bad', pod('bad', '10m', '  priorityClassName: nope\n'))]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /Error from server \(Forbidden\): error when creating ".*bad.yaml": pods "bad" is forbidden: no PriorityClass with name nope was found/,
  );
  r = await kubectl(a, ['apply', '-f', file('byhand', pod('byhand', '10m', '  priority: 7\n'))]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /pods "byhand" is forbidden: the integer value of priority \(7\) must not be provided in pod spec; priority admission controller computed 0/,
  );

  r = await kubectl(a, [
    'apply',
    '-f',
    file(
      'dep',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: batchy}
spec:
  replicas: 1
  selector: {matchLabels: {app: batchy}}
  template:
    metadata: {labels: {app: batchy}}
    spec:
      priorityClassName: batch
      terminationGracePeriodSeconds: 0
      containers: [{name: main, image: busybox, command: [sleep, "300"], resources: {requests: {cpu: 10m}}}]
`,
    ),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const got = await waitFor(
    'the Deployment’s pod',
    async () => (await jsonpath(a, ['pods', '-l', 'app=batchy'], '{.items[*].spec.priority}/{.items[*].spec.preemptionPolicy}')) || false,
    60_000,
  );
  assert.equal(got, '500/PreemptLowerPriority');
  r = await kubectl(a, ['delete', 'deployment/batchy', 'priorityclass/batch', '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
});

test('a pod whose class has preemptionPolicy Never stays Pending instead of preempting', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['apply', '-f', file('low', pod('low', '800m'))]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('low Running', async () => (await jsonpath(a, ['pod', 'low'], '{.status.phase}')) === 'Running', 60_000);
  r = await kubectl(a, [
    'apply',
    '-f',
    file('never', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: polite}\nvalue: 1000\npreemptionPolicy: Never\n'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['apply', '-f', file('nv', pod('nv', '800m', '  priorityClassName: polite\n'))]);
  assert.equal(r.code, 0, r.stderr);
  const msg = await waitFor(
    'nv Unschedulable',
    async () => {
      const m = await jsonpath(a, ['pod', 'nv'], '{.spec.priority}/{.spec.preemptionPolicy}|{.status.conditions[?(@.type=="PodScheduled")].message}');
      return m.includes('|0/1') && m;
    },
    60_000,
  );
  assert.equal(msg, '1000/Never|0/1 nodes are available: 1 Insufficient cpu. not eligible due to preemptionPolicy=Never.');
  assert.equal(await jsonpath(a, ['pod', 'low'], '{.metadata.deletionTimestamp}'), '');
  r = await kubectl(a, ['delete', 'pod/nv', 'pod/low', 'priorityclass/polite', '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
});
