// The DaemonSet controller of a real `podvisor agent` driven by the real kubectl: one pod
// `<set>-<5 chars>` on the agent's node with the revision labels, the daemon tolerations and the
// node-name affinity; `rollout status`; `set env` rolling the pod to a new revision; `rollout undo`;
// a nodeSelector the node does not match giving 0 desired; delete taking pods and revisions along.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { holdsFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const daemonSet = (name: string, extra = '') => `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ${name}}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
${extra}      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 0.1; done']
        readinessProbe:
          exec: {command: ['true']}
          periodSeconds: 1
`;

type Api = { kubeconfig: string; dir: string };

async function apply(a: Api, name: string, body: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  const r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

/** The set's pods that are not being deleted, as `name=controller-revision-hash`. */
async function livePods(a: Api, app: string): Promise<string[]> {
  const r = await kubectl(a, ['get', 'pods', '-l', `app=${app}`, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const items = (JSON.parse(r.stdout) as { items: Pod[] }).items;
  return items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `${p.metadata?.name}=${p.metadata?.labels?.['controller-revision-hash']}`);
}

test('a DaemonSet runs one pod on the node, rolls it on set env, rolls back and is deleted with it', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'agent', daemonSet('agent'));
  let r = await kubectl(a, ['rollout', 'status', 'ds/agent', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /daemon set "agent" successfully rolled out/);
  const [first] = await livePods(a, 'agent');
  assert.match(first ?? '', /^agent-[bcdfghjklmnpqrstvwxz2456789]{5}=[a-z0-9]+$/);
  const firstHash = first!.split('=')[1]!;
  r = await kubectl(a, ['get', 'controllerrevisions', '-l', 'app=agent', '-o', 'jsonpath={.items[*].metadata.name} {.items[*].revision}']);
  assert.equal(r.stdout, `agent-${firstHash} 1`);
  const podName = first!.split('=')[0]!;
  r = await kubectl(a, [
    'get',
    'pod',
    podName,
    '-o',
    'jsonpath={.metadata.labels.pod-template-generation} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key} {.spec.tolerations[*].key}',
  ]);
  assert.match(r.stdout, /^1 DaemonSet\/agent metadata\.name .*node\.kubernetes\.io\/not-ready.*node\.kubernetes\.io\/unschedulable/);
  r = await kubectl(a, [
    'get',
    'ds',
    'agent',
    '-o',
    'jsonpath={.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.numberMisscheduled} {.status.observedGeneration}',
  ]);
  assert.equal(r.stdout, '1 1 1 1 1 0 1');
  r = await kubectl(a, ['get', 'ds', 'agent']);
  assert.match(r.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+1\s+1\s+1\s+1\s+1\s+<none>\s+\d+s\n$/);

  r = await kubectl(a, ['set', 'env', 'ds/agent', 'VERSION=2']);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'ds/agent', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  const [second] = await waitFor(
    'one pod of the new revision',
    async () => {
      const pods = await livePods(a, 'agent');
      return pods.length === 1 && !pods[0]!.endsWith(`=${firstHash}`) ? pods : undefined;
    },
    30_000,
  );
  const secondHash = second!.split('=')[1]!;
  await holdsFor('one pod only on the node', async () => (await livePods(a, 'agent')).length === 1, 2000);
  r = await kubectl(a, ['get', 'ds', 'agent', '-o', 'jsonpath={.status.updatedNumberScheduled} {.status.observedGeneration}']);
  assert.equal(r.stdout, '1 2');

  r = await kubectl(a, ['rollout', 'undo', 'ds/agent']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    'the one pod is back at the first revision',
    async () => {
      const pods = await livePods(a, 'agent');
      return pods.length === 1 && pods[0]!.endsWith(`=${firstHash}`);
    },
    60_000,
  );
  r = await kubectl(a, ['get', 'controllerrevisions', '-l', 'app=agent', '-o', 'jsonpath={range .items[*]}{.metadata.name}:{.revision} {end}']);
  assert.deepEqual(r.stdout.trim().split(' ').sort(), [`agent-${firstHash}:3`, `agent-${secondHash}:2`].sort());

  r = await kubectl(a, ['delete', 'ds', 'agent']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the pods and revisions of the set are gone', async () => {
    const pods = await kubectl(a, ['get', 'pods', '-l', 'app=agent', '-o', 'name']);
    const revs = await kubectl(a, ['get', 'controllerrevisions', '-l', 'app=agent', '-o', 'name']);
    return pods.stdout.trim() === '' && revs.stdout.trim() === '';
  });
});

test('a nodeSelector the node does not match: 0 desired, no pod; one it matches: the pod', { skip }, async (t) => {
  const a = env.api(t);
  await apply(a, 'gpu', daemonSet('gpu', '      nodeSelector: {accelerator: gpu}\n'));
  await waitFor(
    'the status is written',
    async () => (await kubectl(a, ['get', 'ds', 'gpu', '-o', 'jsonpath={.status.observedGeneration}'])).stdout === '1',
    30_000,
  );
  let r = await kubectl(a, ['get', 'ds', 'gpu']);
  assert.match(r.stdout, /\ngpu\s+0\s+0\s+0\s+0\s+0\s+accelerator=gpu\s+\d+s\n$/);
  await holdsFor('no pod is created', async () => (await livePods(a, 'gpu')).length === 0, 2000);
  r = await kubectl(a, ['rollout', 'status', 'ds/gpu', '--timeout=30s']);
  assert.equal(r.code, 0, r.stderr);

  // The node's own labels select it: kubernetes.io/os is the platform's.
  await apply(a, 'os', daemonSet('os', `      nodeSelector: {kubernetes.io/os: ${process.platform}}\n`));
  r = await kubectl(a, ['rollout', 'status', 'ds/os', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await livePods(a, 'os')).length, 1);
  for (const name of ['gpu', 'os']) {
    r = await kubectl(a, ['delete', 'ds', name]);
    assert.equal(r.code, 0, r.stderr);
  }
});
