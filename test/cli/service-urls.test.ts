// Services on the command line, through the real executable: `run -f` and `up -f` of a Deployment
// with its Services print one line per Service once it has Ready endpoints, with its URLs and the kind
// of address each is on; the ClusterIP URL answers; `-o json` keeps stdout to the List.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli, startCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

// Each root dir has a service range of its own (the agent's default), so concurrent agents on this
// host never share ClusterIPs.
const app = (port: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: python
        command: ["python3", "-m", "http.server", "--bind", "127.0.0.1", "${port}"]
        readinessProbe:
          tcpSocket: {port: ${port}}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: ${port}
    targetPort: ${port}
---
apiVersion: v1
kind: Service
metadata:
  name: web-np
spec:
  type: NodePort
  selector: {app: web}
  ports:
  - name: http
    port: 8080
    targetPort: ${port}
---
apiVersion: v1
kind: Service
metadata:
  name: nobody
spec:
  clusterIP: None
  selector: {app: web}
  ports:
  - port: 80
`;

const reachableLine = (name: string) => new RegExp(`^service/${name} reachable at (.*)$`, 'gm');

test('run -f of a Deployment and its Services: one "reachable at" line per Service with Ready endpoints, none for a headless one', async () => {
  const tmp = await tempDir();
  try {
    const port = await freePort();
    writeFileSync(join(tmp.path, 'app.yaml'), app(port));
    const r = await runCli(['run', '-f', join(tmp.path, 'app.yaml'), '--root-dir', join(tmp.path, 'root')]);
    assert.equal(r.code, 0, r.stderr);
    const web = [...r.stderr.matchAll(reachableLine('web'))];
    assert.equal(web.length, 1, r.stderr);
    assert.match(web[0]![1]!, new RegExp(`^http://127\\.\\d+\\.\\d+\\.\\d+:${port} \\(ClusterIP\\)$`));
    const np = [...r.stderr.matchAll(reachableLine('web-np'))];
    assert.equal(np.length, 1, r.stderr);
    assert.match(np[0]![1]!, /^http:\/\/127\.0\.0\.1:3\d{4} \(NodePort\), http:\/\/127\.\d+\.\d+\.\d+:8080 \(ClusterIP\)$/);
    assert.doesNotMatch(r.stderr, /service\/nobody reachable/);
    // Announced before the run reports and tears down.
    assert.ok(r.stderr.indexOf('reachable at') < r.stderr.indexOf('all 4 objects ok'), r.stderr);
    assert.doesNotMatch(r.stdout, /reachable/);
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('up -f -o json of a Deployment and its Service: the line once, when the pod is Ready; its ClusterIP URL answers; stdout holds only the List', async () => {
  const tmp = await tempDir();
  try {
    const port = await freePort();
    writeFileSync(join(tmp.path, 'app.yaml'), app(port));
    const up = startCli(['up', '-f', join(tmp.path, 'app.yaml'), '--root-dir', join(tmp.path, 'root'), '-o', 'json']);
    try {
      await up.waitFor('stderr', /^service\/web reachable at .*$/m, 90_000);
      const url = /^service\/web reachable at (\S+) \(ClusterIP\)$/m.exec(up.stderr())![1]!;
      const status = await waitFor(`GET ${url} through the service proxy`, async () => (await fetch(url)).status, 30_000);
      assert.equal(status, 200);
    } finally {
      up.child.kill('SIGINT');
    }
    const { code } = await up.exited;
    assert.equal(code, 0, up.stderr());
    assert.equal([...up.stderr().matchAll(reachableLine('web'))].length, 1, up.stderr());
    assert.equal(JSON.parse(up.stdout()).kind, 'List');
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
