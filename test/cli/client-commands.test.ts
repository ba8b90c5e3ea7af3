// podvisor's kubectl-like commands against a real `podvisor agent` process: apply (created,
// configured, unchanged; ConfigMaps resolved by the pods' env), up -d with a ConfigMap, get (table,
// wide, json, yaml, name, selectors, NotFound), get -w seeing ADDED/MODIFIED/DELETED, describe, exec
// (exit code, stdin), delete waiting until the pod is gone, port-forward carrying a real HTTP request,
// and top pods.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { mainJs, runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from '../agent/helpers.js';
import type { Container } from '../../src/api/types.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';

let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess;

// --root-dir right after the command name: what follows `--` belongs to exec's command.
const cli = (cmd: string, ...args: string[]) => runCli([cmd, '--root-dir', root, ...args]);

function manifest(name: string, body: string): string {
  const file = join(dir.path, `${name}.yaml`);
  writeFileSync(file, body);
  return file;
}

const shellPodYaml = (name: string, script: string, extra: Partial<Container> = {}) =>
  manifestYaml(pod(name, [shell('main', script, extra)], { terminationGracePeriodSeconds: 2 }, { labels: { app: name } }));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function running(name: string): Promise<void> {
  await waitFor(`${name} running`, async () => new RegExp(`^${name} +1/1 +Running`, 'm').test((await cli('get', 'pods')).stdout), 60_000);
}

before(async () => {
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
});

after(async () => {
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  await dir.remove();
});

