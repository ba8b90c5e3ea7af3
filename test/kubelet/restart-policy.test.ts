// Restart policies × exit codes with real processes (§8.1, §9): restartCount, phase, state and
// lastState; and CrashLoopBackOff in real time with a 1 s cap (§8.2).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerStatus, describe, eventsOf, makePod, newHarness, sh, statusOf, waitFor, withPods } from './harness.js';

test('restart policy × exit code', async () => {
  const h = await newHarness({ crashLoopBackOffMaxSeconds: 1 });
  const cases = [
    { policy: 'Always', code: 0 },
    { policy: 'Always', code: 1 },
    { policy: 'OnFailure', code: 0 },
    { policy: 'OnFailure', code: 1 },
    { policy: 'Never', code: 0 },
    { policy: 'Never', code: 1 },
  ].map((c) => ({ ...c, pod: makePod(`${c.policy.toLowerCase()}-${c.code}`, [sh('app', `exit ${c.code}`)], { restartPolicy: c.policy }) }));

  await withPods(
    h,
    cases.map((c) => c.pod),
    async () => {
      await Promise.all(
        cases.map(async ({ policy, code, pod }) => {
          const restarts = policy === 'Always' || (policy === 'OnFailure' && code !== 0);
          if (restarts) {
            // Restarted: the previous run shows as lastState, the pod stays Running.
            const cs = await waitFor(
              () => `${policy}/${code} restarts: ${describe(h, pod)}`,
              () => {
                const c = containerStatus(h, pod, 'app');
                return c && c.restartCount >= 2 && c.lastState?.terminated ? c : undefined;
              },
            );
            assert.equal(cs.lastState!.terminated!.exitCode, code);
            assert.equal(cs.lastState!.terminated!.reason, code === 0 ? 'Completed' : 'Error');
            assert.equal(statusOf(h, pod)!.phase, 'Running');
          } else {
            const phase = code === 0 ? 'Succeeded' : 'Failed';
            await waitFor(
              () => `${policy}/${code} ${phase}: ${describe(h, pod)}`,
              () => statusOf(h, pod)?.phase === phase,
            );
            const cs = containerStatus(h, pod, 'app')!;
            assert.equal(cs.restartCount, 0);
            assert.equal(cs.state?.terminated?.exitCode, code);
            assert.equal(cs.state?.terminated?.reason, code === 0 ? 'Completed' : 'Error');
            assert.deepEqual(cs.lastState, {});
            assert.equal(eventsOf(h, pod, 'Started').length, 1, 'started once');
          }
        }),
      );
    },
  );
});

test('a crashing container goes into CrashLoopBackOff (cap 1 s)', async () => {
  const h = await newHarness({ crashLoopBackOffMaxSeconds: 1 });
  const pod = makePod('crasher', [sh('app', 'echo boom; exit 3')]);
  let sawBackOffReason = false;
  const unsubscribe = h.kubelet.onPodStatus((p, s) => {
    if (p.metadata?.uid !== pod.metadata?.uid) return;
    const w = s.containerStatuses?.find((c) => c.name === 'app')?.state?.waiting;
    if (w?.reason === 'CrashLoopBackOff') {
      sawBackOffReason = true;
      assert.match(w.message ?? '', /^back-off 1s restarting failed container=app pod=crasher_default\(.+\)$/);
    }
  });
  await withPods(h, [pod], async () => {
    await waitFor(
      () => `three restarts and a CrashLoopBackOff: ${describe(h, pod)}`,
      () => (containerStatus(h, pod, 'app')?.restartCount ?? 0) >= 3 && sawBackOffReason,
      40_000,
    );
    const backOff = eventsOf(h, pod, 'BackOff');
    assert.ok(backOff.length >= 1);
    assert.equal(backOff[0]!.type, 'Warning');
    assert.equal(backOff[0]!.message, `Back-off restarting failed container app in pod crasher_default(${pod.metadata!.uid})`);
    assert.equal(containerStatus(h, pod, 'app')!.lastState?.terminated?.exitCode, 3);
    assert.equal(eventsOf(h, pod, 'Created')[0]!.message, 'Created container: app');
    assert.equal(eventsOf(h, pod, 'Started')[0]!.message, 'Started container app');
    unsubscribe();
  });
});
