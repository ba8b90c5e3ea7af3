// Lifecycle hooks and container configuration with real processes (§11.1, §11.2): a failing
// postStart restarts the container, preStop runs before the stop signal, an httpGet hook reaches a
// real server; env and ConfigMap references reach the process; a missing ConfigMap is reported.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerStatus, describe, eventsOf, makePod, newHarness, sh, waitFor, withPods } from './harness.js';

test('postStart failure → FailedPostStartHook, kill, PostStartHookError, restart', async () => {
  const h = await newHarness({ crashLoopBackOffMaxSeconds: 1 });
  const pod = makePod('poststart', [sh('app', 'exec sleep 1000', { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo nope >&2; exit 3'] } } } })], {
    terminationGracePeriodSeconds: 2,
  });
  const waiting: { reason?: string; message?: string }[] = [];
  h.kubelet.onPodStatus((p, s) => {
    if (p.metadata?.uid !== pod.metadata?.uid) return;
    const w = s.containerStatuses?.[0]?.state?.waiting;
    if (w) waiting.push(w);
  });
  await withPods(h, [pod], async () => {
    await waitFor(
      () => `a restart after PostStartHookError: ${describe(h, pod)}`,
      () => (containerStatus(h, pod, 'app')?.restartCount ?? 0) >= 1 && waiting.some((w) => w.reason === 'PostStartHookError'),
    );
    const hookFailed = eventsOf(h, pod, 'FailedPostStartHook');
    assert.equal(hookFailed[0]!.type, 'Warning');
    assert.equal(hookFailed[0]!.message, 'PostStartHook failed');
    assert.ok(eventsOf(h, pod, 'Killing').some((e) => e.message === 'FailedPostStartHook'));
    const w = waiting.find((x) => x.reason === 'PostStartHookError')!;
    assert.equal(
      w.message,
      `Exec lifecycle hook ([sh -c echo nope >&2; exit 3]) for Container "app" in Pod "poststart_default(${pod.metadata!.uid})" failed - error: command 'sh -c echo nope >&2; exit 3' exited with 3: nope\n, message: "nope\\n"`,
    );
  });
});

test('preStop runs before the stop signal; httpGet hooks reach the server', async () => {
  const requests: http.IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.headers);
    paths.push(req.url ?? '');
    res.statusCode = 500; // the status code of a hook is not checked
    res.end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const h = await newHarness();
  const marker = join(h.dir, 'prestop-ran');
  const result = join(h.dir, 'result');
  const pod = makePod(
    'prestop',
    [
      sh('app', `trap 'if [ -f ${marker} ]; then echo yes; else echo no; fi > ${result}; exit 0' TERM; while true; do sleep 0.1; done`, {
        lifecycle: {
          postStart: { httpGet: { path: '/started', port: 'hooks' } },
          preStop: { exec: { command: ['touch', marker] } },
        },
        ports: [{ name: 'hooks', containerPort: port }],
      }),
      sh('web', 'exec sleep 1000', { lifecycle: { preStop: { httpGet: { path: '/stopping', port, httpHeaders: [{ name: 'X-Test', value: 'yes' }] } } } }),
    ],
    { terminationGracePeriodSeconds: 10 },
  );
  try {
    await withPods(h, [pod], async () => {
      await waitFor(
        () => `app and web running: ${describe(h, pod)}`,
        () => containerStatus(h, pod, 'app')?.state?.running && containerStatus(h, pod, 'web')?.state?.running,
      );
      await h.kubelet.terminatePod(pod.metadata!.uid!);
      assert.equal(readFileSync(result, 'utf8').trim(), 'yes', 'the preStop hook ran before SIGTERM');
      assert.equal(containerStatus(h, pod, 'app')!.state?.terminated?.exitCode, 0);
      assert.deepEqual(paths.sort(), ['/started', '/stopping']);
      const stopping = requests[paths.indexOf('/stopping')]!;
      assert.equal(stopping['user-agent'], 'kube-lifecycle/1.35');
      assert.equal(stopping['x-test'], 'yes');
      assert.equal(eventsOf(h, pod, 'FailedPreStopHook').length, 0);
      assert.equal(eventsOf(h, pod, 'FailedPostStartHook').length, 0);
    });
  } finally {
    server.close();
  }
});

test('env and ConfigMap/Secret references reach the process; a missing ConfigMap is a config error', async () => {
  const h = await newHarness({
    configMaps: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { greeting: 'hello' } }],
    secrets: [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { token: Buffer.from('s3cret').toString('base64') } },
    ],
  });
  const out = join(h.dir, 'env-out');
  const pod = makePod(
    'env',
    [
      sh('app', `echo "$GREETING $TARGET $TOKEN $POD_NAME" > ${out}; exec sleep 1000`, {
        env: [
          { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } },
          { name: 'WHO', value: 'world' },
          { name: 'TARGET', value: '$(WHO)!' },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
      }),
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const missing = makePod('missing', [sh('app', 'exec sleep 1000', { env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'absent', key: 'k' } } }] })]);
  await withPods(h, [pod, missing], async () => {
    await waitFor(
      () => `the postStart output written: ${describe(h, pod)}`,
      () => existsSync(out) && readFileSync(out, 'utf8').includes('\n'),
    );
    assert.equal(readFileSync(out, 'utf8').trim(), 'hello world! s3cret env');
    const w = await waitFor(
      () => `CreateContainerConfigError for the missing Secret: ${describe(h, missing)}`,
      () => {
        const waiting = containerStatus(h, missing, 'app')?.state?.waiting;
        return waiting?.reason === 'CreateContainerConfigError' ? waiting : undefined;
      },
    );
    assert.match(w.message ?? '', /absent/);
    const failed = eventsOf(h, missing, 'Failed');
    assert.equal(failed[0]!.type, 'Warning');
    assert.equal(failed[0]!.message, `Error: ${w.message}`);
    assert.equal(eventsOf(h, missing, 'Started').length, 0);
  });
});

test('a hung postStart keeps the container Waiting, blocks no other pod, and does not hold up termination', async () => {
  const h = await newHarness();
  const hung = makePod('hung-hook', [sh('app', 'exec sleep 1000', { lifecycle: { postStart: { sleep: { seconds: 1000 } } } })], {
    terminationGracePeriodSeconds: 2,
  });
  const other = makePod('other', [sh('app', 'exec sleep 1000')], { terminationGracePeriodSeconds: 2 });
  await withPods(h, [hung, other], async () => {
    await waitFor(
      () => `the other pod running: ${describe(h, other)}`,
      () => containerStatus(h, other, 'app')?.state?.running,
    );
    // The runtime runs the container, but while postStart runs the pod status still shows it waiting.
    await waitFor('both running', async () => (await h.runtime.listContainers()).filter((c) => c.state === 'CONTAINER_RUNNING').length === 2);
    await waitFor(
      () => `the hung pod waiting in ContainerCreating: ${describe(h, hung)}`,
      () => containerStatus(h, hung, 'app')?.state?.waiting?.reason === 'ContainerCreating',
    );
    assert.equal(eventsOf(h, hung, 'Started').length, 1);
    await h.kubelet.terminatePod(hung.metadata!.uid!);
    assert.ok(containerStatus(h, hung, 'app')!.state?.terminated, describe(h, hung));
    assert.ok(containerStatus(h, other, 'app')!.state?.running);
  });
});
