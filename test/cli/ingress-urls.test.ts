// Ingresses on the command line, through the real executable: `run -f` and `up -f` of a Deployment,
// its Service and an Ingress print one line per Ingress once a backend is Ready, with its URLs on the
// agent's ingress proxy (a free port each, as --ingress-http-port 0 and --ingress-https-port 0 ask), and
// the URL answers through the proxy.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { runCli, startCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { freePorts } from '../fixtures/ports.js';
import { waitFor } from '../fixtures/wait.js';

const app = (port: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: node
        command: [${JSON.stringify(process.execPath)}, -e, "require('http').createServer((q,s)=>s.end('web saw '+q.url)).listen(${port},'127.0.0.1')"]
        readinessProbe: {tcpSocket: {port: ${port}}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: ${port}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
  - host: web.localhost
    http:
      paths: [{path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
`;

const ports = ['--ingress-http-port', '0', '--ingress-https-port', '0'];
const ingressLine = /^ingress\/web reachable at (http:\/\/web\.localhost:(\d+)\/app)$/m;

test('run -f of a Deployment, its Service and an Ingress: the Ingress line with its URL, before the report', async () => {
  const tmp = await tempDir();
  try {
    const [port] = await freePorts(1);
    writeFileSync(join(tmp.path, 'app.yaml'), app(port!));
    const r = await runCli(['run', '-f', join(tmp.path, 'app.yaml'), '--root-dir', join(tmp.path, 'root'), ...ports]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, ingressLine);
    assert.equal([...r.stderr.matchAll(/^ingress\/web reachable/gm)].length, 1, r.stderr);
    assert.ok(r.stderr.indexOf('ingress/web reachable') < r.stderr.indexOf('all 3 objects ok'), r.stderr);
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('up -f: the URL printed answers through the ingress proxy', async () => {
  const tmp = await tempDir();
  try {
    const [port] = await freePorts(1);
    writeFileSync(join(tmp.path, 'app.yaml'), app(port!));
    const up = startCli(['up', '-f', join(tmp.path, 'app.yaml'), '--root-dir', join(tmp.path, 'root'), ...ports]);
    try {
      await up.waitFor('stderr', ingressLine, 90_000);
      const proxyPort = Number(ingressLine.exec(up.stderr())![2]);
      // web.localhost is the loopback (RFC 6761); the request goes there with its Host header.
      const body = await waitFor(
        'the Ingress URL answers',
        () =>
          new Promise<string>((resolve, reject) => {
            const req = request(
              { host: '127.0.0.1', port: proxyPort, path: '/app/x', headers: { host: `web.localhost:${proxyPort}` }, agent: false },
              (res) => {
                let b = '';
                res.on('data', (d: Buffer) => (b += d));
                res.on('end', () => resolve(res.statusCode === 200 ? b : ''));
              },
            );
            req.on('error', reject);
            req.end();
          }),
      );
      assert.equal(body, 'web saw /app/x');
    } finally {
      up.child.kill('SIGINT');
    }
    const { code } = await up.exited;
    assert.equal(code, 0, up.stderr());
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
