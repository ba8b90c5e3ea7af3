// The pod-worker harness of test/kubelet over a private containerd: a PodKubelet on the CRI
// client, pods' images pointed at the test registry, and every pod killed when the harness closes.
// runLifecycleCasesOn makes the shared cases of test/kubelet run here as they do on host processes.

import { fileURLToPath } from 'node:url';
import type { Container, Pod } from '../../src/api/types.js';
import { connectCriRuntime } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { newHarness, runHarnessOn, type Harness } from '../kubelet/harness.js';
import type { ContainerdEnv } from './harness.js';

export type HarnessOptions = Parameters<typeof newHarness>[0];

/** The project's root: the cases' node containers load @grpc/grpc-js from its node_modules. */
const projectRoot = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');

/** `busybox`, `web`, … (a test image's tag) → its reference in env's registry; others unchanged. */
export function testImage(env: ContainerdEnv, image: string | undefined): string | undefined {
  return image && env.images[image] ? env.images[image] : image;
}

export function withTestImages(env: ContainerdEnv, pod: Pod): Pod {
  const fix = (cs: NonNullable<Pod['spec']>['containers'] | undefined) => cs?.map((c) => ({ ...c, image: testImage(env, c.image) }));
  return {
    ...pod,
    spec: { ...pod.spec!, containers: fix(pod.spec!.containers)!, ...(pod.spec!.initContainers ? { initContainers: fix(pod.spec!.initContainers) } : {}) },
  };
}

/**
 * A pod of the shared cases as containerd must run it to see what a host process sees: the host's
 * network (so 127.0.0.1 servers, the test's own and the containers', are the same on both sides),
 * and the host directories the case names mounted at the same paths (the harness's dir, where cases
 * keep marker files; the project, for node containers). `node` containers run the node image, which
 * holds the host's node binary at the same path.
 */
export function asOnTheHost(env: ContainerdEnv, pod: Pod, dir: string): Pod {
  const spec = pod.spec!;
  const all = [...spec.containers, ...(spec.initContainers ?? [])];
  const shared = [{ name: 'case-dir', path: dir, readOnly: false }];
  if (all.some((c) => c.image === 'node')) shared.push({ name: 'project', path: projectRoot, readOnly: true });
  const mount = (cs: Container[] | undefined) =>
    cs?.map((c) => ({ ...c, volumeMounts: [...(c.volumeMounts ?? []), ...shared.map((s) => ({ name: s.name, mountPath: s.path, readOnly: s.readOnly }))] }));
  const withImages = withTestImages(env, pod);
  return {
    ...withImages,
    spec: {
      ...withImages.spec!,
      hostNetwork: true,
      volumes: [...(spec.volumes ?? []), ...shared.map((s) => ({ name: s.name, hostPath: { path: s.path, type: 'Directory' } }))],
      containers: mount(withImages.spec!.containers)!,
      ...(withImages.spec!.initContainers ? { initContainers: mount(withImages.spec!.initContainers) } : {}),
    },
  };
}

/** Makes every newHarness of test/kubelet run its pods on env's containerd, as on the host. */
export function runLifecycleCasesOn(env: ContainerdEnv): void {
  runHarnessOn({
    name: 'containerd',
    create: () => connectCriRuntime({ endpoint: env.endpoint, logger: silentLogger, name: 'containerd' }),
    preparePod: (pod, { dir }) => asOnTheHost(env, pod, dir),
  });
}

/** A harness on env's containerd whose pods keep their own network and see no host directory. */
export async function newContainerdHarness(env: ContainerdEnv, opts: HarnessOptions = {}): Promise<Harness> {
  runHarnessOn({
    name: 'containerd',
    create: () => connectCriRuntime({ endpoint: env.endpoint, logger: silentLogger, name: 'containerd' }),
    preparePod: (pod) => withTestImages(env, pod),
  });
  try {
    return await newHarness(opts);
  } finally {
    runHarnessOn(undefined);
  }
}
