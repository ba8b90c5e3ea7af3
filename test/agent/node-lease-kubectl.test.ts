// The node's heartbeat Lease of a real `podvisor agent`, read by the real kubectl: `kubectl get
// lease -n kube-node-lease` lists it (NAME HOLDER AGE), `kubectl describe node` prints its holder and
// renew time — no "Failed to get lease" — with kubectl 1.32 (protobuf) and 1.20 alike, and its
// renewTime moves on as the agent renews it (every 10 s).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { runCli } from '../fixtures/cli/cli-process.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);
const kubectl120 = ['/work/kubectl120/root/usr/bin/kubectl', process.env.KUBECTL ?? ''].find((p) => p.includes('120') && existsSync(p));

test('the node Lease is served, listed and described; kubectl describe node finds it', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  const list = await kubectl(a, ['get', 'leases', '-n', 'kube-node-lease']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^NAME +HOLDER +AGE\\n${node} +${node} +\\S+\\n$`));
  const ours = await runCli(['get', 'lease', '-n', 'kube-node-lease', '--root-dir', env.root]);
  assert.match(ours.stdout, new RegExp(`^NAME +HOLDER +AGE\\n${node} +${node} +\\S+\\n$`));
  const owner = await kubectl(a, [
    'get',
    'lease',
    node,
    '-n',
    'kube-node-lease',
    '-o',
    'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.spec.leaseDurationSeconds}',
  ]);
  assert.equal(owner.stdout, `Node/${node} 40`);
  for (const bin of [kubectl132Path, kubectlPath, kubectl120].filter((b): b is string => Boolean(b))) {
    const r = await runKubectl(bin, a, ['describe', 'node', node]);
    assert.equal(r.code, 0, `${bin}: ${r.stderr}`);
    assert.doesNotMatch(r.stdout + r.stderr, /Failed to get lease/, bin);
    assert.match(r.stdout, new RegExp(`\\nLease:\\n  HolderIdentity:  ${node}\\n  AcquireTime:     <unset>\\n  RenewTime:       \\S`), bin);
  }
});

test('the agent renews the Lease: renewTime moves on', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  const renewTime = async () => (await kubectl(a, ['get', 'lease', node, '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}'])).stdout;
  const first = await renewTime();
  assert.match(first, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const next = await waitFor('a renewal', async () => ((await renewTime()) > first ? renewTime() : false), 40_000);
  assert.ok(Date.parse(next) - Date.parse(first) >= 9_000, `${first} → ${next}`);
});
