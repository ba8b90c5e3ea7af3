// The official client libraries against the API layer over real HTTP: @kubernetes/client-node
// (list, informer-style list+watch, log follow, WebSocket exec and port-forward) and Debian's
// python3-kubernetes (list, watch with Go-style `True` booleans, log, exec with its return code).

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { MemoryBackend } from './memory-backend.js';
import { startApiServer, waitFor, type ApiServer } from './harness.js';

function findPython(): string | undefined {
  for (const p of [process.env.PYTHON, '/usr/bin/python3', 'python3']) {
    if (!p) continue;
    try {
      execFileSync(p, ['-c', 'import kubernetes'], { stdio: 'ignore' });
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}
const python = findPython();

function collect(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk, _enc, cb) {
      text += chunk;
      cb();
    },
  });
  return Object.assign(w, { text: () => text });
}

describe('official clients', () => {
  let backend: MemoryBackend;
  let api: ApiServer;
  let kc: k8s.KubeConfig;

  before(async () => {
    backend = new MemoryBackend();
    api = await startApiServer(backend);
    await backend.createPod({
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    });
    backend.logs.set('default/web/app', ['one', 'two', 'three']);
    // The agent serves TLS; this test server is plain HTTP, which client-node accepts only so.
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'podvisor', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'podvisor' }],
      contexts: [{ name: 'podvisor', cluster: 'podvisor', user: 'podvisor', namespace: 'default' }],
      currentContext: 'podvisor',
    });
  });
  after(async () => {
    await api?.close();
  });

  test('client-node lists pods', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['web'],
    );
    assert.equal(list.items[0]!.status?.phase, 'Running');
    await assert.rejects(core.readNamespacedPod({ namespace: 'default', name: 'nope' }), (err: { code?: number }) => err.code === 404);
  });

  test('client-node informer: list then watch from its resourceVersion', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => core.listNamespacedPod({ namespace: 'default' }));
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    await informer.start();
    try {
      await waitFor('the listed pod', () => seen.includes('add web'));
      await backend.createPod({ metadata: { name: 'inf', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      await waitFor('the added pod', () => seen.includes('add inf'));
      await backend.deletePod('default', 'inf');
      await waitFor('the deleted pod', () => seen.includes('delete inf'));
      assert.ok(seen.includes('update inf'));
    } finally {
      await informer.stop();
    }
  });

  test('client-node log follow', async () => {
    const out = collect();
    const ctl = await new k8s.Log(kc).log('default', 'web', 'app', out, { follow: true, tailLines: 1 });
    await waitFor('the tail line', () => out.text() === 'three\n');
    for (const s of backend.followers) s.write('four\n');
    await waitFor('the followed line', () => out.text() === 'three\nfour\n');
    ctl.abort();
  });

  test('client-node exec over WebSocket (v5): stdout, stderr, stdin, exit status', async () => {
    const stdout = collect();
    const stderr = collect();
    const stdin = new PassThrough();
    const status = await new Promise<k8s.V1Status>((resolve) => {
      void new k8s.Exec(kc).exec('default', 'web', 'app', ['sh', '-c', 'cat; echo err >&2; exit 3'], stdout, stderr, stdin, false, (s) => resolve(s));
      stdin.end('from stdin\n');
    });
    assert.equal(stdout.text(), 'from stdin\n');
    assert.equal(stderr.text(), 'err\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.equal(status.details?.causes?.[0]?.message, '3');
  });

  test('client-node port-forward over WebSocket', async () => {
    const target = createNetServer((c) => c.end('pong'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const port = (target.address() as AddressInfo).port;
    const out = collect();
    const input = new PassThrough();
    await new k8s.PortForward(kc).portForward('default', 'web', [port], out, null, input);
    await waitFor('the target answer', () => out.text() === 'pong');
    input.end();
    target.close();
  });

  describe('python3-kubernetes', { skip: python ? false : 'python3-kubernetes is not installed' }, () => {
    test('list, watch, log and exec', async () => {
      const script = join(api.dir, 'client.py');
      writeFileSync(
        script,
        [
          'import json, sys',
          'from kubernetes import client, config, watch',
          'from kubernetes.stream import stream',
          'config.load_kube_config(config_file=sys.argv[1])',
          'v1 = client.CoreV1Api()',
          'out = {}',
          "out['list'] = [p.metadata.name for p in v1.list_namespaced_pod('default').items]",
          "out['watch'] = [(e['type'], e['object'].metadata.name) for e in watch.Watch().stream(v1.list_namespaced_pod, 'default', timeout_seconds=1)]",
          "out['log'] = v1.read_namespaced_pod_log('web', 'default', container='app', tail_lines=2)",
          "r = stream(v1.connect_get_namespaced_pod_exec, 'web', 'default', command=['sh', '-c', 'echo hi; exit 5'], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)",
          'r.run_forever(timeout=20)',
          "out['exec'] = r.read_stdout()",
          "out['rc'] = r.returncode",
          'print(json.dumps(out))',
        ].join('\n'),
      );
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(python!, [script, api.kubeconfig], { timeout: 60_000 }, (err, so, se) => (err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so))),
      );
      const out = JSON.parse(stdout) as { list: string[]; watch: Array<[string, string]>; log: string; rc: number; exec: string };
      assert.deepEqual(out.list, ['web']);
      assert.deepEqual(out.watch, [['ADDED', 'web']]);
      assert.equal(out.log, 'two\nthree\n');
      assert.equal(out.exec, 'hi\n');
      assert.equal(out.rc, 5);
    });
  });
});
