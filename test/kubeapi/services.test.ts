// Services on a real `podvisor agent` with kubectl: create of every type (ClusterIP from the root
// dir's own range, 127.99.0.0/16 unless another root dir of the host has it; NodePort from
// 30000-32767, LoadBalancer published on 127.0.0.1, headless, ExternalName), `kubectl get svc`
// columns (and podvisor get svc|endpoints|endpointslices), `kubectl expose`, the API server's errors
// for a taken ClusterIP or NodePort and for invalid ports, ClusterIPs and NodePorts kept across a
// restart, and the service-link variables of a pod started after its Service; kubectl port-forward svc/NAME.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { call } from '../agent/helpers.js';
import { kubectl, kubectlPath, kubectlSpawn, waitFor } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess | undefined;

async function startAgent(): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
  await p.waitFor('stderr', /podvisor agent started/);
  return p;
}

async function stopAgent(): Promise<void> {
  if (!agent) return;
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  agent = undefined;
}

before(async () => {
  if (skip) return;
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = await startAgent();
});

after(async () => {
  await stopAgent();
  await dir?.remove();
});

/** The root dir's service range (service-network.json) and the prefix of its addresses (`127.99.`). */
function net(): { cidr: string; prefix: string } {
  const cidr = (JSON.parse(readFileSync(join(root, 'service-network.json'), 'utf8')) as { serviceClusterIPRange: string }).serviceClusterIPRange;
  return { cidr, prefix: cidr.split('.').slice(0, 2).join('.') + '.' };
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function api(t: { after(fn: () => void): void }): { kubeconfig: string; dir: string } {
  const d = mkdtempSync(join(dir.path, 'kubectl-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return { kubeconfig: join(root, 'kubeconfig'), dir: d };
}

const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });

test('kubectl create service of each type, get svc columns, expose', { skip }, async (t) => {
  const a = api(t);
  for (const args of [
    ['clusterip', 'web', '--tcp=80:8080'],
    ['nodeport', 'np', '--tcp=8081:8081'],
    ['loadbalancer', 'lb', '--tcp=8082:8082'],
    ['clusterip', 'hl', '--clusterip=None'],
    ['externalname', 'ext', '--external-name=example.com'],
  ]) {
    const r = await kubectl(a, ['create', 'service', ...args]);
    assert.equal(r.code, 0, r.stderr);
  }
  const r = await kubectl(a, ['get', 'svc']);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split('\n');
  assert.match(rows[0]!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
  const row = (name: string) => rows.find((l) => l.startsWith(`${name} `))!.split(/\s+/);
  assert.deepEqual(row('web').slice(1, 5), ['ClusterIP', row('web')[2], '<none>', '80/TCP']);
  assert.match(row('web')[2]!, new RegExp(`^${esc(net().prefix)}\\d+\\.\\d+$`));
  assert.equal(row('np')[1], 'NodePort');
  assert.match(row('np')[4]!, /^8081:3\d{4}\/TCP$/);
  assert.deepEqual(row('lb').slice(1, 2), ['LoadBalancer']);
  assert.equal(row('lb')[3], '127.0.0.1');
  assert.deepEqual(row('hl').slice(1, 3), ['ClusterIP', 'None']);
  assert.deepEqual(row('ext').slice(1, 4), ['ExternalName', '<none>', 'example.com']);
  const ips = rows
    .slice(1)
    .filter((l) => !l.startsWith('kubernetes '))
    .map((l) => l.split(/\s+/)[2])
    .filter((ip) => ip?.startsWith(net().prefix));
  assert.equal(new Set(ips).size, 3, 'each ClusterIP is its own');

  // podvisor's own get prints the same table.
  const own = await runCli(['get', 'svc', '--root-dir', root]);
  assert.equal(own.code, 0, own.stderr);
  assert.deepEqual(
    own.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/).slice(0, 5).join(' ')),
    rows.map((l) => l.split(/\s+/).slice(0, 5).join(' ')),
  );
  for (const kind of ['endpoints', 'endpointslices']) {
    const g = await runCli(['get', kind, '--root-dir', root]);
    assert.equal(g.code, 0, g.stderr);
    assert.match(g.stdout, kind === 'endpoints' ? /^NAME\s+ENDPOINTS\s+AGE\n/ : /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\n/);
  }

  const yaml = await kubectl(a, ['get', 'svc', 'web', '-o', 'jsonpath={.spec.type} {.spec.sessionAffinity} {.spec.ports[0].protocol} {.spec.ipFamilies[0]}']);
  assert.equal(yaml.stdout, 'ClusterIP None TCP IPv4');

  const file = join(dir.path, 'exposed.yaml');
  writeFileSync(
    file,
    manifestYaml(pod('exposed', [shell('main', 'exec sleep 300', { ports: [{ containerPort: 9090 }] })], {}, { labels: { app: 'exposed' } })),
  );
  assert.equal((await kubectl(a, ['apply', '-f', file])).code, 0);
  const e = await kubectl(a, ['expose', 'pod', 'exposed', '--port=9999', '--target-port=9090']);
  assert.equal(e.code, 0, e.stderr);
  assert.match(e.stdout, /service\/exposed exposed/);
  const sel = await kubectl(a, ['get', 'svc', 'exposed', '-o', 'jsonpath={.spec.selector.app} {.spec.ports[0].port} {.spec.ports[0].targetPort}']);
  assert.equal(sel.stdout, 'exposed 9999 9090');
  assert.equal((await kubectl(a, ['delete', 'pod', 'exposed', '--grace-period=1'])).code, 0);
});

