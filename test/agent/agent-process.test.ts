// `podvisor agent` as a real process, driven over its socket and by the CLI: static-pod directory
// (add, edit, broken file, remove), manifest URL, persisted pods across a restart, up -d / logs -f /
// down, TCP auth and file modes, one agent per root dir, and the kubelet routes' shapes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { Container, Pod } from '../../src/api/types.js';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from './helpers.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';

const podYaml = (name: string, script: string, extra: Partial<Container> = {}) =>
  manifestYaml(pod(name, [shell('main', script, extra)], { terminationGracePeriodSeconds: 2 }));

async function startAgent(root: string, args: string[] = []): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root, '--file-check-frequency', '1s', '--http-check-frequency', '1s', ...args]);
  await p.waitFor('stderr', /podvisor agent started/);
  return p;
}

async function stopAgent(p: CliProcess): Promise<void> {
  if (p.child.exitCode === null) p.child.kill('SIGTERM');
  await p.exited;
}

/** Stops an agent started on demand (detached) through its status pid. */
async function stopDetached(root: string): Promise<void> {
  const st = await runCli(['agent', 'status', '--root-dir', root, '-o', 'json']);
  if (st.code !== 0) return;
  const pid = JSON.parse(st.stdout).pid as number;
  process.kill(pid, 'SIGTERM');
  await waitFor('detached agent gone', () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

const sock = (root: string) => join(root, 'podvisor.sock');
async function pods(root: string): Promise<Pod[]> {
  return (await call(sock(root), 'GET', '/pods')).json().items;
}
async function podNamed(root: string, name: string): Promise<Pod | undefined> {
  return (await pods(root)).find((p) => p.metadata?.name === name);
}
const running = (p: Pod | undefined) => p?.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

test('static pod directory: add, edit (new UID), broken file keeps pods, remove', async () => {
  const dir = await tempDir();
  const root = join(dir.path, 'root');
  const manifests = join(dir.path, 'manifests');
  await (await import('node:fs/promises')).mkdir(manifests);
  await writeFile(join(manifests, 'a.yaml'), podYaml('static-a', 'echo v1; exec sleep 60'));
  const agent = await startAgent(root, ['--pod-manifest-path', manifests]);
  try {
    await waitFor('static-a running', async () => running(await podNamed(root, 'static-a')));
    const first = (await podNamed(root, 'static-a'))!;
    assert.equal(first.metadata?.annotations?.['kubernetes.io/config.source'], 'file');

    await writeFile(join(manifests, 'a.yaml'), podYaml('static-a', 'echo v2; exec sleep 60'));
    await waitFor('static-a replaced by a new UID', async () => {
      const p = await podNamed(root, 'static-a');
      return running(p) && p!.metadata!.uid !== first.metadata!.uid;
    });
    const second = (await podNamed(root, 'static-a'))!;

    // A half-saved edit: reported, and the running pod stays as it was.
    await writeFile(join(manifests, 'a.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: static-a}\nspec:\n  containers: [');
    await waitFor('error in agent status', async () => {
      const st = JSON.parse((await runCli(['agent', 'status', '--root-dir', root, '-o', 'json'])).stdout);
      return st.manifests.some((m: { error?: string }) => m.error);
    });
    await agent.waitFor('stderr', /Could not load a pod manifest/);
    const kept = await podNamed(root, 'static-a');
    assert.ok(running(kept));
    assert.equal(kept!.metadata!.uid, second.metadata!.uid);
    const human = await runCli(['agent', 'status', '--root-dir', root]);
    assert.match(human.stdout, /manifest errors/);

    await rm(join(manifests, 'a.yaml'));
    await waitFor('static-a removed', async () => !(await podNamed(root, 'static-a')));
  } finally {
    await stopAgent(agent);
    await dir.remove();
  }
});

test('manifest URL: polled, changes replace the pod, an unreachable URL changes nothing', async () => {
  const dir = await tempDir();
  let body = podYaml('from-url', 'exec sleep 60');
  let status = 200;
  const server = createServer((_req, res) => {
    res.writeHead(status);
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/pod.yaml`;
  const agent = await startAgent(dir.path, ['--manifest-url', url]);
  try {
    await waitFor('from-url running', async () => running(await podNamed(dir.path, 'from-url')));
    const first = (await podNamed(dir.path, 'from-url'))!;
    assert.equal(first.metadata?.annotations?.['kubernetes.io/config.source'], 'http');
    status = 500;
    await agent.waitFor('stderr', /Pod source unavailable/);
    assert.equal((await podNamed(dir.path, 'from-url'))!.metadata!.uid, first.metadata!.uid);
    status = 200;
    body = podYaml('from-url', 'echo changed; exec sleep 60');
    await waitFor('from-url replaced', async () => {
      const p = await podNamed(dir.path, 'from-url');
      return running(p) && p!.metadata!.uid !== first.metadata!.uid;
    });
  } finally {
    await stopAgent(agent);
    server.close();
    await dir.remove();
  }
});

test('up -d --wait=ready, logs -f, down; pods persist across an agent restart', async () => {
  const dir = await tempDir();
  const root = dir.path;
  const file = join(root, 'svc.yaml');
  await writeFile(
    file,
    podYaml('svc', 'echo line-1; echo line-2; trap "exit 0" TERM; while true; do sleep 0.2; done', {
      readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
    }),
  );
  try {
    const up = await runCli(['up', '-d', '-f', file, '--root-dir', root, '--wait=ready', '--timeout', '60s']);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /pod\/svc created/);
    assert.match(up.stderr, /started the podvisor agent/);
    const stored = statSync(join(root, 'api-pods'));
    assert.ok(stored.isDirectory());

    const again = await runCli(['up', '-d', '-f', file, '--root-dir', root]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /pod\/svc unchanged/);

    // Restart the agent: the pod comes back with its UID.
    const before = (await podNamed(root, 'svc'))!;
    await stopDetached(root);
    const restarted = await startAgent(root);
    try {
      await waitFor('svc restored', async () => running(await podNamed(root, 'svc')));
      assert.equal((await podNamed(root, 'svc'))!.metadata!.uid, before.metadata!.uid);

      const follow = startCli(['logs', 'svc', '-f', '--root-dir', root]);
      await follow.waitFor('stdout', /line-1\nline-2\n/);
      const down = await runCli(['down', '-f', file, '--root-dir', root, '--grace-period', '1']);
      assert.equal(down.code, 0, down.stderr);
      assert.match(down.stdout, /pod "svc" deleted/);
      const ended = await follow.exited;
      assert.equal(ended.code, 0);
      assert.equal(await podNamed(root, 'svc'), undefined);
    } finally {
      await stopAgent(restarted);
    }
  } finally {
    await stopDetached(root);
    await dir.remove();
  }
});

test('logs names the containers of a multi-container pod; logs of an unknown pod fail', async () => {
  const dir = await tempDir();
  const root = dir.path;
  const file = join(root, 'two.yaml');
  await writeFile(
    file,
    `apiVersion: v1\nkind: Pod\nmetadata: {name: two}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: a, image: x, command: ["/bin/sh", "-c", "echo from-a; exec sleep 60"]}\n  - {name: b, image: x, command: ["/bin/sh", "-c", "echo from-b; exec sleep 60"]}\n`,
  );
  const agent = await startAgent(root);
  try {
    const up = await runCli(['up', '-d', '-f', file, '--root-dir', root]);
    assert.equal(up.code, 0, up.stderr);
    const noC = await runCli(['logs', 'two', '--root-dir', root]);
    assert.equal(noC.code, 1);
    assert.match(noC.stderr, /a container name must be specified for pod two, choose one of: \[a b\]/);
    await waitFor('log of b', async () => (await runCli(['logs', 'two', '-c', 'b', '--root-dir', root])).stdout === 'from-b\n');
    const all = await runCli(['logs', 'two', '--all-containers', '--root-dir', root]);
    assert.equal(all.stdout, 'from-a\nfrom-b\n');
    const missing = await runCli(['logs', 'nope', '--root-dir', root]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /pods "nope" not found/);
    assert.equal((await runCli(['down', '--all', '--root-dir', root, '--grace-period', '0'])).code, 0);
  } finally {
    await stopAgent(agent);
    await dir.remove();
  }
});

function httpsGet(port: number, path: string, ca: Buffer, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca, headers: token ? { Authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('TCP needs TLS and the token; files are 0600; one agent per root dir', async () => {
  const dir = await tempDir();
  const root = dir.path;
  const agent = await startAgent(root, ['--port', '0', '--address', '127.0.0.1']);
  try {
    for (const f of ['podvisor.sock', 'token', 'kubeconfig', 'pki/server.key', 'pki/ca.key']) {
      assert.equal(statSync(join(root, f)).mode & 0o777, 0o600, f);
    }
    const st = JSON.parse((await runCli(['agent', 'status', '--root-dir', root, '-o', 'json'])).stdout);
    const port = Number(new URL(st.listen.https).port);
    const ca = readFileSync(join(root, 'pki/ca.crt'));
    const token = readFileSync(join(root, 'token'), 'utf8').trim();
    assert.match(readFileSync(join(root, 'kubeconfig'), 'utf8'), new RegExp(`server: https://127.0.0.1:${port}`));

    const anon = await httpsGet(port, '/pods', ca);
    assert.equal(anon.status, 401);
    assert.equal(JSON.parse(anon.body).kind, 'Status');
    assert.equal((await httpsGet(port, '/pods', ca, 'wrong')).status, 401);
    assert.equal((await httpsGet(port, '/healthz', ca)).status, 200);
    const ok = await httpsGet(port, '/pods', ca, token);
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).kind, 'PodList');
    for (const evil of ['/containerLogs/default/..%2F..%2Fetc/passwd', '/containerLogs/..%2F..%2F/pod/main', '/containerLogs/default/pod/..']) {
      const r = await httpsGet(port, evil, ca, token);
      // Dot segments are resolved away before routing (404); encoded ones reach the name check (400).
      assert.ok(r.status === 400 || r.status === 404, `${evil}: ${r.status}`);
      assert.equal(JSON.parse(r.body).kind, 'Status');
    }

    const second = await runCli(['agent', '--root-dir', root]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`in use by "podvisor agent" \\(pid ${agent.child.pid}\\)`));
    const run = await runCli(['run', '-f', join(root, 'token'), '--root-dir', root]);
    assert.notEqual(run.code, 0);

    const notLoopback = await runCli(['agent', '--root-dir', join(root, 'other'), '--port', '0', '--anonymous-auth', '--address', '0.0.0.0']);
    assert.equal(notLoopback.code, 2);
    assert.match(notLoopback.stderr, /loopback/);
  } finally {
    await stopAgent(agent);
    await dir.remove();
  }
});

