// Termination with real processes (§11.3–§11.5): the stop signal, SIGKILL after the grace period, a
// zero-grace second request cutting a graceful one short, the final status, activeDeadlineSeconds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStatus } from '../../src/api/types.js';
import { condition, containerStatus, describe, eventsOf, makePod, newHarness, sh, statusOf, waitFor, withPods } from './harness.js';

const ignoreTerm = `trap '' TERM; while true; do sleep 0.1; done`;
const exitOnTerm = `trap 'exit 0' TERM; while true; do sleep 0.1; done`;

test('graceful termination: SIGTERM honoured, SIGTERM ignored → SIGKILL after the grace period', async () => {
  const h = await newHarness();
  const polite = makePod('polite', [sh('app', exitOnTerm)], { terminationGracePeriodSeconds: 30 });
  const stubborn = makePod('stubborn', [sh('app', ignoreTerm)], { terminationGracePeriodSeconds: 2 });
  await withPods(h, [polite, stubborn], async () => {
    for (const p of [polite, stubborn])
      await waitFor(
        () => `Ready: ${describe(h, p)}`,
        () => condition(h, p, 'Ready') === 'True',
      );
    await Promise.all([polite, stubborn].map((p) => h.kubelet.terminatePod(p.metadata!.uid!)));

    const politeApp = containerStatus(h, polite, 'app')!;
    assert.equal(politeApp.state?.terminated?.exitCode, 0);
    assert.equal(statusOf(h, polite)!.phase, 'Succeeded');
    assert.equal(condition(h, polite, 'Ready'), 'False');
    assert.equal(statusOf(h, polite)!.conditions!.find((c) => c.type === 'Ready')!.reason, 'PodCompleted');

    const stubbornApp = containerStatus(h, stubborn, 'app')!;
    assert.equal(stubbornApp.state?.terminated?.exitCode, 137);
    assert.equal(statusOf(h, stubborn)!.phase, 'Failed');
    assert.equal(statusOf(h, stubborn)!.conditions!.find((c) => c.type === 'ContainersReady')!.reason, 'PodFailed');

    for (const p of [polite, stubborn]) {
      const killing = eventsOf(h, p, 'Killing');
      assert.equal(killing.length, 1);
      assert.equal(killing[0]!.type, 'Normal');
      assert.equal(killing[0]!.message, 'Stopping container app');
      assert.ok(h.kubelet.pods().find((x) => x.metadata!.uid === p.metadata!.uid)!.metadata!.deletionTimestamp);
    }
    // A finished pod's worker takes no further action.
    assert.equal(containerStatus(h, polite, 'app')!.restartCount, 0);
  });
});

test('a second, zero-grace termination cuts a graceful one short', async () => {
  const h = await newHarness();
  const pod = makePod('slow', [sh('app', ignoreTerm)], { terminationGracePeriodSeconds: 300 });
  const withPreStop = makePod('slow-hook', [sh('app', ignoreTerm, { lifecycle: { preStop: { sleep: { seconds: 250 } } } })], {
    terminationGracePeriodSeconds: 300,
  });
  await withPods(h, [pod, withPreStop], async () => {
    for (const p of [pod, withPreStop])
      await waitFor(
        () => `app running: ${describe(h, p)}`,
        () => containerStatus(h, p, 'app')?.state?.running,
      );
    let done = 0;
    const graceful = [pod, withPreStop].map((p) => h.kubelet.terminatePod(p.metadata!.uid!).then(() => done++));
    for (const p of [pod, withPreStop])
      await waitFor(
        () => `a Killing event: ${describe(h, p)}`,
        () => eventsOf(h, p, 'Killing').length > 0,
      );
    assert.equal(done, 0);
    await h.kubelet.terminateAll({ gracePeriodSeconds: 0 });
    await Promise.all(graceful);
    for (const p of [pod, withPreStop]) {
      assert.equal(containerStatus(h, p, 'app')!.state?.terminated?.exitCode, 137, describe(h, p));
      assert.equal(statusOf(h, p)!.phase, 'Failed');
      assert.equal(h.kubelet.pods().find((x) => x.metadata!.uid === p.metadata!.uid)!.metadata!.deletionGracePeriodSeconds, 0);
    }
  });
});

