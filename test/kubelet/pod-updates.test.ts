// What reaches a running pod after it started: the readiness gates another client sets in its status
// (merged into Ready as the kubelet's status manager does), and on the process runtime, where pods
// share the host's network, a pod whose containerPort another pod binds waits Pending until it is free.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { condition, containerStatus, describe, eventsOf, makePod, newHarness, sh, statusOf, waitFor, withPods } from './harness.js';

const sleeper = `trap 'exit 0' TERM; while true; do sleep 0.1; done`;

/** The pod as the API server holds it after a client patched a condition into its status. */
function withCondition(pod: Pod, type: string, status: 'True' | 'False'): Pod {
  return { ...pod, status: { conditions: [{ type, status, lastTransitionTime: '2026-01-01T00:00:00Z' }] } };
}

test('readiness gates: conditions set in the pod status by another client make Ready, and take it away', async () => {
  const h = await newHarness();
  const pod = makePod('gated', [sh('app', sleeper)], { readinessGates: [{ conditionType: 'example.com/lb' }] });
  await withPods(h, [pod], async () => {
    await waitFor(
      () => `ContainersReady: ${describe(h, pod)}`,
      () => condition(h, pod, 'ContainersReady') === 'True',
    );
    const ready = () => statusOf(h, pod)?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready()?.status, 'False');
    assert.equal(ready()?.reason, 'ReadinessGatesNotReady');
    assert.equal(ready()?.message, 'corresponding condition of pod readiness gate "example.com/lb" does not exist.');

    h.kubelet.updatePod(withCondition(pod, 'example.com/lb', 'True'));
    await waitFor(
      () => `Ready once the gate is True: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'True',
    );
    assert.equal(statusOf(h, pod)!.conditions!.find((c) => c.type === 'example.com/lb')?.status, 'True');

    h.kubelet.updatePod(withCondition(pod, 'example.com/lb', 'False'));
    await waitFor(
      () => `not Ready once the gate is False: ${describe(h, pod)}`,
      () => ready()?.status === 'False' && ready()?.message === 'the status of pod readiness gate "example.com/lb" is not "True", but False',
    );
  });
});

test('process runtime: a pod whose containerPort another pod binds waits Pending (HostPortInUse), then runs once it is free', async () => {
  const h = await newHarness();
  const ports = [{ containerPort: 47123 }];
  const first = makePod('first', [sh('app', sleeper, { ports })]);
  const second = makePod('second', [sh('app', sleeper, { ports })]);
  const other = makePod('other', [sh('app', sleeper, { ports: [{ containerPort: 47124 }] })]);
  assert.deepEqual(h.kubelet.admit(second), { admit: true }, 'admitted: the wait is not a rejection');
  await withPods(h, [first, second, other], async () => {
    await waitFor(
      () => `first and other Running: ${describe(h, first)} ${describe(h, other)}`,
      () => statusOf(h, first)?.phase === 'Running' && statusOf(h, other)?.phase === 'Running',
    );
    const waiting = await waitFor(
      () => `second waiting on the port: ${describe(h, second)}`,
      () => containerStatus(h, second, 'app')?.state?.waiting?.reason === 'HostPortInUse' && containerStatus(h, second, 'app')!.state!.waiting!,
    );
    assert.match(waiting.message ?? '', /^port 47123\/TCP is bound by pod default\/first on this node's network/);
    assert.equal(statusOf(h, second)!.phase, 'Pending');
    assert.equal(eventsOf(h, second, 'HostPortInUse').length, 1);
    assert.equal(eventsOf(h, second, 'HostPortInUse')[0]!.type, 'Warning');

    await h.kubelet.terminatePod(first.metadata!.uid!);
    await waitFor(
      () => `second Running once first ended: ${describe(h, second)}`,
      () => statusOf(h, second)?.phase === 'Running',
    );
  });
});