test('apply: created, configured, unchanged; the ConfigMap of the same file resolves the env', async () => {
  const body = (image: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
data:
  TEXT: hello from a configmap
---
${shellPodYaml('web', 'echo "$TEXT"; exec sleep 300', { image, env: [{ name: 'TEXT', valueFrom: { configMapKeyRef: { name: 'greeting', key: 'TEXT' } } }] })}`;
  let r = await cli('apply', '-f', manifest('web', body('busybox')));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'configmap/greeting created\npod/web created\n');
  await running('web');
  await waitFor('the env from the ConfigMap', async () => (await cli('logs', 'web')).stdout === 'hello from a configmap\n', 30_000);
  r = await cli('apply', '-f', manifest('web', body('busybox')));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'configmap/greeting unchanged\npod/web unchanged\n');
  r = await cli('apply', '-f', manifest('web', body('busybox:1.36')));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'configmap/greeting unchanged\npod/web configured\n');
  // A forbidden change is the API server's 422.
  r = await cli('apply', '-f', manifest('web2', body('busybox:1.36').replace('sleep 300', 'sleep 301')));
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields/m);
  await running('web');
});

test('up -d sends the ConfigMaps and Secrets of its manifests to the agent', async () => {
  const file = manifest(
    'updcm',
    `apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  PASSWORD: s3cret
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  MODE: fast
---
${shellPodYaml('withrefs', 'echo "$MODE $PASSWORD"; exec sleep 300', {
  env: [
    { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'MODE' } } },
    { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'PASSWORD' } } },
  ],
})}`,
  );
  const r = await cli('up', '-d', '-f', file, '--wait=running');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'configmap/settings created\nsecret/creds created\npod/withrefs created\n');
  await waitFor('env from the ConfigMap and the Secret', async () => (await cli('logs', 'withrefs')).stdout === 'fast s3cret\n', 30_000);
  const cm = await call(join(root, 'podvisor.sock'), 'GET', '/api/v1/namespaces/default/configmaps/settings');
  assert.equal(cm.status, 200);
  assert.deepEqual(cm.json().data, { MODE: 'fast' });
  const del = await cli('delete', '-f', file, '--now');
  assert.equal(del.code, 0, del.stderr);
  assert.equal(del.stdout, 'pod "withrefs" deleted\nconfigmap "settings" deleted\nsecret "creds" deleted\n');
});

test('get: table, -o wide, -o json, -o yaml, -o name, -l, -A, NotFound', async () => {
  await running('web');
  let r = await cli('get', 'pods');
  assert.equal(r.code, 0, r.stderr);
  // One restart (the image change), shown with its age as kubectl shows it.
  assert.match(r.stdout, /^NAME +READY +STATUS +RESTARTS +AGE\nweb +1\/1 +Running +1 \(\S+ ago\) +\d+[smh]\n$/);
  r = await cli('get', 'pods', '-o', 'wide');
  assert.match(
    r.stdout,
    /^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES\nweb +1\/1 +Running +1 \(\S+ ago\) +\S+ +127\.0\.0\.1 +\S+ +<none> +<none>\n$/,
  );
  r = await cli('get', 'pods', '-o', 'json');
  const list = JSON.parse(r.stdout) as { kind: string; items: Array<{ kind: string; metadata: { name: string } }> };
  assert.equal(list.kind, 'List');
  assert.deepEqual(
    list.items.map((p) => [p.kind, p.metadata.name]),
    [['Pod', 'web']],
  );
  r = await cli('get', 'pod', 'web', '-o', 'yaml');
  assert.match(r.stdout, /^apiVersion: v1\nkind: Pod\nmetadata:\n/);
  r = await cli('get', 'pods', '-o', 'name');
  assert.equal(r.stdout, 'pod/web\n');
  r = await cli('get', 'pods', '-l', 'app=nothing');
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'No resources found in default namespace.\n');
  r = await cli('get', 'pods', '-A', '-l', 'app=web');
  assert.match(r.stdout, /^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE\ndefault +web +1\/1 +Running/);
  r = await cli('get', 'pod', 'nope');
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server (NotFound): pods "nope" not found\n');
  r = await cli('get', 'events');
  assert.match(r.stdout, /^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE\n/);
  assert.match(r.stdout, /Normal +Started +pod\/web +Started container main/);
});

test('get -w --output-watch-events sees ADDED, MODIFIED and DELETED', async () => {
  const watch = startCli(['get', 'pods', '-w', '--output-watch-events', '-l', 'app=watched', '--root-dir', root]);
  try {
    await waitFor('the watch to start', () => /No resources found|EVENT/.test(watch.stdout() + watch.stderr()) || watch.child.exitCode !== null, 5_000).catch(
      () => {},
    );
    const file = manifest('watched', shellPodYaml('watched', 'exec sleep 300'));
    assert.equal((await cli('apply', '-f', file)).code, 0);
    await watch.waitFor('stdout', /^ADDED +watched /m, 60_000);
    await watch.waitFor('stdout', /^MODIFIED +watched +1\/1 +Running/m, 60_000);
    const del = await cli('delete', 'pod', 'watched');
    assert.equal(del.code, 0, del.stderr);
    await watch.waitFor('stdout', /^MODIFIED +watched +\S+ +Terminating/m, 30_000);
    await watch.waitFor('stdout', /^DELETED +watched /m, 30_000);
    assert.match(watch.stdout(), /^EVENT +NAME +READY +STATUS +RESTARTS +AGE$/m);
  } finally {
    watch.child.kill('SIGTERM');
    await watch.exited;
  }
});

test("describe pod: kubectl's layout with containers, conditions and events", async () => {
  await running('web');
  const r = await cli('describe', 'pod', 'web');
  assert.equal(r.code, 0, r.stderr);
  for (const re of [
    /^Name: +web$/m,
    /^Namespace: +default$/m,
    /^Node: +\S+\/127\.0\.0\.1$/m,
    /^Start Time: +\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/m,
    /^Labels: +app=web$/m,
    /^Status: +Running$/m,
    /^IP: +127\.0\.0\.1$/m,
    /^Containers:\n {2}main:\n {4}Container ID: +\S+\n {4}Image: +busybox:1\.36$/m,
    /^ {4}State: +Running\n {6}Started: +.+\n {4}Last State: +Terminated\n {6}Reason: +\S+\n {6}Exit Code: +\d+/m,
    /^ {4}Ready: +True\n {4}Restart Count: +1$/m,
    /^ {6}TEXT: +<set to the key 'TEXT' of config map 'greeting'> +Optional: false$/m,
    /^Conditions:\n {2}Type +Status\n/m,
    /^ {2}Ready +True $/m,
    /^QoS Class: +BestEffort$/m,
    /^Events:\n {2}Type +Reason +Age +From +Message\n {2}---- +------ +---- +---- +-------\n/m,
    /Normal +Killing +\S+ +kubelet +Container main definition changed, will be restarted/,
  ]) {
    assert.match(r.stdout, re);
  }
  const missing = await cli('describe', 'pod', 'nope');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): pods "nope" not found\n');
});

test('exec: output, the exit code passed through, stdin with -i', async () => {
  await running('web');
  let r = await cli('exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7');
  assert.equal(r.code, 7, r.stderr);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\ncommand terminated with exit code 7\n');
  r = await cli('exec', 'web', '--', 'true');
  assert.equal(r.code, 0, r.stderr);
  r = await cli('exec', 'nope', '--', 'true');
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server (NotFound): pods "nope" not found\n');

  const child = spawn(process.execPath, [mainJs, 'exec', '-i', 'web', '--root-dir', root, '--', 'sh', '-c', 'tr a-z A-Z; echo end'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stdin.end('from stdin\n');
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0);
  assert.equal(out, 'FROM STDIN\nend\n');
});

test("port-forward: a real HTTP request reaches the pod's port", async () => {
  const podPort = await freePort();
  const localPort = await freePort();
  const script = `exec ${JSON.stringify(process.execPath)} -e "require('http').createServer((q, s) => s.end('pod says ' + q.url)).listen(${podPort}, '127.0.0.1')"`;
  assert.equal((await cli('apply', '-f', manifest('server', shellPodYaml('server', script)))).code, 0);
  await running('server');
  const pf = startCli(['port-forward', 'server', `${localPort}:${podPort}`, '--root-dir', root]);
  try {
    await pf.waitFor('stdout', new RegExp(`Forwarding from 127\\.0\\.0\\.1:${localPort} -> ${podPort}`));
    const body = await waitFor('an answer through the forwarded port', () => httpGet(`http://127.0.0.1:${localPort}/hello`));
    assert.equal(body, 'pod says /hello');
    assert.match(pf.stdout(), new RegExp(`Handling connection for ${localPort}`));
  } finally {
    pf.child.kill('SIGTERM');
    await pf.exited;
  }
  const help = await runCli(['port-forward', '--help']);
  assert.match(help.stdout, /share the host network/);
  assert.match(help.stdout, /127\.0\.0\.1:REMOTE_PORT/);
});

