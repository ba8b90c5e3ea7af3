// containerd: images and how their entrypoint and cmd combine with command and args, image pulls
// with and without credentials, and the waiting reasons of pulls that fail.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readContainerLog } from '../../src/runtime/logs/reader.js';
import { containerStatus, describe, eventsOf, makePod, statusOf, waitFor } from '../lifecycle/harness.js';
import { skipReason, startContainerd, type ContainerdEnv } from './harness.js';
import { newContainerdHarness } from './kubelet.js';

const skip = await skipReason();
let env: ContainerdEnv;
before(async () => {
  if (!skip) env = await startContainerd();
});
after(async () => {
  await env?.stop();
});

test('a pod without command runs its image entrypoint and cmd; args and command replace them as in Kubernetes', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const pod = makePod('entry', [
      { name: 'plain', image: 'entrypoint' },
      { name: 'args', image: 'entrypoint', args: ['mine-1', 'mine-2'] },
      { name: 'command', image: 'entrypoint', command: ['sh', '-c', 'echo "own command in $(pwd)"; exec sleep 3600'] },
    ]);
    h.kubelet.startPod(pod);
    await waitFor(() => ['plain', 'args', 'command'].every((n) => containerStatus(h, pod, n)?.state?.running), () => describe(h, pod));
    const status = statusOf(h, pod)!;
    assert.match(status.podIP ?? '', /^10\.123\./, describe(h, pod));
    const lines = async (name: string) => {
      const cs = containerStatus(h, pod, name)!;
      assert.match(cs.containerID ?? '', /^containerd:\/\//);
      assert.match(cs.imageID ?? '', /sha256:[0-9a-f]{64}/);
      const path = `${h.dir}/pods/default_entry_${pod.metadata!.uid}/${name}/0.log`;
      return waitFor(async () => (await readContainerLog(path).catch(() => [])).join('\n'), `log of ${name}`);
    };
    assert.equal(await lines('plain'), 'argv: img-cmd-1 img-cmd-2');
    assert.equal(await lines('args'), 'argv: mine-1 mine-2');
    assert.equal(await lines('command'), 'own command in /www');
    const pulled = eventsOf(h, pod, 'Pulled').map((e) => e.message ?? '');
    assert.ok(pulled.some((m) => /^Successfully pulled image ".*entrypoint:v1" in .* \(.* including waiting\)\. Image size: \d+ bytes\.$/.test(m)), pulled.join('\n'));
  } finally {
    await h.close();
  }
});
