// kubectl 1.20 against a real `podvisor agent` over TLS and its token, with the kubeconfig the agent
// writes: apply (create, image update, unchanged), create twice (AlreadyExists), configmaps, get,
// get -w (ADDED, MODIFIED, DELETED), logs and logs -f, exec (exit code 7 passed through, stdin),
// delete waiting for the pod to go, port-forward carrying a real HTTP request, and top pod. Each test
// has its own discovery cache dir.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { kubectl, kubectlPath, kubectlSpawn, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

function manifest(name: string, body: string): string {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, body);
  return file;
}

const podYaml = (name: string, script: string, image = 'busybox') =>
  manifestYaml(pod(name, [shell('main', script, { image })], { terminationGracePeriodSeconds: 1 }, { labels: { app: name } }));

async function runningPod(a: { kubeconfig: string; dir: string }, name: string): Promise<void> {
  await waitFor(`${name} to run`, async () => new RegExp(`^${name}\\s+1/1\\s+Running`, 'm').test((await kubectl(a, ['get', 'pods'])).stdout), 60_000);
}

test('kubectl apply (created, configured, unchanged), get, logs, exec exit code, delete', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['apply', '-f', manifest('web', podYaml('web', 'echo hello; exec sleep 300'))]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/web created/);
  await runningPod(a, 'web');
  await waitFor('the log line', async () => (await kubectl(a, ['logs', 'web'])).stdout === 'hello\n', 30_000);
  r = await kubectl(a, ['apply', '-f', manifest('web', podYaml('web', 'echo hello; exec sleep 300'))]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/web unchanged/);
  r = await kubectl(a, ['apply', '-f', manifest('web', podYaml('web', 'echo hello; exec sleep 300', 'busybox:1.36'))]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/web configured/);
  await waitFor(
    'the new image to run',
    async () => /busybox:1\.36/.test((await kubectl(a, ['get', 'pod', 'web', '-o', 'jsonpath={.status.containerStatuses[0].image}'])).stdout),
    60_000,
  );
  r = await kubectl(a, ['exec', 'web', '--', 'sh', '-c', 'echo in; exit 7']);
  assert.equal(r.stdout, 'in\n');
  assert.equal(r.code, 7);
  r = await kubectl(a, ['exec', '-i', 'web', '--', 'sh', '-c', 'tr a-z A-Z'], 'from stdin\n');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'FROM STDIN\n');
  r = await kubectl(a, ['delete', 'pod', 'web']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod "web" deleted/);
  r = await kubectl(a, ['get', 'pod', 'web']);
  assert.equal(r.code, 1, 'gone once delete returned');
  assert.match(r.stderr, /Error from server \(NotFound\): pods "web" not found/);
});

test('kubectl create twice: AlreadyExists', { skip }, async (t) => {
  const a = env.api(t);
  const file = manifest('once', podYaml('once', 'exec sleep 300'));
  let r = await kubectl(a, ['create', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/once created/);
  r = await kubectl(a, ['create', '-f', file]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Error from server \(AlreadyExists\).*pods "once" already exists/);
  assert.equal((await kubectl(a, ['delete', 'pod', 'once', '--grace-period=0', '--force'])).code, 0);
});

test('kubectl create configmap, get, delete (waits on the configmaps watch)', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, ['create', 'configmap', 'settings', '--from-literal=MODE=fast']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /configmap\/settings created/);
  r = await kubectl(a, ['get', 'configmap', 'settings', '-o', 'jsonpath={.data.MODE}']);
  assert.equal(r.stdout, 'fast');
  r = await kubectl(a, ['delete', 'configmap', 'settings']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /configmap "settings" deleted/);
});

test('kubectl get pods -w sees ADDED, MODIFIED and DELETED', { skip }, async (t) => {
  const a = env.api(t);
  const watch = kubectlSpawn(a, ['get', 'pods', '-w', '--output-watch-events', '-l', 'app=watched']);
  try {
    // The watch starts after its (empty) list; give it the discovery round first.
    await waitFor('discovery', async () => (await kubectl(a, ['get', 'pods', '-l', 'app=watched'])).code === 0, 30_000);
    assert.equal((await kubectl(a, ['apply', '-f', manifest('watched', podYaml('watched', 'exec sleep 300'))])).code, 0);
    await waitFor('ADDED', () => /^ADDED\s+watched\s/m.test(watch.out()), 60_000);
    await waitFor('MODIFIED to Running', () => /^MODIFIED\s+watched\s+1\/1\s+Running/m.test(watch.out()), 60_000);
    const del = await kubectl(a, ['delete', 'pod', 'watched']);
    assert.equal(del.code, 0, del.stderr);
    await waitFor('MODIFIED to Terminating', () => /^MODIFIED\s+watched\s+\S+\s+Terminating/m.test(watch.out()), 30_000);
    await waitFor('DELETED', () => /^DELETED\s+watched\s/m.test(watch.out()), 30_000);
  } finally {
    watch.kill('SIGTERM');
  }
});

