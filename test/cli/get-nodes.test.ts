// `podvisor get nodes` against a real agent, beside the real kubectl: the kinds the CLI takes are the
// API's own, so the Node is reached by all of kubectl's names, with kubectl's columns (NAME STATUS
// ROLES AGE VERSION; -o wide adds the addresses, OS image, kernel and container runtime), -o json and
// yaml, by name, and across namespaces without a NAMESPACE column (the kind is cluster-scoped).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../fixtures/cli/cli-process.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip, ['--node-labels', 'node-role.kubernetes.io/edge=']);

/** A table with its AGE column blanked (two reads a second apart may differ there). */
function withoutAge(out: string): string {
  const lines = out.split('\n');
  const at = lines[0]!.indexOf('AGE');
  return lines.map((l) => l.slice(0, at) + l.slice(at).replace(/^\S+/, '')).join('\n');
}

test('podvisor get nodes prints what kubectl get nodes prints', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  assert.ok(node);
  for (const args of [['nodes'], ['node', node], ['no', '-o', 'wide'], [`node/${node}`, '-o', 'wide'], ['nodes', '-A']]) {
    const ours = await runCli(['get', ...args, '--root-dir', env.root]);
    assert.equal(ours.code, 0, ours.stderr);
    const theirs = await kubectl(a, ['get', ...args]);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.equal(withoutAge(ours.stdout), withoutAge(theirs.stdout), args.join(' '));
  }
  const wide = await runCli(['get', 'nodes', '-o', 'wide', '--root-dir', env.root]);
  assert.match(wide.stdout, /^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME\n/);
  assert.match(wide.stdout, new RegExp(`\\n${node} +Ready +edge +\\S+ +\\S+ +\\S+`));
});

test('podvisor get node -o json|yaml|name: the object, as kubectl prints it', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  const json = await runCli(['get', 'node', node, '-o', 'json', '--root-dir', env.root]);
  assert.equal(json.code, 0, json.stderr);
  const obj = JSON.parse(json.stdout) as { kind: string; apiVersion: string; metadata: { name: string } };
  assert.deepEqual([obj.kind, obj.apiVersion, obj.metadata.name], ['Node', 'v1', node]);
  const list = await runCli(['get', 'nodes', '-o', 'yaml', '--root-dir', env.root]);
  assert.match(list.stdout, new RegExp(`^apiVersion: v1\\nitems:\\n- apiVersion: v1\\n  kind: Node\\n[^]*    name: ${node}\\n[^]*\\nkind: List\\n`));
  const names = await runCli(['get', 'nodes', '-o', 'name', '--root-dir', env.root]);
  assert.equal(names.stdout, `node/${node}\n`);
  const missing = await runCli(['get', 'node', 'nosuch', '--root-dir', env.root]);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): nodes "nosuch" not found\n');
  const unknown = await runCli(['get', 'widgets', '--root-dir', env.root]);
  assert.equal(unknown.stderr, 'error: the server doesn\'t have a resource type "widgets"\n');
});
