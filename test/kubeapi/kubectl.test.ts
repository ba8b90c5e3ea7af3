// kubectl 1.20 (Debian's kubernetes-client) against the API layer served over real HTTP: discovery,
// Tables, watch, describe, events, logs, exec (SPDY), apply, create, delete, port-forward and top.

import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MemoryBackend } from './memory-backend.js';
import { kubectl, kubectlPath, kubectlSpawn, startApiServer, waitFor, type ApiServer } from './harness.js';

const skip = kubectlPath ? false : 'kubectl (kubernetes-client) is not installed';

function podManifest(name: string, image = 'busybox:1.36', extra = ''): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  labels:\n    app: ${name}\nspec:\n  containers:\n  - name: main\n    image: ${image}\n${extra}`;
}

describe('kubectl against the API', { skip }, () => {
  let backend: MemoryBackend;
  let api: ApiServer;

  before(async () => {
    backend = new MemoryBackend();
    api = await startApiServer(backend);
    await backend.createPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    });
    await backend.createPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'db', namespace: 'other' },
      spec: {
        containers: [
          { name: 'pg', image: 'postgres' },
          { name: 'side', image: 'busybox' },
        ],
      },
    });
    backend.logs.set('default/web/app', ['line 1', 'line 2', 'line 3']);
    backend.logs.set('default/web/app/previous', ['old 1']);
    backend.addEvent({
      metadata: { name: 'web.1', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: backend.getPod('default', 'web')!.metadata!.uid },
      reason: 'Started',
      message: 'Started container app',
      type: 'Normal',
      source: { component: 'kubelet', host: 'testnode' },
      count: 1,
      firstTimestamp: backend.now(),
      lastTimestamp: backend.now(),
    });
  });
  after(async () => {
    await api?.close();
  });

  test('get pods prints the Table columns; -o wide, -A and -l', async () => {
    let r = await kubectl(api, ['get', 'pods']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    assert.match(r.stdout, /\nweb\s+1\/1\s+Running\s+0\s+\d+s\n/);
    r = await kubectl(api, ['get', 'pods', '-o', 'wide']);
    assert.match(r.stdout, /IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
    assert.match(r.stdout, /web .*127\.0\.0\.1\s+testnode\s+<none>\s+<none>/);
    r = await kubectl(api, ['get', 'pods', '-A']);
    assert.match(r.stdout, /^NAMESPACE\s+NAME/);
    assert.match(r.stdout, /\nother\s+db\s+2\/2\s+Running/);
    r = await kubectl(api, ['get', 'pods', '-A', '-l', 'app=web', '--show-labels']);
    assert.doesNotMatch(r.stdout, /\bdb\b/);
    assert.match(r.stdout, /app=web/);
    r = await kubectl(api, ['get', 'pods', '-A', '--field-selector', 'metadata.namespace=other']);
    assert.match(r.stdout, /db/);
    assert.doesNotMatch(r.stdout, /web/);
  });

  test('get pod -o yaml, a missing pod is NotFound', async () => {
    let r = await kubectl(api, ['get', 'pod', 'web', '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /kind: Pod/);
    assert.match(r.stdout, /name: web/);
    r = await kubectl(api, ['get', 'pod', 'nope']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error from server \(NotFound\): pods "nope" not found/);
  });

  test('describe pod shows containers and events; get events', async () => {
    let r = await kubectl(api, ['describe', 'pod', 'web']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Name:\s+web/);
    assert.match(r.stdout, /Containers:\n\s+app:/);
    assert.match(r.stdout, /Normal\s+Started\s+\S+\s+kubelet\s+Started container app/);
    r = await kubectl(api, ['get', 'events']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    assert.match(r.stdout, /Normal\s+Started\s+pod\/web\s+Started container app/);
  });

  test('logs, --tail, --previous, -f', async () => {
    let r = await kubectl(api, ['logs', 'web']);
    assert.equal(r.stdout, 'line 1\nline 2\nline 3\n');
    r = await kubectl(api, ['logs', 'web', '--tail', '1']);
    assert.equal(r.stdout, 'line 3\n');
    r = await kubectl(api, ['logs', 'web', '--previous']);
    assert.equal(r.stdout, 'old 1\n');
    const f = kubectlSpawn(api, ['logs', '-f', 'web']);
    await waitFor('the first lines', () => f.out().includes('line 3'));
    await waitFor('the follower', () => backend.followers.size > 0);
    for (const s of backend.followers) s.write('line 4\n');
    await waitFor('a followed line', () => f.out().includes('line 4'));
    for (const s of backend.followers) s.end();
    const code = await new Promise((r) => f.on('exit', r));
    assert.equal(code, 0);
  });

  test('exec: stdout, stderr, stdin and the exit code', async () => {
    let r = await kubectl(api, ['exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /err\n/);
    r = await kubectl(api, ['exec', '-i', 'web', '--', 'sh', '-c', 'tr a-z A-Z'], 'hello\n');
    assert.equal(r.stdout, 'HELLO\n');
    r = await kubectl(api, ['exec', 'web', '--', 'sh', '-c', 'exit 7']);
    assert.equal(r.code, 7);
  });

  test('create twice is AlreadyExists; apply creates, updates an image, is unchanged', async () => {
    const file = `${api.dir}/p.yaml`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, podManifest('made'));
    let r = await kubectl(api, ['create', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod\/made created/);
    r = await kubectl(api, ['create', '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error from server \(AlreadyExists\).*pods "made" already exists/);

    writeFileSync(file, podManifest('applied'));
    r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod\/applied created/);
    writeFileSync(file, podManifest('applied', 'busybox:1.37'));
    r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod\/applied configured/);
    assert.equal(backend.getPod('default', 'applied')!.spec!.containers[0]!.image, 'busybox:1.37');
    r = await kubectl(api, ['apply', '-f', file]);
    assert.match(r.stdout, /pod\/applied unchanged/);
    writeFileSync(file, podManifest('applied', 'busybox:1.37', '    command: ["sleep", "1"]\n'));
    r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /The Pod "applied" is invalid/);
  });

  test('an unknown field is rejected with its cause', async () => {
    const file = `${api.dir}/bad.yaml`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, podManifest('bad') + '  restartPolicyy: Never\n');
    // kubectl before 1.25 sends no fieldValidation (the server would warn, its default) and refuses
    // the field itself, from the OpenAPI schema; from 1.25 --validate=strict asks the server to refuse it.
    const v = await kubectl(api, ['version', '--client', '-o', 'json']);
    const minor = Number.parseInt((JSON.parse(v.stdout) as { clientVersion: { minor: string } }).clientVersion.minor, 10);
    const r = await kubectl(api, ['create', minor >= 25 ? '--validate=strict' : '--validate=true', '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown field "(spec\.)?restartPolicyy"/);
  });

  test('get -w sees ADDED, MODIFIED and DELETED; delete waits for the pod to go', async () => {
    const w = kubectlSpawn(api, ['get', 'pods', '-w']);
    await waitFor('the initial list', () => /\nweb\s/.test(w.out()));
    await backend.createPod({ metadata: { name: 'watched', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await waitFor('the added pod', () => /watched\s+1\/1\s+Running/.test(w.out()));
    const r = await kubectl(api, ['delete', 'pod', 'watched']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod "watched" deleted/);
    assert.equal(backend.getPod('default', 'watched'), undefined);
    await waitFor('the terminating pod', () => /watched\s+1\/1\s+Terminating/.test(w.out()));
    w.kill();
  });

  test('port-forward carries a real HTTP request', async () => {
    const target = createHttpServer((_req, res) => res.end('hello through the tunnel'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const port = (target.address() as AddressInfo).port;
    const pf = kubectlSpawn(api, ['port-forward', 'pod/web', `:${port}`]);
    try {
      await waitFor('port-forward to listen', () => /Forwarding from 127\.0\.0\.1:(\d+)/.test(pf.out()));
      const local = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(pf.out())![1]);
      const body = await (await fetch(`http://127.0.0.1:${local}/`)).text();
      assert.equal(body, 'hello through the tunnel');
      const again = await (await fetch(`http://127.0.0.1:${local}/`)).text();
      assert.equal(again, 'hello through the tunnel');
    } finally {
      pf.kill();
      target.closeAllConnections();
      target.close();
    }
  });

  test('top pod reads metrics.k8s.io', async () => {
    backend.metrics.set('default/web/app', { cpuCores: 0.005, memoryBytes: 20 * 1024 * 1024 });
    const r = await kubectl(api, ['top', 'pod']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(r.stdout, /web\s+5m\s+20Mi/);
  });
});