test('the API server’s errors: a taken ClusterIP or NodePort, ports without names, a NodePort on a ClusterIP service', { skip }, async () => {
  const sock = join(root, 'podvisor.sock');
  let r = await call(
    sock,
    'POST',
    '/api/v1/namespaces/default/services',
    svc('taken-a', { clusterIP: `${net().prefix}1.1`, ports: [{ port: 80 }], type: 'NodePort' }),
  );
  assert.equal(r.status, 201, r.body);
  const nodePort = r.json().spec.ports[0].nodePort as number;
  assert.ok(nodePort >= 30000 && nodePort <= 32767);
  assert.equal(r.json().spec.ports[0].targetPort, 80);

  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('taken-b', { clusterIP: `${net().prefix}1.1`, ports: [{ port: 80 }] }));
  assert.equal(r.status, 422);
  assert.equal(
    r.json().message,
    `Service "taken-b" is invalid: spec.clusterIPs: Invalid value: []string{"${net().prefix}1.1"}: failed to allocate IP ${net().prefix}1.1: provided IP is already allocated`,
  );
  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('taken-c', { type: 'NodePort', ports: [{ port: 81, nodePort }] }));
  assert.equal(r.status, 422);
  assert.equal(r.json().message, `Service "taken-c" is invalid: spec.ports[0].nodePort: Invalid value: ${nodePort}: provided port is already allocated`);
  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('range', { clusterIP: '10.0.0.5', ports: [{ port: 80 }] }));
  assert.equal(r.status, 422);
  assert.match(r.json().message, new RegExp(`the provided IP \\(10\\.0\\.0\\.5\\) is not in the valid range. The range of valid IPs is ${esc(net().cidr)}`));
  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('two', { ports: [{ port: 80 }, { port: 81 }] }));
  assert.equal(r.status, 422);
  assert.deepEqual(
    r.json().details.causes.map((c: { field: string }) => c.field),
    ['spec.ports[0].name', 'spec.ports[1].name'],
  );
  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('cip', { ports: [{ port: 80, nodePort: 30123 }] }));
  assert.equal(r.status, 422);
  assert.match(r.json().message, /spec\.ports\[0\]\.nodePort: Forbidden: may not be used when `type` is 'ClusterIP'/);
  r = await call(sock, 'POST', '/api/v1/namespaces/default/services', svc('Bad', { ports: [{ port: 80 }] }));
  assert.equal(r.status, 422);
  assert.match(r.json().message, /metadata\.name: Invalid value: "Bad": a DNS-1035 label/);

  // An update keeps the ClusterIP and NodePort it does not name; changing the ClusterIP is refused.
  const got = (await call(sock, 'GET', '/api/v1/namespaces/default/services/taken-a')).json();
  const { clusterIP: _ip, clusterIPs: _ips, ...rest } = got.spec;
  r = await call(sock, 'PUT', '/api/v1/namespaces/default/services/taken-a', { ...got, spec: { ...rest, ports: [{ port: 80 }] } });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json().spec.clusterIP, `${net().prefix}1.1`);
  assert.equal(r.json().spec.ports[0].nodePort, nodePort);
  r = await call(sock, 'PUT', '/api/v1/namespaces/default/services/taken-a', {
    ...r.json(),
    spec: { ...r.json().spec, clusterIP: `${net().prefix}1.2`, clusterIPs: [`${net().prefix}1.2`] },
  });
  assert.equal(r.status, 422);
  assert.match(r.json().message, new RegExp(`spec\\.clusterIPs\\[0\\]: Invalid value: "${esc(net().prefix)}1\\.2": may not change once set`));
});

