// The scheduler's decisions with an injected clock and a host kept in memory (the agent's registry
// and Node stand behind the same interface in the real agent): a pod that fits is bound and the next
// does not fit, with upstream's event and condition; it waits for an event, not a timer; a pod that
// ends brings it back through its back-off (1 s, doubled, at most 10 s); a node change moves pods any
// plugin rejected; preemption of a lower-priority pod; scheduling gates.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node, Pod } from '../../src/api/types.js';
import type { EventType } from '../../src/events/recorder.js';
import { defaultFilters } from '../../src/scheduler/plugins/registry.js';
import { Scheduler } from '../../src/scheduler/schedule-one.js';
import { SchedulingQueue } from '../../src/scheduler/scheduling-queue.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { cpu, node } from './helpers.js';

function harness(n: Node) {
  const clock = new FakeClock();
  const pods = new Map<string, Pod>();
  const events: Array<{ name: string; type: EventType; reason: string; message: string }> = [];
  const conditions = new Map<string, { reason: string; message: string; nominated?: string }>();
  let attempts = 0;
  const host = {
    node: () => n,
    assignedPods: () => [...pods.values()].filter((p) => p.spec?.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'),
    bind: async (p: Pod, nodeName: string) => {
      const old = pods.get(p.metadata!.uid!)!;
      const bound = { ...old, spec: { ...old.spec!, nodeName } };
      pods.set(p.metadata!.uid!, bound);
      s.podChanged(old, bound);
    },
    setUnschedulable: (p: Pod, reason: string, message: string, nominated?: string) => {
      attempts++;
      conditions.set(p.metadata!.name!, { reason, message, ...(nominated ? { nominated } : {}) });
    },
    preemptVictim: async (v: Pod) => {
      const old = pods.get(v.metadata!.uid!)!;
      pods.delete(v.metadata!.uid!);
      s.podChanged(old, undefined);
    },
  };
  const s = new Scheduler({
    clock,
    logger: silentLogger,
    recorder: { event: (o, type, reason, message) => events.push({ name: o.name, type, reason, message }) },
    host,
    filters: defaultFilters({ network: 'pod', namespaceLabels: () => ({}) }),
  });
  const add = async (p: Pod) => {
    const pending = { ...p, spec: { ...p.spec!, nodeName: undefined }, status: { phase: 'Pending' } } as Pod;
    pods.set(p.metadata!.uid!, pending);
    s.podChanged(undefined, pending);
    await s.idle();
  };
  const end = async (p: Pod) => {
    const old = pods.get(p.metadata!.uid!)!;
    const done = { ...old, status: { phase: 'Succeeded' } } as Pod;
    pods.set(p.metadata!.uid!, done);
    s.podChanged(old, done);
    await s.idle();
  };
  return { clock, pods, events, conditions, s, add, end, attempts: () => attempts, bound: (p: Pod) => pods.get(p.metadata!.uid!)?.spec?.nodeName };
}

const insufficientCpu = '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';

test('3 × 500m on 1 CPU: two bound, the third Unschedulable in upstream words, retried only after a pod ends and its back-off', async () => {
  const h = harness(node({ cpu: '1' }));
  const [a, b, c] = [cpu('500m'), cpu('500m'), cpu('500m')];
  await h.add(a);
  await h.add(b);
  await h.add(c);
  assert.equal(h.bound(a), 'vm');
  assert.equal(h.bound(b), 'vm');
  assert.equal(h.bound(c), undefined);
  assert.deepEqual(h.conditions.get(c.metadata!.name!), { reason: 'Unschedulable', message: insufficientCpu });
  assert.deepEqual(
    h.events.filter((e) => e.type === 'Warning'),
    [{ name: c.metadata!.name!, type: 'Warning', reason: 'FailedScheduling', message: insufficientCpu }],
  );
  assert.equal(h.events.filter((e) => e.reason === 'Scheduled').length, 2);
  // Nothing happens with time alone (short of the 5-minute leftover flush).
  await h.clock.advance(500);
  await h.s.idle();
  assert.equal(h.attempts(), 1);
  // A pod ends within the pod's 1 s back-off: it waits in the back-off queue for the rest, then is bound.
  await h.end(a);
  assert.equal(h.bound(c), undefined);
  assert.deepEqual(h.s.queue.counts(), { active: 0, backoff: 1, unschedulable: 0 });
  await h.clock.advance(499);
  assert.equal(h.bound(c), undefined);
  await h.clock.advance(1);
  await h.s.idle();
  assert.equal(h.bound(c), 'vm');
  h.s.close();
});

test('back-off: 1 s doubled per attempt, at most 10 s; a move during the cycle goes to the back-off queue', async () => {
  const clock = new FakeClock();
  const q = new SchedulingQueue(clock, () => {});
  const p = cpu('1');
  q.add(p);
  const info = q.pop()!;
  assert.equal(q.backoffDuration(info), 1000);
  info.attempts = 3;
  assert.equal(q.backoffDuration(info), 4000);
  info.attempts = 6;
  assert.equal(q.backoffDuration(info), 10_000);
  info.attempts = 1;
  q.moveAllToActiveOrBackoff();
  q.addUnschedulable(info);
  assert.deepEqual(q.counts(), { active: 0, backoff: 1, unschedulable: 0 });
  await clock.advance(999);
  assert.deepEqual(q.counts(), { active: 0, backoff: 1, unschedulable: 0 });
  await clock.advance(1);
  assert.deepEqual(q.counts(), { active: 1, backoff: 0, unschedulable: 0 });
  q.close();
});

test('a freed resource: the pod starts at once when its back-off since its last attempt has run out, else when it ends', async () => {
  const h = harness(node({ cpu: '1' }));
  const hog = cpu('1');
  const waiting = cpu('500m');
  await h.add(hog);
  await h.add(waiting); // refused at t=0, its only attempt
  assert.equal(h.attempts(), 1);
  // The CPU freed at t=5 s, the 1 s back-off long expired: the deletion moves the pod straight to
  // activeQ and it is bound with no time passing.
  await h.clock.advance(5000);
  await h.end(hog);
  assert.equal(h.bound(waiting), 'vm');
  // A pod of 1 CPU refused at t=5 s, then again at t=8 s (a pod's end moves it; 500m are still held).
  const big = cpu('1');
  await h.add(big);
  assert.equal(h.attempts(), 2);
  await h.clock.advance(3000);
  const small = cpu('100m');
  await h.add(small);
  await h.end(small);
  assert.equal(h.attempts(), 3);
  assert.equal(h.bound(big), undefined);
  // Its back-off is now 2 s counted from that last attempt (t=8 s), not from its first (t=5 s): the
  // CPU freed at t=8.5 s lets it in at t=10 s.
  await h.clock.advance(500);
  await h.end(waiting);
  assert.deepEqual(h.s.queue.counts(), { active: 0, backoff: 1, unschedulable: 0 });
  await h.clock.advance(1499);
  await h.s.idle();
  assert.equal(h.bound(big), undefined);
  await h.clock.advance(1);
  await h.s.idle();
  assert.equal(h.bound(big), 'vm');
  assert.equal(h.attempts(), 3);
  h.s.close();
});

test('a node change moves the pods its filters refused: nodeSelector then labels, taint then toleration-free removal', async () => {
  const n = node();
  const h = harness(n);
  const p = cpu('100m', { nodeSelector: { disk: 'ssd' } });
  await h.add(p);
  assert.equal(
    h.conditions.get(p.metadata!.name!)?.message,
    "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
  );
  // A pod ending does not concern NodeAffinity: no attempt.
  const other = cpu('100m');
  await h.add(other);
  await h.end(other);
  await h.clock.advance(20_000);
  assert.equal(h.attempts(), 1);
  n.metadata!.labels!.disk = 'ssd';
  h.s.clusterChanged('NodeChange');
  await h.s.idle();
  assert.equal(h.bound(p), 'vm');
  h.s.close();
});

test('preemption: a higher-priority pod has a lower-priority one deleted and is nominated, then bound', async () => {
  const h = harness(node({ cpu: '1' }));
  const low = cpu('800m', { priority: 0 });
  await h.add(low);
  const high = cpu('800m', { priority: 1000 });
  await h.add(high);
  assert.equal(h.pods.has(low.metadata!.uid!), false, 'the victim is deleted');
  assert.equal(h.conditions.get(high.metadata!.name!)?.nominated, 'vm');
  assert.ok(h.events.some((e) => e.name === low.metadata!.name && e.reason === 'Preempted'));
  // The victim's deletion is an event; the preemptor's 1 s back-off then ends.
  await h.clock.advance(1000);
  await h.s.idle();
  assert.equal(h.bound(high), 'vm');
  // Equal priority preempts nothing.
  const same = cpu('800m', { priority: 1000 });
  await h.add(same);
  assert.equal(h.conditions.get(same.metadata!.name!)?.message, insufficientCpu);
  h.s.close();
});

test('the nominated preemptor keeps the room it made from a pod of lower priority arriving meanwhile', async () => {
  const h = harness(node({ cpu: '1' }));
  const low = cpu('800m', { priority: 0 });
  await h.add(low);
  const high = cpu('800m', { priority: 1000 });
  await h.add(high);
  assert.equal(h.conditions.get(high.metadata!.name!)?.nominated, 'vm');
  const other = cpu('800m', { priority: 0 });
  await h.add(other);
  assert.equal(h.bound(other), undefined, 'the freed CPU is the preemptor’s');
  await h.clock.advance(1000);
  await h.s.idle();
  assert.equal(h.bound(high), 'vm');
  assert.equal(h.bound(other), undefined);
  h.s.close();
});

test('scheduling gates keep a pod SchedulingGated, out of the queue', async () => {
  const h = harness(node());
  const p = cpu('100m', { schedulingGates: [{ name: 'example.com/wait' }] });
  await h.add(p);
  assert.equal(h.conditions.get(p.metadata!.name!)?.reason, 'SchedulingGated');
  assert.equal(h.bound(p), undefined);
  h.s.close();
});
