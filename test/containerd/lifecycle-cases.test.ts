// The pod-worker cases of test/lifecycle that need nothing of the host (restart policies and
// CrashLoopBackOff), run unchanged on containerd.

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
  await import('../lifecycle/restart-policy.test.js');
}
