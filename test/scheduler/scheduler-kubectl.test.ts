// The one-node scheduler of a real `podvisor agent --node-cpu 1 --node-labels team=a` driven by the
// real kubectl: the Node served (`get`, `describe`, `label`, `taint`, `cordon`, `uncordon`); a
// Deployment of 3 × 500m leaves 2 Running and 1 Pending with upstream's FailedScheduling message,
// and its ReplicaSet made exactly 3 pods; freeing CPU schedules the pending pod; a nodeSelector waits
// for `kubectl label node`; a NoSchedule taint waits for its removal; a cordoned node takes nothing;
// required pod anti-affinity on the hostname keeps a second replica Pending; topology spread with
// DoNotSchedule waits for the node's label; a DaemonSet's pod is placed by the same filters.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlMinor, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip, ['--node-cpu', '1', '--node-labels', 'team=a']);

type Api = { kubeconfig: string; dir: string };

const insufficientCpu = '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';

async function apply(a: Api, name: string, yaml: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

/** Each pod of the selector: name, phase, and its PodScheduled condition's status, reason and message. */
async function podStates(a: Api, selector: string): Promise<Array<{ name: string; phase: string; scheduled: string }>> {
  const r = await kubectl(a, [
    'get',
    'pods',
    '-l',
    selector,
    '-o',
    'jsonpath={range .items[*]}{.metadata.name}|{.status.phase}|{range .status.conditions[?(@.type=="PodScheduled")]}{.status}/{.reason}/{.message}{end}{"\\n"}{end}',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, phase, scheduled] = l.split('|') as [string, string, string];
      return { name, phase, scheduled };
    });
}

async function deleteAndWait(a: Api, what: string[], selector: string): Promise<void> {
  const r = await kubectl(a, ['delete', ...what, '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(`pods of ${selector} gone`, async () => (await podStates(a, selector)).length === 0, 60_000);
}

const deployment = (name: string, replicas: number, cpu: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
${extra}      containers: [{name: main, image: busybox, command: [sleep, "300"], resources: {requests: {cpu: ${cpu}}}}]
`;

const bare = (name: string, cpu: string, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: ${name}}}
spec:
  terminationGracePeriodSeconds: 1
${extra}  containers: [{name: main, image: busybox, command: [sleep, "300"], resources: {requests: {cpu: ${cpu}}}}]
`;

test('the Node is served: labels, allocatable, conditions, kubectl get/describe', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']);
  assert.equal(r.code, 0, r.stderr);
  const node = r.stdout.trim();
  assert.ok(node);
  r = await kubectl(a, [
    'get',
    'node',
    node,
    '-o',
    'jsonpath={.metadata.labels.team} {.metadata.labels.kubernetes\\.io/hostname} {.status.allocatable.cpu} {.status.allocatable.pods} {.status.conditions[?(@.type=="Ready")].status}',
  ]);
  assert.equal(r.stdout, `a ${node} 1 110 True`);
  r = await kubectl(a, ['get', 'nodes']);
  assert.match(r.stdout, new RegExp(`^NAME +STATUS +ROLES +AGE +VERSION\\n${node} +Ready +<none> +\\S+ +podvisor/`));
  r = await kubectl(a, ['describe', 'node', node]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Allocatable:\n\s+cpu:\s+1\n/);
  assert.match(r.stdout, /Ready\s+True\s+.*KubeletReady/);
});

test('3 × 500m on a 1-CPU node: 2 Running, 1 Pending in upstream words, exactly 3 pods; freed CPU schedules it', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'web', deployment('web', 3, '500m'));
  const settled = await waitFor(
    'two web pods Running and one Pending Unschedulable',
    async () => {
      const pods = await podStates(a, 'app=web');
      const running = pods.filter((p) => p.phase === 'Running');
      const pending = pods.filter((p) => p.phase === 'Pending' && p.scheduled === `False/Unschedulable/${insufficientCpu}`);
      return pods.length === 3 && running.length === 2 && pending.length === 1 && { running, pending };
    },
    60_000,
  );
  // The controllers have settled: the ReplicaSet counts its 3 pods and made no more than 3.
  await waitFor(
    'the ReplicaSet counts 3 pods',
    async () => (await kubectl(a, ['get', 'rs', '-l', 'app=web', '-o', 'jsonpath={.items[0].status.replicas}'])).stdout === '3',
  );
  let r = await kubectl(a, ['get', 'pods', '-o', 'name']);
  assert.equal(
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('pod/web-')).length,
    3,
    r.stdout,
  );
  r = await kubectl(a, ['get', 'events', '--field-selector', 'reason=SuccessfulCreate', '-o', 'jsonpath={range .items[*]}{.count}{"\\n"}{end}']);
  assert.equal(
    r.stdout
      .split('\n')
      .filter(Boolean)
      .reduce((n, c) => n + Number(c), 0),
    3,
  );
  const pendingName = settled.pending[0]!.name;
  r = await kubectl(a, ['describe', 'pod', pendingName]);
  assert.match(r.stdout, new RegExp(`Warning +FailedScheduling +\\S+ +default-scheduler +${insufficientCpu.replace(/[.()]/g, '\\$&')}`));
  r = await kubectl(a, ['get', 'pod', pendingName, '-o', 'jsonpath={.spec.nodeName}']);
  assert.equal(r.stdout, '');

  // Freeing CPU: a running pod deleted, its replacement and the pending pod compete; 2 Running, 1 Pending again, 3 pods.
  r = await kubectl(a, ['delete', 'pod', settled.running[0]!.name, '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    'two web pods Running again, one Pending, three in all',
    async () => {
      const pods = await podStates(a, 'app=web');
      return pods.length === 3 && pods.filter((p) => p.phase === 'Running').length === 2 && pods.filter((p) => p.phase === 'Pending').length === 1;
    },
    60_000,
  );
  // Scaling to 1 leaves room: the pending pod goes first (scale-down order), the rest runs.
  r = await kubectl(a, ['scale', 'deploy/web', '--replicas=1']);
  assert.equal(r.code, 0, r.stderr);
  await apply(a, 'hog', bare('hog', '500m'));
  await waitFor('hog Running on the freed CPU', async () => (await podStates(a, 'app=hog'))[0]?.phase === 'Running', 60_000);
  await deleteAndWait(a, ['deploy/web'], 'app=web');
  await deleteAndWait(a, ['pod/hog'], 'app=hog');
});

