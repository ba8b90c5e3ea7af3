// `podvisor validate --runtime=process,containerd`: each pod judged by the runtime of its
// RuntimeClass — a pod of class process by the process runtime's rules (no volumeMounts), any other
// by containerd's (no command needed) — and a RuntimeClass of the manifests validated beside them.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';

const manifests = (mounts: string) => `apiVersion: v1
kind: Pod
metadata: {name: dev}
spec:
  runtimeClassName: process
  volumes: [{name: v, emptyDir: {}}]
  containers: [{name: c, image: busybox, command: [sleep, "1"]${mounts}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: c, image: redis}]
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
`;

test('validate --runtime=process,containerd judges each pod by its RuntimeClass', async (t) => {
  const dir = await tempDir();
  t.after(() => dir.remove());
  const file = join(dir.path, 'm.yaml');
  writeFileSync(file, manifests(''));
  const ok = await runCli(['validate', '--runtime=process,containerd', '-f', file]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, 'runtimeclass.node.k8s.io/gvisor validated\npod/dev validated\npod/db validated\n');
  writeFileSync(file, manifests(', volumeDevices: [{name: v, devicePath: /dev/x}]'));
  const bad = await runCli(['validate', '--runtime=process,containerd', '-f', file]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /The Pod "dev" is invalid: spec\.containers\[0\]\.volumeDevices: Forbidden: block devices are not supported by the process runtime/);
  assert.doesNotMatch(bad.stderr, /"db"/);
});
