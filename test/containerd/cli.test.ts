// `podvisor run -f` with --runtime=containerd on manifests that name only images, as on a cluster:
// a web server with a readiness probe, a database-like server with a startup probe, and a job; then
// `podvisor images` lists what the runtime pulled.

import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

test('run -f: image-only pods reach Ready and Succeeded on containerd; images lists them', { skip }, async () => {
  const dir = await tempDir();
  try {
    const manifest = join(dir.path, 'pods.yaml');
    await writeFile(
      manifest,
      `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: httpd
    image: ${env.images.web}
    ports: [{containerPort: 8080}]
    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: server
    image: ${env.images.busybox}
    args: [sh, -c, 'sleep 1; touch /tmp/started; exec httpd -f -p 5432 -h /www']
    startupProbe: {exec: {command: [test, -f, /tmp/started]}, periodSeconds: 1, failureThreshold: 30}
    readinessProbe: {tcpSocket: {port: 5432}, periodSeconds: 1}
`,
    );
    const job = join(dir.path, 'job.yaml');
    await writeFile(
      job,
      `apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: Never
  containers:
  - name: work
    image: ${env.images.entrypoint}
    command: [sh, -c, 'echo done > /dev/termination-log']
`,
    );
    const common = ['--runtime=containerd', `--container-runtime-endpoint=${env.endpoint}`, `--root-dir=${join(dir.path, 'root')}`];
    const ready = await runCli(['run', '-f', manifest, '--wait=ready', ...common]);
    assert.equal(ready.code, 0, `${ready.stdout}\n${ready.stderr}`);
    assert.match(ready.stdout, /^web\s+1\/1\s+Running\s+0/m, ready.stdout);
    assert.match(ready.stdout, /^db\s+1\/1\s+Running\s+0/m, ready.stdout);

    const done = await runCli(['run', '-f', job, '--wait=completed', ...common, '-o', 'json']);
    assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
    const list = JSON.parse(done.stdout) as {
      items: Array<{
        kind: string;
        metadata: { name: string };
        status: { phase: string; containerStatuses: Array<{ state: { terminated: { message: string } } }> };
      }>;
    };
    const pod = list.items.find((i) => i.kind === 'Pod' && i.metadata.name === 'job')!;
    assert.equal(pod.status.phase, 'Succeeded');
    assert.equal(pod.status.containerStatuses[0]!.state.terminated.message, 'done\n');

    const images = await runCli(['images', `--container-runtime-endpoint=${env.endpoint}`]);
    assert.equal(images.code, 0, images.stderr);
    const lines = images.stdout.trim().split('\n');
    assert.match(lines[0]!, /^IMAGE\s+TAG\s+IMAGE ID\s+SIZE$/);
    for (const tag of ['web', 'busybox', 'entrypoint']) {
      assert.ok(
        lines.some((l) => new RegExp(`^${env.registry}/podvisor-test/${tag}\\s+v1\\s+[0-9a-f]{13}\\s+[0-9.]+[kM]?B$`).test(l)),
        images.stdout,
      );
    }
  } finally {
    await dir.remove();
  }
});
