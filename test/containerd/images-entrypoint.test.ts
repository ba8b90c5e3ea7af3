// containerd: images and how their entrypoint and cmd combine with command and args, image pulls
// with and without credentials, and the waiting reasons of pulls that fail.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Secret } from '../../src/api/types.js';
import { readContainerLog } from '../../src/runtime/logs/reader.js';
import { containerStatus, describe, eventsOf, makePod, statusOf, waitFor } from '../kubelet/harness.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';
import { newContainerdHarness } from './kubelet.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

test('a pod without command runs its image entrypoint and cmd; args and command replace them as in Kubernetes', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const pod = makePod('entry', [
      { name: 'plain', image: 'entrypoint' },
      { name: 'args', image: 'entrypoint', args: ['mine-1', 'mine-2'] },
      { name: 'command', image: 'entrypoint', command: ['sh', '-c', 'echo "own command in $(pwd)"; exec sleep 3600'] },
    ]);
    h.kubelet.startPod(pod);
    await waitFor(
      () => `plain, args and command running: ${describe(h, pod)}`,
      () => ['plain', 'args', 'command'].every((n) => containerStatus(h, pod, n)?.state?.running),
    );
    const status = statusOf(h, pod)!;
    assert.match(status.podIP ?? '', /^10\.123\./, describe(h, pod));
    const lines = async (name: string) => {
      const cs = containerStatus(h, pod, name)!;
      assert.match(cs.containerID ?? '', /^containerd:\/\//);
      assert.match(cs.imageID ?? '', /sha256:[0-9a-f]{64}/);
      const path = `${h.dir}/pods/default_entry_${pod.metadata!.uid}/${name}/0.log`;
      return waitFor(`log of ${name}`, async () => (await readContainerLog(path).catch(() => [])).join('\n'));
    };
    assert.equal(await lines('plain'), 'argv: img-cmd-1 img-cmd-2');
    assert.equal(await lines('args'), 'argv: mine-1 mine-2');
    assert.equal(await lines('command'), 'own command in /www');
    const pulled = eventsOf(h, pod, 'Pulled').map((e) => e.message ?? '');
    assert.ok(
      pulled.some((m) => /^Successfully pulled image ".*entrypoint:v1" in .* \(.* including waiting\)\. Image size: \d+ bytes\.$/.test(m)),
      pulled.join('\n'),
    );
  } finally {
    await h.close();
  }
});

function dockerConfigSecret(name: string, registry: string, user: string, password: string): Secret {
  const auth = Buffer.from(`${user}:${password}`).toString('base64');
  const json = JSON.stringify({ auths: { [`http://${registry}`]: { auth } } });
  return {
    apiVersion: 'v1' as const,
    kind: 'Secret' as const,
    type: 'kubernetes.io/dockerconfigjson',
    metadata: { name, namespace: 'default' },
    data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
  };
}

test('a registry with authentication: pulled with imagePullSecrets, refused without (ErrImagePull, then ImagePullBackOff)', { skip }, async () => {
  const secret = dockerConfigSecret('regcred', env.authRegistry, env.authUser, env.authPassword);
  const h = await newContainerdHarness(env, { secrets: [secret] });
  try {
    const image = `${env.authRegistry}/podvisor-test/busybox:v1`;
    const withSecret = makePod('auth-ok', [{ name: 'app', image, command: ['sleep', '3600'] }], { imagePullSecrets: [{ name: 'regcred' }] });
    // Always: the image pulled for the first pod is on the node, and IfNotPresent would take it.
    const without = makePod('auth-none', [{ name: 'app', image, imagePullPolicy: 'Always', command: ['sleep', '3600'] }]);
    h.kubelet.startPod(withSecret);
    await waitFor(
      () => `the pod with the pull secret running: ${describe(h, withSecret)}`,
      () => containerStatus(h, withSecret, 'app')?.state?.running,
    );
    h.kubelet.startPod(without);
    const failed = await waitFor(
      () => `ErrImagePull without the pull secret: ${describe(h, without)}`,
      () => {
        const w = containerStatus(h, without, 'app')?.state?.waiting;
        return w?.reason === 'ErrImagePull' ? w : undefined;
      },
    );
    assert.match(failed.message ?? '', /401|unauthorized|authoriz/i, describe(h, without));
    assert.equal(eventsOf(h, without, 'Failed')[0]?.message?.startsWith(`Failed to pull image "${image}": `), true, describe(h, without));
    // The next sync comes within the image back-off: no pull, ImagePullBackOff.
    await h.kubelet.syncPod(without.metadata!.uid!);
    const w = containerStatus(h, without, 'app')?.state?.waiting;
    assert.equal(w?.reason, 'ImagePullBackOff', describe(h, without));
    assert.equal(w?.message, `Back-off pulling image "${image}"`);
    assert.equal(eventsOf(h, without, 'BackOff')[0]?.message, `Back-off pulling image "${image}"`);
    assert.deepEqual(
      eventsOf(h, without, 'Failed').map((e) => e.message),
      [eventsOf(h, without, 'Failed')[0]!.message, 'Error: ErrImagePull', 'Error: ImagePullBackOff'],
    );
  } finally {
    await h.close();
  }
});

test(
  'a missing image: ErrImagePull then ImagePullBackOff; Never without the image: ErrImageNeverPull; a malformed name: InvalidImageName',
  { skip },
  async () => {
    const h = await newContainerdHarness(env);
    try {
      const missing = `${env.registry}/podvisor-test/nothing-here:v1`;
      const pod = makePod('missing', [{ name: 'app', image: missing, command: ['true'] }]);
      const never = makePod('never', [{ name: 'app', image: `${env.registry}/podvisor-test/web:absent`, imagePullPolicy: 'Never', command: ['true'] }]);
      const invalid = makePod('invalid', [{ name: 'app', image: 'Not/A..Valid:image', command: ['true'] }]);
      for (const p of [pod, never, invalid]) h.kubelet.startPod(p);
      const w1 = await waitFor(
        () => `ErrImagePull: ${describe(h, pod)}`,
        () => {
          const w = containerStatus(h, pod, 'app')?.state?.waiting;
          return w?.reason === 'ErrImagePull' ? w : undefined;
        },
      );
      assert.match(w1.message ?? '', /not found/, describe(h, pod));
      assert.equal(statusOf(h, pod)?.phase, 'Pending');
      await h.kubelet.syncPod(pod.metadata!.uid!);
      assert.equal(containerStatus(h, pod, 'app')?.state?.waiting?.reason, 'ImagePullBackOff', describe(h, pod));
      assert.equal(eventsOf(h, pod, 'Pulling').length, 1, 'no second pull inside the back-off');

      const waiting = (p: typeof pod, reason: string) => {
        const w = containerStatus(h, p, 'app')?.state?.waiting;
        return w?.reason === reason ? w : undefined;
      };
      const wn = await waitFor(
        () => `ErrImageNeverPull: ${describe(h, never)}`,
        () => waiting(never, 'ErrImageNeverPull'),
      );
      assert.equal(wn.message, `Container image "${env.registry}/podvisor-test/web:absent" is not present with pull policy of Never`);
      const wi = await waitFor(
        () => `InvalidImageName: ${describe(h, invalid)}`,
        () => waiting(invalid, 'InvalidImageName'),
      );
      assert.match(wi.message ?? '', /^Failed to apply default image tag "Not\/A\.\.Valid:image": couldn't parse image name/);
    } finally {
      await h.close();
    }
  },
);
