// The pod-worker cases of test/kubelet (restart policies and CrashLoopBackOff, the back-off
// schedule, hooks, init containers and sidecars, termination), the same case files run unchanged on
// containerd: one private containerd for them all (see runLifecycleCasesOn for how a pod is made to
// see what a host process sees). Cases that cannot apply to containerd say why in their own file.

import { after, test } from 'node:test';
import { skipReason, startContainerd } from './harness.js';
import { runLifecycleCasesOn } from './kubelet.js';

const skip = await skipReason();
if (skip) {
  test('lifecycle cases on containerd', { skip }, () => {});
} else {
  const env = await startContainerd();
  after(async () => {
    await env.stop();
  });
  runLifecycleCasesOn(env);
  await import('../kubelet/restart-policy.test.js');
  await import('../kubelet/backoff-worker.test.js');
  await import('../kubelet/hooks.test.js');
  await import('../kubelet/init-sidecar.test.js');
  await import('../kubelet/termination.test.js');
}
