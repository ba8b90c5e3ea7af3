// The pod-worker harness of test/lifecycle over a private containerd: a PodKubelet on the CRI
// client, pods' images pointed at the test registry, and every pod killed when the harness closes.

import type { Pod } from '../../src/api/types.js';
import { connectCriRuntime } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { newHarness, type Harness } from '../lifecycle/harness.js';
import type { ContainerdEnv } from './harness.js';

export type HarnessOptions = Parameters<typeof newHarness>[0];

/** `busybox`, `web`, … (a test image's tag) → its reference in env's registry; others unchanged. */
export function testImage(env: ContainerdEnv, image: string | undefined): string | undefined {
  return image && env.images[image] ? env.images[image] : image;
}

export function withTestImages(env: ContainerdEnv, pod: Pod): Pod {
  const fix = (cs: NonNullable<Pod['spec']>['containers'] | undefined) => cs?.map((c) => ({ ...c, image: testImage(env, c.image) }));
  return { ...pod, spec: { ...pod.spec!, containers: fix(pod.spec!.containers)!, ...(pod.spec!.initContainers ? { initContainers: fix(pod.spec!.initContainers) } : {}) } };
}

export async function newContainerdHarness(env: ContainerdEnv, opts: HarnessOptions = {}): Promise<Harness> {
  const runtime = await connectCriRuntime({ endpoint: env.endpoint, logger: silentLogger });
  const h = newHarness({ ...opts, runtime });
  const start = h.kubelet.startPod.bind(h.kubelet);
  h.kubelet.startPod = (pod: Pod) => {
    const fixed = withTestImages(env, pod);
    // Tests keep their pod objects: the images they name are rewritten in place.
    Object.assign(pod, { spec: fixed.spec });
    start(pod);
  };
  const close = h.close;
  h.close = async () => {
    await h.kubelet.terminateAll({ gracePeriodSeconds: 0 }).catch(() => {});
    await close();
  };
  return h;
}
