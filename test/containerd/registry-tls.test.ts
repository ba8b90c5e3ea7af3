// A self-signed HTTPS registry through --registry-config: docker-registry serving TLS with a
// certificate made here (its own CA), named as the `ca` of the registry's hosts.toml in containerd's
// layout; `up -d -f` of a pod whose image lives only there pulls it (the kubelet's Pulling and
// `Successfully pulled image … Image size: N bytes.` events) and reaches Ready.

import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { runCli } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { freePort, skipReason } from './harness.js';
import { buildTestImages, pushImage } from './images.js';

const run = promisify(execFile);
const skip = await skipReason();
let dir: string;
let registry: ChildProcess | undefined;
let address: string;
let cert: string;

/** Whether the registry answers /v2/ over TLS with the certificate made for it. */
function tlsOK(url: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ca: readFileSync(ca), timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'podvisor-tlsreg-'));
  cert = join(dir, 'registry.crt');
  const key = join(dir, 'registry.key');
  // A self-signed certificate for 127.0.0.1: its own CA.
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1\nlog: {level: error}\nstorage:\n  filesystem: {rootdirectory: ${join(dir, 'storage')}}\nhttp:\n  addr: ${address}\n  tls: {certificate: ${cert}, key: ${key}}\n`,
  );
  registry = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
  await waitFor('the TLS registry', () => tlsOK(`https://${address}/v2/`, cert));
  const layout = await buildTestImages();
  await pushImage(layout, 'web', address);
});
after(async () => {
  if (registry && registry.exitCode === null) {
    registry.kill('SIGTERM');
    await new Promise((r) => registry!.once('exit', r));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('--registry-config with a hosts.toml naming the ca of a self-signed HTTPS registry: the image is pulled and the pod is Ready', { skip }, async () => {
  const root = join(dir, 'root');
  const hosts = join(dir, 'registry-config');
  mkdirSync(join(hosts, address), { recursive: true });
  writeFileSync(
    join(hosts, address, 'hosts.toml'),
    `server = "https://${address}"\n\n[host."https://${address}"]\n  capabilities = ["pull", "resolve"]\n  ca = "${cert}"\n`,
  );
  const manifest = join(dir, 'pod.yaml');
  writeFileSync(
    manifest,
    `apiVersion: v1
kind: Pod
metadata: {name: secure}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: ${address}/podvisor-test/web:v1
    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
`,
  );
  try {
    const r = await runCli([
      'up',
      '-d',
      '-f',
      manifest,
      '--wait=ready',
      '--timeout=90s',
      '--runtime=containerd',
      `--registry-config=${hosts}`,
      `--root-dir=${root}`,
    ]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const ev = await runCli(['get', 'events', '-o', 'json', `--root-dir=${root}`]);
    assert.equal(ev.code, 0, ev.stderr);
    const events = (JSON.parse(ev.stdout) as { items: Array<{ reason?: string; message?: string }> }).items;
    assert.ok(
      events.some((e) => e.reason === 'Pulling' && e.message === `Pulling image "${address}/podvisor-test/web:v1"`),
      JSON.stringify(events),
    );
    const pulled = events.find((e) => e.reason === 'Pulled');
    assert.match(
      pulled?.message ?? '',
      new RegExp(
        `^Successfully pulled image "${address.replace(/[.]/g, '\\.')}/podvisor-test/web:v1" in [0-9.]+m?s \\([0-9.]+m?s including waiting\\)\\. Image size: [0-9]+ bytes\\.$`,
      ),
    );
  } finally {
    await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
  }
});
