// `kill -9` of a real `podvisor agent` in the middle of a Deployment's rolling update, driven by the
// real kubectl: restarted on the same root dir, the agent resumes the rollout from the ReplicaSets and
// pods it kept — never more live pods than replicas + maxSurge while a watch looks on, `kubectl
// rollout status` succeeds, and the ReplicaSets end consistent (the new one at N, the old one at 0).

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCli, stopRuntimeServices, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath, kubectlSpawn, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
let dir: { path: string; remove(): Promise<void> };
let agent: CliProcess | undefined;
const root = () => join(dir.path, 'root');

async function startAgent(): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root(), '--port', '0', '--address', '127.0.0.1']);
  await p.waitFor('stderr', /podvisor agent started/, 60_000);
  return p;
}

before(async () => {
  if (skip) return;
  dir = await tempDir();
});

after(async () => {
  if (skip) return;
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
  await stopRuntimeServices(dir.path);
  await dir.remove();
});

const replicas = 6;
const maxSurge = 2;

// Pods turn Ready two seconds after they start, so the rollout takes several steps of maxSurge.
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: ${maxSurge}, maxUnavailable: 0}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sleep, "600"]
        readinessProbe:
          exec: {command: ["true"]}
          initialDelaySeconds: 2
          periodSeconds: 1
`;

/** The ReplicaSets as `name spec.replicas status.replicas` lines. */
async function replicaSets(a: { kubeconfig: string; dir: string }): Promise<string[]> {
  const r = await kubectl(a, [
    'get',
    'rs',
    '-l',
    'app=web',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.spec.replicas} {.status.replicas}{"\\n"}{end}',
  ]);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

test('kill -9 of the agent mid-rollout: restarted, it finishes the rollout without exceeding maxSurge', { skip, timeout: 300_000 }, async () => {
  agent = await startAgent();
  const a = { kubeconfig: join(root(), 'kubeconfig'), dir: mkdtempSync(join(dir.path, 'kubectl-')) };
  const file = join(dir.path, 'web.yaml');
  writeFileSync(file, deployment);
  let r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=120s']);
  assert.equal(r.code, 0, r.stderr);
  const [oldName] = (await replicaSets(a))[0]!.split(' ');

  r = await kubectl(a, ['set', 'env', 'deploy/web', 'COLOUR=blue']);
  assert.equal(r.code, 0, r.stderr);
  // Mid-rollout: the new ReplicaSet has pods, the old one still has some.
  await waitFor(
    'the rollout under way (new ReplicaSet with pods, old one not yet at 0)',
    async () => {
      const sets = await replicaSets(a);
      const fresh = sets.find((l) => !l.startsWith(`${oldName} `));
      const old = sets.find((l) => l.startsWith(`${oldName} `));
      return fresh && Number(fresh.split(' ')[2]) >= 1 && old && Number(old.split(' ')[1]) >= 1;
    },
    60_000,
  );
  agent.child.kill('SIGKILL');
  await agent.exited;

  agent = await startAgent();
  // From the restart on, a watch on the pods: live (not terminating, not finished) pods never exceed replicas + maxSurge.
  const live = new Map<string, boolean>();
  let most = 0;
  const watch = kubectlSpawn(a, [
    'get',
    'pods',
    '-l',
    'app=web',
    '--watch',
    '--output-watch-events',
    '-o',
    'jsonpath={.type} {.object.metadata.name} {.object.metadata.deletionTimestamp} {.object.status.phase}{"\\n"}',
  ]);
  let buffered = '';
  watch.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const [type, name, ...rest] = line.split(' ');
      const deleting = rest.length > 1 && rest[0] !== '';
      const phase = rest.at(-1);
      live.set(name!, type !== 'DELETED' && !deleting && phase !== 'Succeeded' && phase !== 'Failed');
      most = Math.max(most, [...live.values()].filter(Boolean).length);
    }
  });
  try {
    r = await kubectl(a, ['rollout', 'status', 'deploy/web', '--timeout=180s']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /deployment "web" successfully rolled out/);
    await waitFor('the old pods no longer live', () => [...live.values()].filter(Boolean).length === replicas, 60_000);
  } finally {
    watch.kill('SIGTERM');
  }
  assert.ok(most > 0, `the watch saw no pods:\n${watch.out()}`);
  assert.ok(most <= replicas + maxSurge, `${most} live pods at once after the restart (at most ${replicas + maxSurge}):\n${watch.out()}`);

  const sets = await replicaSets(a);
  assert.equal(sets.length, 2, sets.join('\n'));
  assert.ok(sets.includes(`${oldName} 0 0`), sets.join('\n'));
  const fresh = sets.find((l) => !l.startsWith(`${oldName} `))!;
  assert.equal(fresh.split(' ').slice(1).join(' '), `${replicas} ${replicas}`, sets.join('\n'));
  // Pods deleted before or after the kill finish terminating: only the new ReplicaSet's remain.
  const owners = async () =>
    (await kubectl(a, ['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].name}{"\\n"}{end}'])).stdout
      .split('\n')
      .filter(Boolean);
  await waitFor("only the new ReplicaSet's pods", async () => (await owners()).join() === Array(replicas).fill(fresh.split(' ')[0]).join(), 60_000);
  r = await kubectl(a, ['get', 'deploy', 'web', '-o', 'jsonpath={.status.replicas} {.status.updatedReplicas} {.status.availableReplicas}']);
  assert.equal(r.stdout, `${replicas} ${replicas} ${replicas}`);
});