test('nodeSelector waits for kubectl label node; a NoSchedule taint for its removal; a cordoned node for uncordon', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  await apply(a, 'sel', bare('sel', '100m', '  nodeSelector: {disk: ssd}\n'));
  await waitFor(
    'sel Pending for its selector',
    async () =>
      (await podStates(a, 'app=sel'))[0]?.scheduled ===
      "False/Unschedulable/0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
  );
  let r = await kubectl(a, ['label', 'node', node, 'disk=ssd']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('sel Running once the node is labelled', async () => (await podStates(a, 'app=sel'))[0]?.phase === 'Running', 60_000);

  r = await kubectl(a, ['taint', 'node', node, 'dedicated=gpu:NoSchedule']);
  assert.equal(r.code, 0, r.stderr);
  await apply(a, 'tnt', bare('tnt', '100m'));
  await waitFor('tnt Pending for the taint', async () =>
    (await podStates(a, 'app=tnt'))[0]?.scheduled.includes('1 node(s) had untolerated taint {dedicated: gpu}'),
  );
  r = await kubectl(a, ['taint', 'node', node, 'dedicated=gpu:NoSchedule-']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('tnt Running once the taint is gone', async () => (await podStates(a, 'app=tnt'))[0]?.phase === 'Running', 60_000);

  r = await kubectl(a, ['cordon', node]);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['get', 'nodes']);
  assert.match(r.stdout, /Ready,SchedulingDisabled/);
  await apply(a, 'crd', bare('crd', '100m'));
  await waitFor('crd Pending on the cordoned node', async () => (await podStates(a, 'app=crd'))[0]?.scheduled.includes('1 node(s) were unschedulable'));
  r = await kubectl(a, ['uncordon', node]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('crd Running once uncordoned', async () => (await podStates(a, 'app=crd'))[0]?.phase === 'Running', 60_000);
  await deleteAndWait(a, ['pod/sel', 'pod/tnt', 'pod/crd'], 'app in (sel,tnt,crd)');
});

test('required pod anti-affinity on the hostname keeps the second replica Pending', { skip }, async (t) => {
  const a = env.api(t);
  const anti = `      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: db}}
            topologyKey: kubernetes.io/hostname
`;
  await apply(a, 'db', deployment('db', 2, '10m', anti));
  await waitFor(
    'one db Running, one Pending for anti-affinity',
    async () => {
      const pods = await podStates(a, 'app=db');
      return (
        pods.length === 2 &&
        pods.some((p) => p.phase === 'Running') &&
        pods.some((p) =>
          p.scheduled.includes("1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are available: 1 No preemption victims found"),
        )
      );
    },
    60_000,
  );
  await deleteAndWait(a, ['deploy/db'], 'app=db');
});

test('a NoExecute taint evicts a running pod after its tolerationSeconds, one without toleration at once', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  await apply(a, 'plain', bare('plain', '10m'));
  await apply(a, 'patient', bare('patient', '10m', '  tolerations: [{key: maint, operator: Exists, effect: NoExecute, tolerationSeconds: 2}]\n'));
  await waitFor('both Running', async () => (await podStates(a, 'app in (plain,patient)')).filter((p) => p.phase === 'Running').length === 2, 60_000);
  let r = await kubectl(a, ['taint', 'node', node, 'maint=now:NoExecute']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('plain evicted', async () => (await podStates(a, 'app=plain')).length === 0, 60_000);
  await waitFor('patient evicted after its 2 s', async () => (await podStates(a, 'app=patient')).length === 0, 60_000);
  r = await kubectl(a, ['get', 'events', '--field-selector', 'reason=TaintManagerEviction', '-o', 'jsonpath={.items[*].message}']);
  assert.match(r.stdout, /Marking for deletion Pod default\/plain/);
  assert.match(r.stdout, /Marking for deletion Pod default\/patient/);
  r = await kubectl(a, ['taint', 'node', node, 'maint-']);
  assert.equal(r.code, 0, r.stderr);
});

test('preemption: a high-priority pod deletes a low-priority one gracefully (DisruptionTarget), is nominated, and takes its CPU', { skip }, async (t) => {
  const a = env.api(t);
  // The victim ignores SIGTERM for its 30 s grace period, so its terminating state can be read.
  await apply(
    a,
    'low',
    `apiVersion: v1
kind: Pod
metadata: {name: low, labels: {app: low}}
spec:
  terminationGracePeriodSeconds: 30
  containers: [{name: main, image: busybox, command: [sh, -c, 'trap "" TERM; while true; do sleep 1; done'], resources: {requests: {cpu: 800m}}}]
`,
  );
  await waitFor('low Running', async () => (await podStates(a, 'app=low'))[0]?.phase === 'Running', 60_000);
  // Its priority comes from its class (the Priority admission plugin); spec.priority may not be written by hand.
  await apply(a, 'high-class', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n');
  await apply(a, 'high', bare('high', '800m', '  priorityClassName: high\n'));
  const cond = await waitFor(
    'low terminating with DisruptionTarget, high nominated',
    async () => {
      const low = (
        await kubectl(a, [
          'get',
          'pod',
          'low',
          '-o',
          'jsonpath={.metadata.deletionTimestamp}|{range .status.conditions[?(@.type=="DisruptionTarget")]}{.status}/{.reason}/{.message}{end}',
        ])
      ).stdout;
      const high = (await kubectl(a, ['get', 'pod', 'high', '-o', 'jsonpath={.status.nominatedNodeName}'])).stdout;
      return low.includes('|True/') && high !== '' && low;
    },
    60_000,
  );
  assert.match(cond, /\|True\/PreemptionByScheduler\/default-scheduler: preempting to accommodate a higher priority pod$/);
  let r = await kubectl(a, ['delete', 'pod', 'low', '--grace-period=0', '--force']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('high Running in low’s place', async () => (await podStates(a, 'app=high'))[0]?.phase === 'Running', 60_000);
  r = await kubectl(a, ['get', 'events', '--field-selector', 'reason=Preempted', '-o', 'jsonpath={.items[*].involvedObject.name}']);
  assert.match(r.stdout, /\blow\b/);
  await deleteAndWait(a, ['pod/high', 'priorityclass/high'], 'app=high');
});

test('kubectl drain cordons the node and evicts its pods through the eviction API; their replacements wait', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  let r = await kubectl(a, ['get', '--raw', '/api/v1']);
  assert.match(r.stdout, /"name":"pods\/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":\["create"\]/);
  await apply(a, 'dr', deployment('dr', 2, '100m'));
  await waitFor('dr Running', async () => (await podStates(a, 'app=dr')).filter((p) => p.phase === 'Running').length === 2, 60_000);
  r = await kubectl(a, ['drain', node, '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /evicting pod default\/dr-/);
  // kubectl 1.20 reports the drained node with its eviction printer's word (`node/<name> evicted`).
  assert.match(r.stdout, (kubectlMinor ?? 99) <= 20 ? new RegExp(`node/${node} evicted`) : /drained/);
  await waitFor(
    'the replacements Pending on the cordoned node',
    async () => {
      const pods = await podStates(a, 'app=dr');
      return pods.length === 2 && pods.every((p) => p.phase === 'Pending' && p.scheduled.includes('1 node(s) were unschedulable'));
    },
    60_000,
  );
  r = await kubectl(a, ['uncordon', node]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('dr Running after uncordon', async () => (await podStates(a, 'app=dr')).filter((p) => p.phase === 'Running').length === 2, 60_000);
  await deleteAndWait(a, ['deploy/dr'], 'app=dr');
});

test('topology spread with DoNotSchedule: Pending while the node lacks the key, placed once kubectl label node gives it', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  const spread = `      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
`;
  await apply(a, 'spread', deployment('spread', 2, '10m', spread));
  const missingLabel =
    "False/Unschedulable/0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
  await waitFor(
    'both spread pods Pending for the missing zone label',
    async () => {
      const pods = await podStates(a, 'app=spread');
      return pods.length === 2 && pods.every((p) => p.phase === 'Pending' && p.scheduled === missingLabel);
    },
    60_000,
  );
  // One zone: each pod's skew against the only domain is 0, so both fit.
  let r = await kubectl(a, ['label', 'node', node, 'zone=a']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('both spread pods Running in zone a', async () => (await podStates(a, 'app=spread')).filter((p) => p.phase === 'Running').length === 2, 60_000);
  await deleteAndWait(a, ['deploy/spread'], 'app=spread');
  r = await kubectl(a, ['label', 'node', node, 'zone-']);
  assert.equal(r.code, 0, r.stderr);
});

test('a DaemonSet counts the node by its selector and taints, and its pod is placed by the same filters: Pending for Insufficient cpu', { skip }, async (t) => {
  const a = env.api(t);
  await apply(
    a,
    'dsbig',
    `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dsbig}
spec:
  selector: {matchLabels: {app: dsbig}}
  template:
    metadata: {labels: {app: dsbig}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sleep, "300"], resources: {requests: {cpu: "2"}}}]
`,
  );
  await waitFor(
    'one desired daemon pod, Pending for Insufficient cpu',
    async () => {
      const pods = await podStates(a, 'app=dsbig');
      const desired = (await kubectl(a, ['get', 'ds', 'dsbig', '-o', 'jsonpath={.status.desiredNumberScheduled}'])).stdout;
      return desired === '1' && pods.length === 1 && pods[0]!.phase === 'Pending' && pods[0]!.scheduled === `False/Unschedulable/${insufficientCpu}`;
    },
    60_000,
  );
  const r = await kubectl(a, ['get', 'pods', '-l', 'app=dsbig', '-o', 'jsonpath={.items[0].spec.nodeName}']);
  assert.equal(r.stdout, '');
  await deleteAndWait(a, ['ds/dsbig'], 'app=dsbig');
});

test('a directory of 20 Deployments that cannot fit makes exactly their replicas’ worth of pods, all Pending', { skip }, async (t) => {
  const a = env.api(t);
  const dir = join(env.dir, 'many');
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, `big${i}.yaml`), deployment(`big${i}`, 2, '2'));
  let r = await kubectl(a, ['apply', '-f', dir]);
  assert.equal(r.code, 0, r.stderr);
  const count = async () => {
    const out = (await kubectl(a, ['get', 'pods', '-l', 'app', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}'])).stdout;
    return out.split('\n').filter((l) => l.startsWith('big'));
  };
  await waitFor(
    'every ReplicaSet counts its 2 pods',
    async () => {
      const out = (await kubectl(a, ['get', 'rs', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.replicas}{"\\n"}{end}'])).stdout;
      return out.split('\n').filter((l) => /^big\d+-\S+ 2$/.test(l)).length === 20;
    },
    120_000,
  );
  const pods = await count();
  assert.equal(pods.length, 40, pods.join('\n'));
  assert.ok(pods.every((l) => l.endsWith(' Pending')));
  r = await kubectl(a, ['delete', '-f', dir, '--wait=true']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the big pods gone', async () => (await count()).length === 0, 120_000);
});

test('pods the API refuses: the ReplicaSet says ReplicaFailure (FailedCreate), the Deployment copies it, no pod is made', { skip }, async (t) => {
  const a = env.api(t);
  // The process runtime refuses a container without a command, which the Deployment's template does not know.
  await apply(
    a,
    'nocmd',
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: nocmd}
spec:
  replicas: 3
  selector: {matchLabels: {app: nocmd}}
  template:
    metadata: {labels: {app: nocmd}}
    spec:
      containers: [{name: main, image: busybox}]
`,
  );
  const cond = '{range .status.conditions[?(@.type=="ReplicaFailure")]}{.status}/{.reason}/{.message}{end}';
  const rs = await waitFor(
    'the ReplicaSet has ReplicaFailure',
    async () => {
      const out = (await kubectl(a, ['get', 'rs', '-l', 'app=nocmd', '-o', `jsonpath={range .items[*]}${cond}{end}`])).stdout;
      return out.startsWith('True/FailedCreate/') && out;
    },
    60_000,
  );
  assert.match(rs, /spec\.containers\[0\]\.command: Required value/);
  await waitFor(
    'the Deployment copies it',
    async () =>
      /^True\/FailedCreate\/Pod "nocmd-\S+" is invalid: spec\.containers\[0\]\.command: Required value/.test(
        (await kubectl(a, ['get', 'deploy', 'nocmd', '-o', `jsonpath=${cond}`])).stdout,
      ),
    60_000,
  );
  // Creations are retried after a doubling back-off, not at once: a handful of attempts, not hundreds.
  const r = await kubectl(a, ['get', 'events', '--field-selector', 'reason=FailedCreate', '-o', 'jsonpath={range .items[*]}{.count}{"\\n"}{end}']);
  const attempts = r.stdout
    .split('\n')
    .filter(Boolean)
    .reduce((n, c) => n + Number(c), 0);
  assert.ok(attempts >= 1 && attempts <= 10, `${attempts} attempts`);
  assert.equal((await podStates(a, 'app=nocmd')).length, 0);
  await deleteAndWait(a, ['deploy/nocmd'], 'app=nocmd');
});

test('a pod bound by hand (spec.nodeName) skips the scheduler: the kubelet admits or rejects it (OutOfcpu)', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  await apply(a, 'byhand', bare('byhand', '2', `  nodeName: ${node}\n`));
  await waitFor(
    'byhand Failed OutOfcpu',
    async () => (await kubectl(a, ['get', 'pod', 'byhand', '-o', 'jsonpath={.status.phase}/{.status.reason}'])).stdout === 'Failed/OutOfcpu',
    60_000,
  );
  const r = await kubectl(a, ['get', 'events', '--field-selector', 'involvedObject.name=byhand', '-o', 'jsonpath={.items[*].reason}']);
  assert.doesNotMatch(r.stdout, /FailedScheduling|Scheduled/);
  await deleteAndWait(a, ['pod/byhand'], 'app=byhand');
});
