// The API's Warning headers through the real kubectl, and what `podvisor apply` does with the same
// manifests, against a real `podvisor agent` on the process runtime: a workload whose template holds
// fields that runtime does not apply is created with a Warning per field (and so is its update), a
// workload whose template has a container without a command is created with a Warning naming the
// container and the fix, each pod that runs without the fields gets a Warning event, and
// `podvisor apply` refuses the template it cannot run before it applies anything (exit 2).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../fixtures/cli/cli-process.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

const why = 'not honoured by the process runtime: the process runtime runs host processes without namespaces or security profiles; use --runtime=containerd';
const fix =
  "the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd";

function deployment(name: string, container: string, replicas = 1): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext: {fsGroup: 2000}
      containers: [${container}]
`;
}

/** The `Warning: …` lines of kubectl's stderr. */
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('Warning: '));

test('create and update of a workload the process runtime runs without some fields: a Warning header per field, an event per pod', { skip }, async (t) => {
  const a = env.api(t);
  const file = join(env.dir, 'locked.yaml');
  const container = (image: string) =>
    `{name: web, image: ${image}, command: [sleep, "3600"], securityContext: {readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}}`;
  writeFileSync(file, deployment('locked', container('busybox')));
  let r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'deployment.apps/locked created\n');
  const expected = [
    `Warning: spec.template.spec.securityContext.fsGroup: ${why}`,
    `Warning: spec.template.spec.containers[0].securityContext.capabilities: ${why}`,
    `Warning: spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem: ${why}`,
  ];
  assert.deepEqual(warnings(r.stderr), expected);

  // An update (kubectl apply patches) is told the same.
  writeFileSync(file, deployment('locked', container('busybox:1.36')));
  r = await kubectl(a, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'deployment.apps/locked configured\n');
  assert.deepEqual(warnings(r.stderr), expected);

  // Each pod that runs without them says so in a Warning event.
  let events = '';
  await waitFor(
    "a Warning event Unsupported on the Deployment's pod for each field",
    async () => {
      events = (
        await kubectl(a, [
          'get',
          'events',
          '--field-selector',
          'reason=Unsupported,involvedObject.kind=Pod',
          '-o',
          'jsonpath={range .items[*]}{.type} {.involvedObject.name} {.message}{"\\n"}{end}',
        ])
      ).stdout;
      return events.split('\n').filter((l) => l.includes('readOnlyRootFilesystem')).length >= 1;
    },
    60_000,
  );
  const firstPod = /^Warning (locked-[a-z0-9]+-[a-z0-9]+) /.exec(events)?.[1];
  assert.ok(firstPod, events);
  const ofPod = events.split('\n').filter((l) => l.startsWith(`Warning ${firstPod} `));
  assert.deepEqual(
    ofPod.map((l) => l.slice(`Warning ${firstPod} `.length)),
    [
      `spec.securityContext.fsGroup: ${why}`,
      `spec.containers[0].securityContext.capabilities: ${why}`,
      `spec.containers[0].securityContext.readOnlyRootFilesystem: ${why}`,
    ],
  );
  r = await kubectl(a, ['delete', 'deployment', 'locked', '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
});

test(
  'a workload whose container has no command: a Warning header naming it and the fix through kubectl; podvisor apply refuses it, applying nothing',
  { skip },
  async (t) => {
    const a = env.api(t);
    const file = join(env.dir, 'entrypoint.yaml');
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: entrypoint-settings}\ndata: {a: "1"}\n---\n';
    writeFileSync(file, cm + deployment('entrypoint', '{name: web, image: nginx:1.25}, {name: side, image: busybox, command: [sleep, "9"]}', 0));

    const refused = await runCli(['apply', '-f', file, '--root-dir', env.root]);
    assert.deepEqual(
      [refused.code, refused.stdout, refused.stderr],
      [2, '', `The Deployment "entrypoint" is invalid: spec.template.spec.containers[0].command: Required value: container "web" has no command: ${fix}\n`],
    );
    let r = await kubectl(a, ['get', 'configmap,deployment', '-o', 'name']);
    assert.doesNotMatch(r.stdout, /entrypoint/, 'nothing of the refused manifests was applied');

    r = await kubectl(a, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(warnings(r.stderr), [
      `Warning: spec.template.spec.containers[0].command: Required value: container "web" has no command: ${fix}`,
      `Warning: spec.template.spec.securityContext.fsGroup: ${why}`,
    ]);
    r = await kubectl(a, ['delete', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
  },
);

test('podvisor apply prints the Warning headers the agent sends, each with the object it is about', { skip }, async () => {
  const file = join(env.dir, 'by-podvisor.yaml');
  writeFileSync(file, deployment('by-podvisor', '{name: web, image: busybox, command: [sleep, "9"]}', 0));
  const r = await runCli(['apply', '-f', file, '--root-dir', env.root]);
  assert.deepEqual(
    [r.code, r.stdout, r.stderr],
    [0, 'deployment.apps/by-podvisor created\n', `Warning: deployment.apps/by-podvisor: spec.template.spec.securityContext.fsGroup: ${why}\n`],
  );
});