test('kubectl logs -f follows new lines', { skip }, async (t) => {
  const a = env.api(t);
  assert.equal(
    (await kubectl(a, ['apply', '-f', manifest('ticker', podYaml('ticker', 'i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.2; done'))])).code,
    0,
  );
  await runningPod(a, 'ticker');
  const follow = kubectlSpawn(a, ['logs', '-f', 'ticker']);
  try {
    await waitFor('the first line', () => /tick 0\n/.test(follow.out()), 30_000);
    // Lines written after the request reach the follower.
    await waitFor('later lines', () => /tick 20\n/.test(follow.out()), 30_000);
  } finally {
    follow.kill('SIGTERM');
  }
  assert.equal((await kubectl(a, ['delete', 'pod', 'ticker', '--grace-period=0', '--force'])).code, 0);
});

test('kubectl port-forward carries a real HTTP request; kubectl top pod', { skip }, async (t) => {
  const a = env.api(t);
  const free = async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  };
  const podPort = await free();
  const localPort = await free();
  const script = `exec ${JSON.stringify(process.execPath)} -e "require('http').createServer((q, s) => s.end('pod says ' + q.url)).listen(${podPort}, '127.0.0.1')"`;
  assert.equal((await kubectl(a, ['apply', '-f', manifest('server', podYaml('server', script))])).code, 0);
  await runningPod(a, 'server');
  const pf = kubectlSpawn(a, ['port-forward', 'pod/server', `${localPort}:${podPort}`]);
  try {
    await waitFor('port-forward to listen', () => new RegExp(`Forwarding from 127\\.0\\.0\\.1:${localPort} -> ${podPort}`).test(pf.out()), 30_000);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`http://127.0.0.1:${localPort}/through`, { agent: false }, (res) => {
        let b = '';
        res.on('data', (d: Buffer) => (b += d));
        res.on('end', () => resolve(b));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'pod says /through');
  } finally {
    pf.kill('SIGTERM');
  }
  let top = await kubectl(a, ['top', 'pod', 'server']);
  await waitFor('metrics', async () => (top = await kubectl(a, ['top', 'pod', 'server'])).code === 0, 60_000);
  assert.match(top.stdout, /^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*\nserver\s+\d+m\s+\d+Mi\s*\n$/);
  assert.equal((await kubectl(a, ['delete', 'pod', 'server', '--grace-period=0', '--force'])).code, 0);
});

test('kubectl get -o wide and -A, describe, get events, logs --previous of a restarted container', { skip }, async (t) => {
  const a = env.api(t);
  // Each run prints its start, then fails after a moment: a restart with a previous log.
  let r = await kubectl(a, ['apply', '-f', manifest('flaky', podYaml('flaky', 'echo run $(date +%s%N); sleep 1; exit 2'))]);
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    'a restart',
    async () => {
      const out = (await kubectl(a, ['get', 'pod', 'flaky', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}'])).stdout;
      return Number(out) >= 1;
    },
    60_000,
  );
  r = await kubectl(a, ['get', 'pods', '-o', 'wide']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m);
  assert.match(r.stdout, /^flaky\s+\d\/1\s+\S+\s+\d+/m);
  r = await kubectl(a, ['get', 'pods', '-A']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
  assert.match(r.stdout, /^default\s+flaky\s/m);
  r = await kubectl(a, ['describe', 'pod', 'flaky']);
  assert.equal(r.code, 0, r.stderr);
  for (const re of [
    /^Name:\s+flaky$/m,
    /^Namespace:\s+default$/m,
    /^Containers:$/m,
    /^\s+Restart Count:\s+[1-9]/m,
    /^Conditions:$/m,
    /^Events:$/m,
    /Started\s+.*Started container main/,
  ]) {
    assert.match(r.stdout, re);
  }
  r = await kubectl(a, ['get', 'events', '--field-selector', 'involvedObject.name=flaky']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
  assert.match(r.stdout, /Normal\s+Started\s+pod\/flaky\s+Started container main/);
  r = await kubectl(a, ['logs', 'flaky', '--previous']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^run \d+\n$/);
  r = await kubectl(a, ['delete', 'pod', 'flaky']);
  assert.equal(r.code, 0, r.stderr);
});
