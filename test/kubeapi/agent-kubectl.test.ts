// kubectl 1.20 against a real `podvisor agent` over TLS and its token, with the kubeconfig the agent
// writes: apply, get, logs, exec (exit code 7 passed through) and delete of a real pod.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath, until } from './harness.js';

test('kubectl drives a real agent with the kubeconfig it writes', { skip: kubectlPath ? false : 'kubectl is not installed' }, async () => {
  const dir = await tempDir();
  const root = dir.path;
  const agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
  await agent.waitFor('stderr', /podvisor agent started/);
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: root };
  try {
    const file = join(root, 'pod.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox\n    command: ["/bin/sh", "-c", "echo hello; exec sleep 300"]\n',
    );
    let r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod\/web created/);
    await until(async () => /web\s+1\/1\s+Running/.test((await kubectl(api, ['get', 'pods'])).stdout), 'the pod to run', 60_000);
    await until(async () => (await kubectl(api, ['logs', 'web'])).stdout === 'hello\n', 'the log line', 30_000);
    r = await kubectl(api, ['exec', 'web', '--', 'sh', '-c', 'echo in; exit 7']);
    assert.equal(r.stdout, 'in\n');
    assert.equal(r.code, 7);
    r = await kubectl(api, ['delete', 'pod', 'web']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod "web" deleted/);
  } finally {
    if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  }
});
