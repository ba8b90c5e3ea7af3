// What the command line does with manifests the runtime cannot run as written, and with manifests
// as a directory of a repository holds them, through the built executable and a real agent:
// `up`, `run`, `up -d` and `apply` refuse a workload template with a container the process runtime cannot
// start (no command) before anything starts, exit 2, naming each container and the fix; `apply` and
// `up -d` apply two documents of one kind and name in turn and a Job by its generateName, as kubectl
// apply does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentRequest } from '../../src/cli/agent-client.js';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';

const fix =
  "the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd";

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.25}, {name: side, image: busybox, command: [sleep, "9"]}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: logs}
spec:
  selector: {matchLabels: {app: logs}}
  template:
    metadata: {labels: {app: logs}}
    spec:
      initContainers: [{name: prepare, image: busybox}]
      containers: [{name: ship, image: busybox, command: [sleep, "9"]}]
`;

test('up, run, up -d and apply refuse a workload template the process runtime cannot run, before anything starts, exit 2', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'app.yaml');
  writeFileSync(file, deployment);
  try {
    const want =
      `The Deployment "web" is invalid: spec.template.spec.containers[0].command: Required value: container "web" has no command: ${fix}\n` +
      `The DaemonSet "logs" is invalid: spec.template.spec.initContainers[0].command: Required value: container "prepare" has no command: ${fix}\n`;
    for (const command of [['up', '--runtime=process'], ['run', '--runtime=process'], ['up', '-d', '--runtime=process'], ['apply']]) {
      const r = await runCli([...command, '-f', file, '--root-dir', root]);
      assert.deepEqual([r.code, r.stdout, r.stderr], [2, '', want], command.join(' '));
    }
    assert.equal(existsSync(join(root, 'agent.log')), false, 'no agent was started');
  } finally {
    await tmp.remove();
  }
});

test('apply and up -d of a directory with one object twice apply it in turn (the last one wins); a Job by its generateName', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const dir = join(tmp.path, 'k8s');
  mkdirSync(dir);
  const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: "${v}"}\n`;
  writeFileSync(join(dir, 'a-settings.yaml'), cm('dev'));
  writeFileSync(join(dir, 'b-settings.yaml'), cm('prod'));
  writeFileSync(
    join(dir, 'c-hook.yaml'),
    'apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: hook-}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox, command: ["true"]}]\n',
  );
  const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);
  const twice = 'Warning: configmap/settings is defined more than once: each is applied in turn, the last one wins\n';
  try {
    const applied = await cli('apply', '-f', dir);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /^configmap\/settings created\nconfigmap\/settings configured\njob\.batch\/hook-[a-z0-9]{5} created\n$/);
    assert.ok(applied.stderr.includes(twice), applied.stderr);
    const mode = async () => (await agentRequest(root, 'GET', '/api/v1/namespaces/default/configmaps/settings')).json<{ data: { mode: string } }>().data.mode;
    assert.equal(await mode(), 'prod');

    writeFileSync(join(dir, 'a-settings.yaml'), cm('dev2'));
    const up = await cli('up', '-d', '-f', dir);
    assert.equal(up.code, 0, up.stderr);
    assert.ok(up.stderr.includes(twice), up.stderr);
    assert.equal(await mode(), 'prod');
  } finally {
    await cli('down', '--all', '--agent', '--grace-period', '0');
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
