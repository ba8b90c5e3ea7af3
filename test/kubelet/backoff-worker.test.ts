// The pod worker's crash-loop schedule with an injected clock and a real crashing process: the first
// crash restarts at once, then the worker requeues at each back-off expiry (10, 20, 40 … 300 s), and
// a run longer than 2×max resets the sequence (§8.2).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../src/util/clock.js';
import { containerStatus, describe, makePod, newHarness, sh, skipOn, waitFor, withPods } from './harness.js';

// containerd pushes no exit events: its exits are seen by the relist (PLEG), a timer on the worker
// clock, which the schedule case below does not advance between a crash and the restart it waits for.
const relistOnFakeClock = skipOn('containerd', 'exits are seen by the relist, a timer on the fake clock this case holds still');

/** Seconds of a back-off as its message names it (`10s`, `1m20s`). */
const secondsOf = (d: string) => {
  const m = /^(?:([0-9]+)m)?([0-9]+)s$/.exec(d);
  if (!m) throw new Error(`not a back-off: ${d}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2]);
};

test('restarts follow the back-off sequence on the worker clock', { skip: relistOnFakeClock }, async () => {
  const clock = new FakeClock();
  const h = await newHarness({ clock, random: () => 0 });
  const hold = join(h.dir, 'hold');
  // Crashes at once, unless the hold file exists: then it runs until the file is removed.
  const pod = makePod('loop', [sh('app', `while [ -f ${hold} ]; do sleep 0.05; done; exit 1`)]);
  // Starts are counted from the status (events are rate-limited per object, as client-go does).
  const starts = () => {
    const c = containerStatus(h, pod, 'app');
    return c ? c.restartCount + 1 : 0;
  };

  /** Waits until the container is waiting in back-off; returns the back-off the message names. */
  const inBackOff = () =>
    waitFor(
      () => `CrashLoopBackOff: ${describe(h, pod)}`,
      () => {
        const w = containerStatus(h, pod, 'app')?.state?.waiting;
        return w?.reason === 'CrashLoopBackOff' ? /^back-off (\S+) /.exec(w.message ?? '')![1] : undefined;
      },
    );

  /**
   * Advances the clock until the next start, second by second from `quietSeconds` on (the seconds
   * before are one step: a start within them shows as a wait of at most quietSeconds); returns the
   * seconds it took.
   */
  const nextStart = async (quietSeconds = 0) => {
    const before = starts();
    const from = clock.now();
    if (quietSeconds > 0) {
      await clock.advance(quietSeconds * 1000);
      await h.kubelet.syncPod(pod.metadata!.uid!);
    }
    for (let s = 0; s < 400 && starts() === before; s++) {
      await clock.advance(1000);
      // A sync does real I/O: let every sync due by now finish before time moves on.
      await h.kubelet.syncPod(pod.metadata!.uid!);
    }
    await waitFor(
      () => `the next start: ${describe(h, pod)}`,
      () => starts() > before,
    );
    return (clock.now() - from) / 1000;
  };

  await withPods(h, [pod], async () => {
    // First start and the immediate restart after the first crash: no time passes.
    await waitFor(
      () => `two starts: ${describe(h, pod)}`,
      () => starts() >= 2,
    );
    const names: string[] = [];
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const name = await inBackOff();
      names.push(name);
      // Every sync goes through the runtime service: the seconds before the named back-off pass at once.
      waits.push(await nextStart(secondsOf(name) - 2));
    }
    assert.deepEqual(waits, [10, 20, 40, 80, 160, 300, 300]);
    assert.deepEqual(names, ['10s', '20s', '40s', '1m20s', '2m40s', '5m0s', '5m0s']);

    // A run longer than 2×max (10 min) resets the back-off: the next restart is immediate.
    // (the hold file is written while the container waits in back-off, so the next run holds)
    await inBackOff();
    writeFileSync(hold, '');
    await nextStart();
    await waitFor(
      () => `app running: ${describe(h, pod)}`,
      () => containerStatus(h, pod, 'app')?.state?.running,
    );
    await clock.advance(601_000);
    const before = starts();
    rmSync(hold);
    await waitFor(
      () => `the next start: ${describe(h, pod)}`,
      () => starts() > before,
    );
    assert.ok(!existsSync(hold));
    assert.equal(await inBackOff(), '10s', 'the sequence starts again at 10 s');
  });
});

test('a sync that throws is logged and retried later; other pods go on', async () => {
  const clock = new FakeClock();
  const h = await newHarness({ clock, random: () => 0 });
  const broken = makePod('broken', [sh('app', 'exec sleep 1000')], { terminationGracePeriodSeconds: 2 });
  const fine = makePod('fine', [sh('app', 'exec sleep 1000')], { terminationGracePeriodSeconds: 2 });
  // The runtime fails the broken pod's first sandbox creation.
  const runPodSandbox = h.runtime.runPodSandbox.bind(h.runtime);
  let failures = 0;
  h.runtime.runPodSandbox = async (config) => {
    if (config.metadata.name === 'broken' && failures++ === 0) throw new Error('injected failure');
    return runPodSandbox(config);
  };
  await withPods(h, [broken, fine], async () => {
    await waitFor(
      () => `app running: ${describe(h, fine)}`,
      () => containerStatus(h, fine, 'app')?.state?.running,
    );
    await h.kubelet.syncPod(broken.metadata!.uid!);
    assert.equal(failures, 2, 'the explicit sync retried');
    await waitFor(
      () => `app running: ${describe(h, broken)}`,
      () => containerStatus(h, broken, 'app')?.state?.running,
    );
  });
});

test('a failed sync is retried after the error back-off', async () => {
  const clock = new FakeClock();
  const h = await newHarness({ clock, random: () => 0 });
  const pod = makePod('retried', [sh('app', 'exec sleep 1000')], { terminationGracePeriodSeconds: 2 });
  const runPodSandbox = h.runtime.runPodSandbox.bind(h.runtime);
  let calls = 0;
  h.runtime.runPodSandbox = async (config) => {
    if (calls++ === 0) throw new Error('injected failure');
    return runPodSandbox(config);
  };
  await withPods(h, [pod], async () => {
    await waitFor('first sync', () => calls >= 1);
    await clock.advance(9_000);
    assert.equal(calls, 1, 'no retry before the 10 s error back-off');
    assert.deepEqual(containerStatus(h, pod, 'app')?.state, { waiting: { reason: 'ContainerCreating' } }, 'Pending, waiting for its sandbox');
    await clock.advance(1_000);
    await waitFor(
      () => `app running: ${describe(h, pod)}`,
      () => containerStatus(h, pod, 'app')?.state?.running,
    );
  });
});
