// node.k8s.io/v1 RuntimeClasses on a real `podvisor agent` driven by the real kubectl (1.20 and, where
// installed, 1.32, which sends them as protobuf): the built-in class `process`, created from a file,
// printed with `kubectl get runtimeclass`'s columns (NAME HANDLER AGE), refused with the API server's
// validation (handler a DNS label, immutable), and the RuntimeClass admission plugin on pods: an
// unknown class refused with upstream's message, a class's overhead and scheduling set into the pod.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };

function file(name: string, yaml: string): string {
  const f = join(env.dir, `${name}.yaml`);
  writeFileSync(f, yaml);
  return f;
}

const fast = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: fast}
handler: process
overhead:
  podFixed: {cpu: 100m, memory: 16Mi}
scheduling:
  nodeSelector: {kubernetes.io/os: linux}
  tolerations: [{key: dedicated, operator: Equal, value: dev, effect: NoSchedule}]
`;

for (const [label, bin] of [
  ['kubectl', kubectlPath],
  ['kubectl 1.32', kubectl132Path],
] as const) {
  const run = (a: Api, args: string[]) => runKubectl(bin!, a, args);
  test(
    `${label}: get runtimeclass lists the built-in process class; create -f, get (NAME HANDLER AGE), -o json`,
    { skip: skip || (bin ? false : `${label} is not installed`) },
    async (t) => {
      const a = env.api(t);
      const name = label === 'kubectl' ? 'fast' : 'fast132';
      const created = await run(a, ['create', '-f', file(name, fast.replace('name: fast', `name: ${name}`))]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stdout, `runtimeclass.node.k8s.io/${name} created\n`);
      const got = await run(a, ['get', 'runtimeclass']);
      assert.equal(got.code, 0, got.stderr);
      const lines = got.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, /^NAME\s+HANDLER\s+AGE$/);
      assert.ok(
        lines.some((l) => /^process\s+process\s+\S+$/.test(l)),
        got.stdout,
      );
      assert.ok(
        lines.some((l) => new RegExp(`^${name}\\s+process\\s+\\S+$`).test(l)),
        got.stdout,
      );
      const json = await run(a, ['get', 'runtimeclass', name, '-o', 'json']);
      assert.equal(json.code, 0, json.stderr);
      const rc = JSON.parse(json.stdout) as { apiVersion: string; kind: string; handler: string; overhead: unknown; scheduling: { tolerations: unknown[] } };
      assert.equal(rc.apiVersion, 'node.k8s.io/v1');
      assert.equal(rc.kind, 'RuntimeClass');
      assert.equal(rc.handler, 'process');
      assert.deepEqual(rc.overhead, { podFixed: { cpu: '100m', memory: '16Mi' } });
      assert.equal(rc.scheduling.tolerations.length, 1);
      const del = await run(a, ['delete', 'runtimeclass', name]);
      assert.equal(del.code, 0, del.stderr);
    },
  );
}

test('validation as the API server: a handler that is not a DNS label, and a handler changed', { skip }, async (t) => {
  const a = env.api(t);
  const bad = await kubectl(a, ['create', '-f', file('bad', 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: bad}\nhandler: Not_A_Label\n')]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /The RuntimeClass "bad" is invalid: handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character/,
  );
  const ok = await kubectl(a, ['create', '-f', file('imm', 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: imm}\nhandler: runc\n')]);
  assert.equal(ok.code, 0, ok.stderr);
  const changed = await kubectl(a, ['patch', 'runtimeclass', 'imm', '--type=merge', '-p', '{"handler":"process"}']);
  assert.equal(changed.code, 1);
  assert.match(changed.stderr, /The RuntimeClass "imm" is invalid: handler: Invalid value: "process": field is immutable/);
});

test('RuntimeClass admission: an unknown class is Forbidden; a class sets the pod overhead, nodeSelector and tolerations', { skip }, async (t) => {
  const a = env.api(t);
  const pod = (name: string, rc: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  runtimeClassName: ${rc}\n  terminationGracePeriodSeconds: 1\n  containers: [{name: main, image: busybox, command: [sleep, "300"]}]\n`;
  const missing = await kubectl(a, ['create', '-f', file('p-missing', pod('p-missing', 'nothere'))]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /Error from server \(Forbidden\).*pods "p-missing" is forbidden: pod rejected: RuntimeClass "nothere" not found/);

  const rc = await kubectl(a, ['create', '-f', file('withsched', fast.replace('name: fast', 'name: withsched'))]);
  assert.equal(rc.code, 0, rc.stderr);
  const created = await kubectl(a, ['create', '-f', file('p-fast', pod('p-fast', 'withsched'))]);
  assert.equal(created.code, 0, created.stderr);
  const got = await kubectl(a, ['get', 'pod', 'p-fast', '-o', 'json']);
  const spec = (JSON.parse(got.stdout) as { spec: { overhead: unknown; nodeSelector: unknown; tolerations: Array<{ key?: string }> } }).spec;
  assert.deepEqual(spec.overhead, { cpu: '100m', memory: '16Mi' });
  assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
  assert.ok(spec.tolerations.some((x) => x.key === 'dedicated'));
  await kubectl(a, ['delete', 'pod', 'p-fast', '--grace-period=0', '--force']);
});
