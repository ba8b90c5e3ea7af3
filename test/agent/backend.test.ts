// The agent's pod registry and server in-process with the real process runtime: create, list, watch
// with resourceVersions, update rules, logs, graceful deletion, and the Status bodies of errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StandaloneAgent } from '../../src/agent/standalone-agent.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { listen } from '../../src/server/listen.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import type { WatchEvent } from '../../src/kubeapi/backend.js';
import type { Pod } from '../../src/api/types.js';
import { call, shellPod } from './helpers.js';
import { waitFor } from '../fixtures/wait.js';

async function withAgent(fn: (a: StandaloneAgent, sock: string, root: string) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-agent-'));
  const clock = new RealClock();
  const agent = new StandaloneAgent({
    rootDir: root,
    nodeName: 'node-a',
    clock,
    logger: silentLogger,
    // The process runtime in process: these tests are about the registry and the routes.
    runtime: new ProcessRuntime({ rootDir: root, clock, logger: silentLogger }),
    version: 'test',
    nodeAllocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
  });
  // The system namespaces and their default ServiceAccounts, which API pods need.
  await agent.bootstrapObjects();
  const l = await listen({ router: agent.router, socketPath: join(root, 'podvisor.sock') });
  try {
    await fn(agent, l.socketPath, root);
  } finally {
    await l.close();
    await agent.kubelet.terminateAll({ gracePeriodSeconds: 0 });
    await agent.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

test('create, list, log, update, delete through the minimal routes', async () => {
  await withAgent(async (agent, sock) => {
    assert.equal(statSync(sock).mode & 0o777, 0o600);
    const created = await call(sock, 'POST', '/api/v1/namespaces/default/pods', shellPod('hello', 'echo hi; exec sleep 30'));
    assert.equal(created.status, 201, created.body);
    const pod = created.json() as Pod;
    assert.match(pod.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(pod.metadata!.annotations!['kubernetes.io/config.source'], 'api');

    const dup = await call(sock, 'POST', '/api/v1/namespaces/default/pods', shellPod('hello', 'true'));
    assert.equal(dup.status, 409);
    assert.equal(dup.json().reason, 'AlreadyExists');

    await waitFor('running', async () => (await call(sock, 'GET', '/api/v1/namespaces/default/pods/hello')).json().status?.phase === 'Running');
    const log = await waitFor('log', async () => {
      const r = await call(sock, 'GET', '/api/v1/namespaces/default/pods/hello/log');
      return r.status === 200 && r.body === 'hi\n' && r;
    });
    assert.equal(log.body, 'hi\n');

    const cur = (await call(sock, 'GET', '/api/v1/namespaces/default/pods/hello')).json() as Pod;
    const bad = structuredClone(cur);
    bad.spec!.containers[0]!.command = ['/bin/sh', '-c', 'echo changed'];
    const rejected = await call(sock, 'PUT', '/api/v1/namespaces/default/pods/hello', bad);
    assert.equal(rejected.status, 422, rejected.body);
    assert.match(rejected.json().message, /pod updates may not change fields.*spec\.containers\[0\]\.command/);

    const stale = structuredClone(cur);
    (stale.metadata as { resourceVersion?: string }).resourceVersion = '1';
    assert.equal((await call(sock, 'PUT', '/api/v1/namespaces/default/pods/hello', stale)).status, 409);

    const events: WatchEvent<Pod>[] = [];
    const w = agent.backend.watchPods(cur.metadata!.resourceVersion!, (ev) => events.push(ev));
    const del = await call(sock, 'DELETE', '/api/v1/namespaces/default/pods/hello?gracePeriodSeconds=1');
    assert.equal(del.status, 200, del.body);
    assert.ok(del.json().metadata.deletionTimestamp);
    await waitFor('gone', async () => (await call(sock, 'GET', '/api/v1/namespaces/default/pods/hello')).status === 404);
    await waitFor('DELETED event', () => events.some((e) => e.type === 'DELETED'));
    w.stop();
    const rvs = events.map((e) => Number(e.object.metadata!.resourceVersion));
    assert.deepEqual(
      rvs,
      [...rvs].sort((a, b) => a - b),
      'resourceVersions increase',
    );
    assert.equal((await call(sock, 'GET', '/api/v1/namespaces/default/pods/hello')).json().kind, 'Status');
  });
});

test('invalid pods get 422 with causes; bad names and bodies get Status errors', async () => {
  await withAgent(async (_agent, sock) => {
    const p = shellPod('bad', 'true');
    p.spec!.containers[0]!.name = 'Not_Valid';
    const r = await call(sock, 'POST', '/api/v1/namespaces/default/pods', p);
    assert.equal(r.status, 422);
    const st = r.json();
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, 'Invalid');
    assert.ok(st.details.causes.some((c: { field: string }) => c.field === 'spec.containers[0].name'));

    const traversal = await call(sock, 'GET', '/containerLogs/default/..%2F..%2Fetc/main');
    assert.equal(traversal.status, 400);
    assert.equal(traversal.json().kind, 'Status');
    const big = await call(sock, 'POST', '/api/v1/namespaces/default/pods', 'x'.repeat(3 * 1024 * 1024 + 1));
    assert.equal(big.status, 413);
    const notJson = await call(sock, 'POST', '/api/v1/namespaces/default/pods', '{');
    assert.equal(notJson.status, 400);
    const missing = await call(sock, 'GET', '/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.json().kind, 'Status');
  });
});

test('watch from a version older than the history kept is 410 Expired', async () => {
  await withAgent(async (agent) => {
    for (let i = 0; i < 3; i++) await agent.backend.createPod(shellPod(`p${i}`, 'exec sleep 30'));
    await assert.doesNotReject(async () => agent.backend.watchPods('1', () => {}).stop());
    const small = new (await import('../../src/agent/pod-registry.js')).PodRegistry({
      kubelet: agent.kubelet,
      clock: new RealClock(),
      logger: silentLogger,
      historyLimit: 2,
    });
    for (let i = 0; i < 3; i++)
      await small.add({ ...shellPod(`q${i}`, 'exec sleep 30'), metadata: { name: `q${i}`, namespace: 'default', uid: `uid-q${i}` } } as Pod, {
        source: 'api',
        from: 'api',
      });
    assert.throws(
      () => small.watchPods('1', () => {}),
      (e: { code: number; reason: string }) => e.code === 410 && e.reason === 'Expired',
    );
    small.close();
  });
});
