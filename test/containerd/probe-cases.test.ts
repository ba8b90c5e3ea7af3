// The probe cases of test/kubelet (exec, httpGet, tcpSocket and gRPC liveness, readiness and
// startup probes through the pod worker), the same case file run unchanged on containerd, with one
// private containerd of their own so they run alongside the other lifecycle cases.

import { after, test } from 'node:test';
import { skipReason, startContainerd } from './harness.js';
import { runLifecycleCasesOn } from './kubelet.js';

const skip = await skipReason();
if (skip) {
  test('probe cases on containerd', { skip }, () => {});
} else {
  const env = await startContainerd();
  after(async () => {
    await env.stop();
  });
  runLifecycleCasesOn(env);
  await import('../kubelet/probes.test.js');
}