test('top pods: CPU and memory from the metrics API', async () => {
  await running('web');
  let r = await cli('top', 'pods');
  await waitFor('metrics', async () => (r = await cli('top', 'pods')).code === 0, 60_000);
  assert.match(r.stdout, /^NAME +CPU\(cores\) +MEMORY\(bytes\) *\n/);
  assert.match(r.stdout, /^web +\d+m +\d+Mi *$/m);
  r = await cli('top', 'pod', 'web', '--containers');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^POD +NAME +CPU\(cores\) +MEMORY\(bytes\) *\nweb +main +\d+m +\d+Mi *\n$/);
});

test('delete: waits until the pod is gone; --wait=false returns at once; NotFound', async () => {
  const file = manifest('slow', shellPodYaml('slow', 'trap "sleep 1; exit 0" TERM; while :; do sleep 0.1; done'));
  assert.equal((await cli('apply', '-f', file)).code, 0);
  await running('slow');
  const r = await cli('delete', 'pod', 'slow');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'pod "slow" deleted\n');
  const after = await call(join(root, 'podvisor.sock'), 'GET', '/api/v1/namespaces/default/pods/slow');
  assert.equal(after.status, 404, 'gone when delete returns');
  const missing = await cli('delete', 'pod', 'slow');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): pods "slow" not found\n');
  assert.equal((await cli('delete', 'pod', 'slow', '--ignore-not-found')).code, 0);
});

function httpGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}