test('kubelet routes: /pods, /runningpods/, /metrics, /metrics/probes, /metrics/resource, /stats/summary, /containerLogs', async () => {
  const dir = await tempDir();
  const root = dir.path;
  const file = join(root, 'probed.yaml');
  await writeFile(file, podYaml('probed', 'echo hello; echo again; exec sleep 60', { readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } }));
  const agent = await startAgent(root);
  try {
    assert.equal((await runCli(['up', '-d', '-f', file, '--root-dir', root, '--wait=ready'])).code, 0);
    const list = (await call(sock(root), 'GET', '/pods')).json();
    assert.equal(list.kind, 'PodList');
    assert.equal(list.apiVersion, 'v1');
    assert.equal(list.items[0].status.phase, 'Running');
    const rp = (await call(sock(root), 'GET', '/runningpods/')).json();
    assert.equal(rp.items[0].metadata.name, 'probed');
    assert.equal(rp.items[0].spec.containers[0].name, 'main');
    assert.match((await call(sock(root), 'GET', '/metrics')).body, /kubelet_running_pods 1/);
    assert.match((await call(sock(root), 'GET', '/metrics')).body, /kubelet_pod_start_duration_seconds_count 1/);
    assert.match(
      (await call(sock(root), 'GET', '/metrics/probes')).body,
      /prober_probe_total\{probe_type="Readiness",result="successful",container="main",pod="probed",namespace="default"/,
    );
    assert.match(
      (await call(sock(root), 'GET', '/metrics/resource')).body,
      /container_memory_working_set_bytes\{container="main",namespace="default",pod="probed"\} [1-9]/,
    );
    const summary = (await call(sock(root), 'GET', '/stats/summary')).json();
    assert.equal(summary.pods[0].podRef.name, 'probed');
    assert.ok(summary.pods[0].containers[0].memory.workingSetBytes > 0);
    const logs = await call(sock(root), 'GET', '/containerLogs/default/probed/main?tailLines=1&timestamps=true');
    assert.equal(logs.status, 200);
    assert.match(logs.body, /^\d{4}-\d\d-\d\dT[0-9:.]+Z again\n$/);
    const limited = await call(sock(root), 'GET', '/containerLogs/default/probed/main?limitBytes=3');
    assert.equal(limited.body, 'hel');
    const wrong = await call(sock(root), 'GET', '/containerLogs/default/probed/nope');
    assert.equal(wrong.status, 400);
    assert.equal((await call(sock(root), 'GET', '/configz')).json().kubeletconfig.nodeName.length > 0, true);
    assert.equal((await call(sock(root), 'GET', '/healthz/syncloop')).body, 'ok');
  } finally {
    await stopAgent(agent);
    await dir.remove();
  }
});