test('ClusterIPs and NodePorts are kept across an agent restart', { skip }, async (t) => {
  const a = api(t);
  const before = await kubectl(a, ['get', 'svc', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.clusterIP}/{.spec.ports[*].nodePort} {end}']);
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, new RegExp(`np=${esc(net().prefix)}\\d+\\.\\d+/3\\d{4}`));
  await stopAgent();
  agent = await startAgent();
  const afterRestart = await kubectl(a, ['get', 'svc', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.clusterIP}/{.spec.ports[*].nodePort} {end}']);
  assert.equal(afterRestart.stdout, before.stdout);
  // A new Service gets an address none of the kept ones has.
  const r = await kubectl(a, ['create', 'service', 'clusterip', 'after', '--tcp=80:80']);
  assert.equal(r.code, 0, r.stderr);
  const ip = (await kubectl(a, ['get', 'svc', 'after', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
  assert.ok(!before.stdout.includes(`=${ip}/`), `${ip} is new`);
});

test('a pod started after its Service gets the service-link variables', { skip }, async (t) => {
  const a = api(t);
  const r = await kubectl(a, ['create', 'service', 'clusterip', 'db-main', '--tcp=5432:5432']);
  assert.equal(r.code, 0, r.stderr);
  const ip = (await kubectl(a, ['get', 'svc', 'db-main', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
  const file = join(dir.path, 'env.yaml');
  writeFileSync(
    file,
    [
      manifestYaml(
        pod('env-links', [shell('main', 'echo "$DB_MAIN_SERVICE_HOST:$DB_MAIN_SERVICE_PORT $DB_MAIN_PORT"; exec sleep 300')], {
          terminationGracePeriodSeconds: 1,
        }),
      ),
      manifestYaml(
        pod('env-nolinks', [shell('main', 'echo "[$DB_MAIN_SERVICE_HOST]"; exec sleep 300')], { terminationGracePeriodSeconds: 1, enableServiceLinks: false }),
      ),
    ].join('---\n'),
  );
  assert.equal((await kubectl(a, ['apply', '-f', file])).code, 0);
  await waitFor('the variables in the log', async () => (await kubectl(a, ['logs', 'env-links'])).stdout === `${ip}:5432 tcp://${ip}:5432\n`, 30_000);
  await waitFor('no variables without service links', async () => (await kubectl(a, ['logs', 'env-nolinks'])).stdout === '[]\n', 30_000);
  await kubectl(a, ['delete', 'pod', 'env-links', 'env-nolinks', '--grace-period=1']);
});

test('kubectl port-forward svc/NAME reaches a pod of the Service, its named targetPort resolved', { skip }, async (t) => {
  const a = api(t);
  const file = join(dir.path, 'pf.yaml');
  const server = "require('http').createServer((q, s) => s.end('pf-ok')).listen(18556, '127.0.0.1')";
  writeFileSync(
    file,
    manifestYaml(
      pod(
        'pf',
        [{ name: 'main', image: 'node', command: ['node', '-e', server], ports: [{ name: 'http', containerPort: 18556 }] }],
        { terminationGracePeriodSeconds: 1 },
        { labels: { app: 'pf' } },
      ),
    ),
  );
  assert.equal((await kubectl(a, ['apply', '-f', file])).code, 0);
  assert.equal((await kubectl(a, ['expose', 'pod', 'pf', '--port=80', '--target-port=http'])).code, 0);
  await waitFor('pf running', async () => /^pf\s+1\/1\s+Running/m.test((await kubectl(a, ['get', 'pods', 'pf'])).stdout), 60_000);
  const pf = kubectlSpawn(a, ['port-forward', 'svc/pf', '18667:80']);
  t.after(() => pf.kill());
  await waitFor('port-forward listening', () => /Forwarding from 127\.0\.0\.1:18667 -> 18556/.test(pf.out()), 30_000);
  const body = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: 18667, path: '/', agent: false }, (res) => {
      let b = '';
      res.on('data', (c: Buffer) => (b += c.toString()));
      res.on('end', () => resolve(b));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(body, 'pf-ok');
  await kubectl(a, ['delete', 'pod', 'pf', '--grace-period=1']);
});
