// Init containers and sidecars with real processes (§7.3, §11.6): init containers one at a time in
// order, an init failure under Never fails the pod, sidecars gate the app once started, and stop
// after the app containers in reverse spec order.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { condition, containerStatus, describe, eventsOf, makePod, newHarness, sh, statusOf, waitFor, withPods } from './harness.js';

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

test('init containers run one at a time, in order, before the app', async () => {
  const h = await newHarness();
  const out = join(h.dir, 'order');
  const ordered = makePod('ordered', [sh('app', `echo app >> ${out}; exec sleep 1000`)], {
    terminationGracePeriodSeconds: 2,
    initContainers: [sh('first', `sleep 0.5; echo first >> ${out}`), sh('second', `echo second >> ${out}`)],
  });
  const failing = makePod('init-fails', [sh('app', `echo app >> ${join(h.dir, 'never')}; exec sleep 1000`)], {
    restartPolicy: 'Never',
    initContainers: [sh('setup', 'exit 7'), sh('later', 'true')],
  });
  await withPods(h, [ordered, failing], async () => {
    await waitFor(
      () => `app running: ${describe(h, ordered)}`,
      () => containerStatus(h, ordered, 'app')?.state?.running,
    );
    // Running is reported once the runtime started the process, which may not have written yet.
    await waitFor('three lines written', () => lines(out).length >= 3);
    assert.deepEqual(lines(out), ['first', 'second', 'app']);
    for (const name of ['first', 'second']) {
      const s = containerStatus(h, ordered, name)!;
      assert.equal(s.state?.terminated?.reason, 'Completed');
      assert.equal(s.ready, true);
    }
    assert.equal(condition(h, ordered, 'Initialized'), 'True');
    assert.equal(statusOf(h, ordered)!.phase, 'Running');

    await waitFor(
      () => `the pod Failed: ${describe(h, failing)}`,
      () => statusOf(h, failing)?.phase === 'Failed',
    );
    assert.equal(containerStatus(h, failing, 'setup')!.state?.terminated?.exitCode, 7);
    assert.equal(containerStatus(h, failing, 'setup')!.restartCount, 0);
    assert.equal(containerStatus(h, failing, 'later')!.state?.waiting?.reason, 'PodInitializing');
    assert.equal(containerStatus(h, failing, 'app')!.state?.waiting?.reason, 'PodInitializing');
    assert.equal(condition(h, failing, 'Initialized'), 'False');
    assert.deepEqual(
      eventsOf(h, failing, 'Started').map((e) => e.involvedObject.fieldPath),
      ['spec.initContainers{setup}'],
      'neither the later init container nor the app ever started',
    );
    assert.equal(existsSync(join(h.dir, 'never')), false);
  });
});

test('a sidecar with a startup probe gates the app; sidecars stop after the app, in reverse order', async () => {
  const h = await newHarness();
  const ready = join(h.dir, 'sidecar-ready');
  const stops = join(h.dir, 'stops');
  // Each script marks itself armed once its TERM trap is set, so a stop can never reach a shell that
  // has not yet set it (a loaded machine may start a shell late).
  const armed = (name: string) => join(h.dir, `armed-${name}`);
  const trap = (name: string, file = stops) => `trap 'echo ${name} >> ${file}; exit 0' TERM; touch ${armed(name)}; while true; do sleep 0.1; done`;
  const pod = makePod('sidecars', [sh('app', `if [ -f ${ready} ]; then echo after; else echo early; fi > ${join(h.dir, 'app-saw')}; ${trap('app')}`)], {
    terminationGracePeriodSeconds: 20,
    initContainers: [
      sh('proxy', `sleep 1; touch ${ready}; ${trap('proxy')}`, {
        restartPolicy: 'Always',
        startupProbe: { exec: { command: ['test', '-f', ready] }, periodSeconds: 1, failureThreshold: 30, timeoutSeconds: 1, successThreshold: 1 },
      }),
      sh('logger', trap('logger'), { restartPolicy: 'Always' }),
    ],
  });
  // Never: once the app finishes, the sidecars are stopped (in reverse order) and the pod completes.
  const stops2 = join(h.dir, 'stops2');
  const finishing = makePod('finishing', [sh('app', `until [ -f ${armed('first')} ] && [ -f ${armed('second')} ]; do sleep 0.05; done`)], {
    restartPolicy: 'Never',
    initContainers: [sh('first', trap('first', stops2), { restartPolicy: 'Always' }), sh('second', trap('second', stops2), { restartPolicy: 'Always' })],
  });
  await withPods(h, [pod, finishing], async () => {
    await waitFor(
      () => `app running: ${describe(h, pod)}`,
      () => containerStatus(h, pod, 'app')?.state?.running,
    );
    // Running is reported once the runtime started the process, which may not have written yet.
    const saw = await waitFor('what the app saw at its start', () => existsSync(join(h.dir, 'app-saw')) && readFileSync(join(h.dir, 'app-saw'), 'utf8').trim());
    assert.equal(saw, 'after', 'the app started only after the sidecar had started');
    assert.equal(containerStatus(h, pod, 'proxy')!.started, true);
    await waitFor(
      () => `the pod Ready: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'True',
    );
    await waitFor('every container of the pod armed its trap', () => ['app', 'logger', 'proxy'].every((n) => existsSync(armed(n))));

    await h.kubelet.terminatePod(pod.metadata!.uid!);
    assert.deepEqual(lines(stops), ['app', 'logger', 'proxy']);
    const killing = eventsOf(h, pod, 'Killing')
      .map((e) => e.message)
      .sort();
    assert.deepEqual(killing, ['Stopping container app', 'Stopping container logger', 'Stopping container proxy']);

    await waitFor(
      () => `the pod Succeeded: ${describe(h, finishing)}`,
      () => statusOf(h, finishing)?.phase === 'Succeeded',
    );
    assert.deepEqual(lines(stops2), ['second', 'first']);
  });
});
