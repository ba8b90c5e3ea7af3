// `podvisor agent --pod-network=cni` end to end, as root with the CNI plugins, through kubectl: two
// replicas of one template both listen on :8080, each Ready at its own pod IP (status.podIP and
// podIPs) with exec probes run inside its namespace; Endpoints list both IPs and the ClusterIP
// spreads over both, from the host and from a pod; the host reaches each pod at its IP; the
// namespaces survive an agent restart with the same IPs; deleting the pods and `down --all --agent`
// leave no namespace, veth or bridge.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';
import { bridgeName } from '../../src/runtime/cni-config.js';
import { podNetworkConfig, podNetworkHostProblems } from '../../src/runtime/process-runtime.js';

const run = promisify(execFile);
const problems = podNetworkHostProblems(podNetworkConfig('/nonexistent-root', '172.30.0.0/24'));
const skip = !kubectlPath ? 'kubectl is not installed' : problems.length ? `no pod network here: ${problems.join('; ')}` : false;

/** A /24 of 172.30.0.0/16, which no default network on these hosts uses. */
const cidr = `172.30.${randomInt(1, 255)}.0/24`;
const prefix = cidr.split('.').slice(0, 3).join('.') + '.';
/** A Service range outside the loopback, which the agent routes to the host: pods reach ClusterIPs too. */
const serviceRange = `10.98.${randomInt(1, 255)}.0/24`;
let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess | undefined;
let netnsBefore: Set<string>;

const netnsList = () =>
  new Set(
    execFileSync('ip', ['netns', 'list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .map((l) => l.split(' ')[0]!)
      .filter((n) => n.startsWith('podvisor-')),
  );
const ourNetns = () => [...netnsList()].filter((n) => !netnsBefore.has(n));
const bridgePorts = () => {
  const brif = `/sys/class/net/${bridgeName(root)}/brif`;
  return existsSync(brif) ? readdirSync(brif) : [];
};

async function startAgent(): Promise<CliProcess> {
  const p = startCli([
    'agent',
    '--root-dir',
    root,
    '--port',
    '0',
    '--address',
    '127.0.0.1',
    '--pod-network=cni',
    '--pod-cidr',
    cidr,
    '--service-cluster-ip-range',
    serviceRange,
  ]);
  await p.waitFor('stderr', /podvisor agent started/);
  return p;
}

/** The log of the agent stopped last (for the messages of assertions after a restart). */
let stoppedLog = '';

async function stopAgent(): Promise<void> {
  if (!agent) return;
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  stoppedLog = agent.stderr();
  agent = undefined;
}

before(async () => {
  if (skip) return;
  netnsBefore = netnsList();
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = await startAgent();
});

after(async () => {
  if (skip) return;
  await runCli(['down', '--all', '--agent', '--root-dir', root]).catch(() => undefined);
  await stopAgent();
  await dir?.remove();
});

const api = () => ({ kubeconfig: join(root, 'kubeconfig'), dir: join(dir.path, 'kubectl') });

/** An HTTP server answering its pod's name (HOSTNAME), on :8080 in every replica. */
const server = [
  'import http.server, os',
  'class H(http.server.BaseHTTPRequestHandler):',
  '    def do_GET(self):',
  "        b = os.environ['HOSTNAME'].encode()",
  '        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)',
  '    def log_message(self, *a): pass',
  "http.server.ThreadingHTTPServer(('', 8080), H).serve_forever()",
].join('\n');

const manifest = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'python',
                command: ['python3', '-c', server],
                ports: [{ containerPort: 8080, name: 'http' }],
                env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
                readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
                // An exec probe runs in the pod's namespace: eth0 there holds the pod IP (not so on the host).
                startupProbe: {
                  exec: { command: ['sh', '-c', 'ip -4 -o addr show eth0 | grep -q " $POD_IP/"'] },
                  periodSeconds: 1,
                  timeoutSeconds: 10,
                  failureThreshold: 120,
                },
              },
            ],
          },
        },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] } },
  ],
};

interface PodView {
  name: string;
  ip: string;
  ips: string[];
  ready: boolean;
  restarts: number;
  started: boolean;
}

