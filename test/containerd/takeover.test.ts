// kill -9 of `podvisor up --runtime=containerd`: containerd keeps the pods running, and `up` of the
// same manifests started again takes them over (PodKubelet.recover): the same sandboxes and
// container ids, no container restarted, probes resumed; then it stops them on SIGTERM.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';
import { waitFor } from '../fixtures/wait.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

const POD_NAMES = ['web', 'worker'];

function manifest(): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: httpd
    image: ${env.images.web}
    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
    livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: ${env.images.busybox}
    command: [sh, -c, 'touch /tmp/up; exec sleep 3600']
    readinessProbe: {exec: {command: [test, -f, /tmp/up]}, periodSeconds: 1}
`;
}

interface ListedPod {
  kind: string;
  metadata: { name: string };
  status: { podIP?: string; containerStatuses?: Array<{ containerID?: string; restartCount: number; ready: boolean; state: { running?: object } }> };
}

/** Running containers by pod name, as containerd lists them. */
async function running(client: CriRuntimeClient): Promise<Map<string, { id: string; sandbox: string }[]>> {
  const out = new Map<string, { id: string; sandbox: string }[]>();
  for (const c of await client.listContainers()) {
    if (c.state !== 'CONTAINER_RUNNING') continue;
    const pod = c.labels['io.kubernetes.pod.name'] ?? '';
    out.set(pod, [...(out.get(pod) ?? []), { id: c.id, sandbox: c.podSandboxId }]);
  }
  return out;
}

/** Whether up's status lines show every pod with all its containers ready. */
const allReady = (stderr: string) => POD_NAMES.every((n) => new RegExp(`^pod/${n}: Running, ready 1/1, restarts 0$`, 'm').test(stderr));

test('kill -9 of up: the next up takes the running containers over without restarting them', { skip }, async () => {
  const tmp = await tempDir();
  const client = new CriRuntimeClient({ endpoint: env.endpoint, logger: silentLogger });
  const file = join(tmp.path, 'pods.yaml');
  writeFileSync(file, manifest());
  const args = ['up', '-f', file, '--runtime=containerd', `--container-runtime-endpoint=${env.endpoint}`, '--root-dir', join(tmp.path, 'root'), '-o', 'json'];
  let up = startCli(args);
  try {
    await waitFor(`up reports both pods ready:\n${up.stderr()}`, () => allReady(up.stderr()), 60_000);
    const before = await running(client);
    for (const n of POD_NAMES) assert.equal(before.get(n)?.length, 1, `${n} runs one container: ${up.stderr()}`);

    up.child.kill('SIGKILL');
    await up.exited;
    // containerd holds the pods: nothing stops without the agent.
    assert.deepEqual(await running(client), before);

    up = startCli(args);
    await waitFor(`the next up reports both pods ready:\n${up.stderr()}`, () => allReady(up.stderr()), 60_000);
    assert.deepEqual(await running(client), before, 'the same containers run in the same sandboxes');
    assert.equal((await client.listContainers()).length, POD_NAMES.length, 'no container was created');

    up.child.kill('SIGTERM');
    const exit = await up.exited;
    assert.equal(exit.code, 0, up.stderr());
    const list = JSON.parse(up.stdout()) as { items: ListedPod[] };
    for (const n of POD_NAMES) {
      const pod = list.items.find((i) => i.kind === 'Pod' && i.metadata.name === n)!;
      const cs = pod.status.containerStatuses![0]!;
      assert.equal(cs.containerID, `containerd://${before.get(n)![0]!.id}`, `${n}: the same container`);
      assert.equal(cs.restartCount, 0);
      assert.equal(cs.ready, true, `${n}: probes resumed`);
      assert.ok(cs.state.running);
      assert.ok(pod.status.podIP?.startsWith(env.podCIDR.replace(/0\/24$/, '')), `${n}: pod IP kept`);
    }
    const adopted = list.items.filter((i) => i.kind === 'Event').map((e) => (e as unknown as { reason: string }).reason);
    assert.ok(!adopted.includes('Created') && !adopted.includes('Pulling'), `no container created, no image pulled: ${adopted.join(', ')}`);
    await waitFor('the pods stopped on SIGTERM', async () => (await running(client)).size === 0);
  } finally {
    up.child.kill('SIGKILL');
    await client.close();
    await tmp.remove();
  }
});
