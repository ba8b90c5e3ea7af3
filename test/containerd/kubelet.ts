// The pod-worker harness of test/lifecycle over a private containerd: a PodKubelet on the CRI
// client, pods' images pointed at the test registry, and every pod killed when the harness closes.

import type { Pod } from '../../src/api/types.js';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { newHarness, runHarnessOn, type Harness } from '../lifecycle/harness.js';
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

/** Makes every newHarness of test/lifecycle run its pods on env's containerd. */
export function runLifecycleCasesOn(env: ContainerdEnv): void {
  runHarnessOn({
    create: () => new CriRuntimeClient({ endpoint: env.endpoint, logger: silentLogger, name: 'containerd' }),
    preparePod: (pod) => withTestImages(env, pod),
  });
}

export async function newContainerdHarness(env: ContainerdEnv, opts: HarnessOptions = {}): Promise<Harness> {
  runLifecycleCasesOn(env);
  try {
    return newHarness(opts);
  } finally {
    runHarnessOn(undefined);
  }
}