async function pods(): Promise<PodView[]> {
  const r = await kubectl(api(), ['get', 'pods', '-l', 'app=web', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout) as {
    items: Array<{
      metadata: { name: string };
      status: {
        podIP?: string;
        podIPs?: Array<{ ip: string }>;
        conditions?: Array<{ type: string; status: string }>;
        containerStatuses?: Array<{ restartCount: number; started?: boolean }>;
      };
    }>;
  };
  return list.items.map((p) => ({
    name: p.metadata.name,
    ip: p.status.podIP ?? '',
    ips: (p.status.podIPs ?? []).map((x) => x.ip),
    ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    restarts: p.status.containerStatuses?.[0]?.restartCount ?? 0,
    started: p.status.containerStatuses?.[0]?.started === true,
  }));
}

const bothReady = () => waitFor('both replicas Ready', async () => ((await pods()).filter((p) => p.ready).length === 2 ? pods() : undefined), 60_000);

/** One request on a connection of its own (curl), as a new client would make it. */
async function curl(url: string): Promise<string> {
  const { stdout } = await run('curl', ['-sS', '--max-time', '5', url]);
  return stdout;
}

let firstIPs: Map<string, string>;

test('two replicas on one port: both Ready at their own IPs, reached from the host and through the ClusterIP', { skip }, async () => {
  const file = join(dir.path, 'web.json');
  writeFileSync(file, JSON.stringify(manifest));
  const applied = await kubectl(api(), ['apply', '-f', file]);
  assert.equal(applied.code, 0, applied.stderr);
  const ready = await bothReady();
  const ips = ready.map((p) => p.ip);
  assert.notEqual(ips[0], ips[1], 'each pod has its own IP');
  for (const p of ready) {
    assert.ok(p.ip.startsWith(prefix), `${p.ip} is in ${cidr}`);
    assert.deepEqual(p.ips, [p.ip], 'status.podIPs holds the pod IP');
    assert.ok(p.started, 'the exec startup probe passed inside the namespace');
    assert.equal(await curl(`http://${p.ip}:8080/`), p.name, 'the host reaches the pod at its IP');
  }
  firstIPs = new Map(ready.map((p) => [p.name, p.ip]));
  assert.equal(ourNetns().length, 2, 'one namespace per pod');
  assert.equal(bridgePorts().length, 2, 'one veth per pod on the bridge');

  const endpoints = await waitFor('Endpoints list both pod IPs', async () => {
    const r = await kubectl(api(), ['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].addresses[*].ip}']);
    const got = r.stdout.split(' ').filter(Boolean).sort();
    return got.length === 2 ? got : undefined;
  });
  assert.deepEqual(endpoints, [...ips].sort());

  const clusterIP = (await kubectl(api(), ['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
  const seen = new Set<string>();
  for (let i = 0; i < 20 && seen.size < 2; i++) seen.add(await curl(`http://${clusterIP}/`));
  assert.deepEqual([...seen].sort(), ready.map((p) => p.name).sort(), 'the ClusterIP spreads over both replicas');

  // From inside a pod, through the ClusterIP (routed to the host's proxy), to a replica.
  const fromPod = await kubectl(api(), ['exec', ready[0]!.name, '--', 'curl', '-sS', '--max-time', '5', `http://${clusterIP}/`]);
  assert.equal(fromPod.code, 0, fromPod.stderr);
  assert.ok(ready.some((p) => p.name === fromPod.stdout));

  // kubectl exec runs inside the pod's namespace too.
  const ex = await kubectl(api(), ['exec', ready[0]!.name, '--', 'ip', '-4', '-o', 'addr', 'show', 'eth0']);
  assert.equal(ex.code, 0, ex.stderr);
  assert.match(ex.stdout, new RegExp(` ${ready[0]!.ip.replace(/\./g, '\\.')}/24 `));
});

test('the namespaces and IPs survive an agent restart: the runtime service keeps them', { skip }, async () => {
  assert.ok(firstIPs, 'the first test ran');
  await stopAgent();
  assert.equal(ourNetns().length, 2, 'the namespaces outlive the agent');
  for (const ip of firstIPs.values()) assert.ok((await curl(`http://${ip}:8080/`)).startsWith('web-'));
  agent = await startAgent();
  const ready = await bothReady();
  assert.deepEqual(
    new Map(ready.map((p) => [p.name, p.ip])),
    firstIPs,
    `the same pods at the same IPs\n--- the agent before the restart:\n${stoppedLog}\n--- after:\n${agent.stderr()}`,
  );
  assert.ok(ready.every((p) => p.restarts === 0));
});

test('deleting the pods and down --all --agent leave no namespace, veth or bridge', { skip }, async () => {
  const del = await kubectl(api(), ['delete', 'deployment', 'web']);
  assert.equal(del.code, 0, del.stderr);
  await waitFor('the pods are gone', async () => (await pods()).length === 0, 60_000);
  await waitFor('no namespace of ours left', () => ourNetns().length === 0);
  assert.deepEqual(bridgePorts(), [], 'no veth left on the bridge');
  const down = await runCli(['down', '--all', '--agent', '--root-dir', root]);
  assert.equal(down.code, 0, down.stderr);
  await agent?.exited;
  agent = undefined;
  await waitFor('the bridge is removed', () => !existsSync(`/sys/class/net/${bridgeName(root)}`));
  assert.deepEqual(ourNetns(), []);
});

test('--pod-network needs the process runtime', async () => {
  const r = await runCli(['run', '--pod-network=cni', '--runtime=containerd', '-f', '/dev/null']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /flag "--pod-network" needs --runtime=process/);
});