test('activeDeadlineSeconds set by an update of a running pod is enforced: containers killed, pod Failed', async () => {
  const h = await newHarness();
  const pod = makePod('deadline-update', [sh('app', exitOnTerm)], { terminationGracePeriodSeconds: 5 });
  await withPods(h, [pod], async () => {
    await waitFor(
      () => `Ready: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'True',
    );
    // One of the pod fields the API server lets a client change on a bound pod.
    h.kubelet.updatePod({ ...pod, spec: { ...pod.spec!, activeDeadlineSeconds: 1 } });
    await waitFor(
      () => `the pod Failed with app terminated: ${describe(h, pod)}`,
      () => statusOf(h, pod)?.phase === 'Failed' && containerStatus(h, pod, 'app')?.state?.terminated,
    );
    assert.equal(statusOf(h, pod)!.reason, 'DeadlineExceeded');
    assert.equal(eventsOf(h, pod, 'Killing')[0]!.message, 'Stopping container app');
  });
});

test('activeDeadlineSeconds: every container killed, the pod Failed with DeadlineExceeded only once none runs', async () => {
  const h = await newHarness();
  // `slow` ignores SIGTERM and holds on for its grace period: the window in which a pod could be
  // reported Failed with a container still running.
  const pod = makePod('deadline', [sh('app', exitOnTerm), sh('slow', ignoreTerm)], { activeDeadlineSeconds: 5, terminationGracePeriodSeconds: 2 });
  const published: PodStatus[] = [];
  h.kubelet.statusManager.onChange((uid, s) => {
    if (uid === pod.metadata!.uid) published.push(s);
  });
  await withPods(h, [pod], async () => {
    // Running (its TERM trap set) well before the deadline, so that the kill finds the trap: a kill
    // that lands while the container is still starting ends it before its program runs.
    await waitFor(
      () => `app and slow running: ${describe(h, pod)}`,
      () => containerStatus(h, pod, 'app')?.state?.running !== undefined && containerStatus(h, pod, 'slow')?.state?.running !== undefined,
    );
    await waitFor(
      () => `the pod Failed: ${describe(h, pod)}`,
      () => statusOf(h, pod)?.phase === 'Failed',
    );
    // As the kubelet's status manager: no terminal phase while a container could still run.
    for (const s of published.filter((x) => x.phase === 'Failed')) {
      const running = (s.containerStatuses ?? []).filter((c) => !c.state?.terminated).map((c) => c.name);
      assert.deepEqual(running, [], `Failed reported with containers not terminated: ${JSON.stringify(s)}`);
    }
    const s = statusOf(h, pod)!;
    assert.equal(s.reason, 'DeadlineExceeded');
    assert.equal(s.message, 'Pod was active on the node longer than the specified deadline');
    assert.equal(containerStatus(h, pod, 'app')!.state?.terminated?.exitCode, 0);
    assert.equal(containerStatus(h, pod, 'slow')!.state?.terminated?.exitCode, 137);
    assert.deepEqual(
      s.containerStatuses!.map((c) => [c.name, c.ready]),
      [
        ['app', false],
        ['slow', false],
      ],
    );
    const ev = eventsOf(h, pod, 'DeadlineExceeded');
    assert.equal(ev.length, 1);
    assert.equal(ev[0]!.type, 'Normal');
    assert.equal(ev[0]!.message, 'Pod was active on the node longer than the specified deadline');
    assert.equal(ev[0]!.involvedObject.fieldPath, undefined);
    assert.deepEqual(
      eventsOf(h, pod, 'Killing')
        .map((e) => e.message)
        .sort(),
      ['Stopping container app', 'Stopping container slow'],
    );
  });
});
