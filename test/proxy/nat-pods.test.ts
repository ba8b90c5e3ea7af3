// `podvisor agent --proxy-mode=iptables --pod-network=cni` end to end, as root with the CNI plugins:
// connections a pod makes to a ClusterIP are DNATed by the kernel (the rules' packet counters move)
// and reach both replicas, the pod itself among them (masqueraded, so its own reply comes back
// through the host); the host reaches the ClusterIP too; the chains are jumped to from OUTPUT,
// PREROUTING and POSTROUTING, and stopping the agent removes them. The only test of the agent's own
// chain (PODVISOR-SERVICES), so no other test file's agent changes it meanwhile.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';
import { podNetworkConfig, podNetworkHostProblems } from '../../src/runtime/process-runtime.js';

const run = promisify(execFile);
const problems = podNetworkHostProblems(podNetworkConfig('/nonexistent-root', '172.31.0.0/24'));
const skip = !kubectlPath ? 'kubectl is not installed' : problems.length ? `no pod network here: ${problems.join('; ')}` : false;

const cidr = `172.31.${randomInt(1, 255)}.0/24`;
const serviceRange = `10.99.${randomInt(1, 255)}.0/24`;
const chain = 'PODVISOR-SERVICES';
let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess | undefined;

before(async () => {
  if (skip) return;
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = startCli([
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
    '--proxy-mode=iptables',
  ]);
  await agent.waitFor('stderr', /podvisor agent started/, 60_000);
});

after(async () => {
  if (skip) return;
  await runCli(['down', '--all', '--agent', '--root-dir', root]).catch(() => undefined);
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
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
      metadata: { name: 'nat' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'nat' } },
        template: {
          metadata: { labels: { app: 'nat' } },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'python',
                command: ['python3', '-c', server],
                ports: [{ containerPort: 8080, name: 'http' }],
                readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'nat' }, spec: { selector: { app: 'nat' }, ports: [{ port: 80, targetPort: 'http' }] } },
  ],
};

/** Packets the chain's DNAT rules have taken so far. */
function dnatPackets(): number {
  const out = execFileSync('iptables', ['-w', '-t', 'nat', '-L', chain, '-n', '-v', '-x'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes('DNAT'))
    .reduce((sum, l) => sum + Number(l.trim().split(/\s+/)[0]), 0);
}

test('a pod reaches both replicas of a Service, itself included, through the kernel; the host too', { skip }, async () => {
  const file = join(dir.path, 'nat.json');
  writeFileSync(file, JSON.stringify(manifest));
  const applied = await kubectl(api(), ['apply', '-f', file]);
  assert.equal(applied.code, 0, applied.stderr);
  await waitFor(
    'Endpoints list both replicas',
    async () =>
      (await kubectl(api(), ['get', 'endpoints', 'nat', '-o', 'jsonpath={.subsets[0].addresses[*].ip}'])).stdout.split(' ').filter(Boolean).length === 2,
    120_000,
  );
  const names = (await kubectl(api(), ['get', 'pods', '-l', 'app=nat', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').sort();
  const clusterIP = (await kubectl(api(), ['get', 'svc', 'nat', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
  await waitFor(
    'the DNAT rules of both endpoints',
    // The chain also holds the `kubernetes` Service's rule (to the agent's API): count the replicas' (:8080).
    () =>
      execFileSync('iptables', ['-w', '-t', 'nat', '-S', chain], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('DNAT') && l.includes(':8080')).length === 2,
  );

  const rules = execFileSync('iptables', ['-w', '-t', 'nat', '-S'], { encoding: 'utf8' });
  for (const jump of ['-A OUTPUT -j PODVISOR-SERVICES', '-A PREROUTING -j PODVISOR-SERVICES', '-A POSTROUTING -j PODVISOR-SERVICES-POST'])
    assert.ok(rules.includes(jump), `${jump} in:\n${rules}`);

  const before = dnatPackets();
  const loop = `for i in $(seq 1 12); do curl -sS --max-time 5 http://${clusterIP}/; echo; done`;
  const fromPod = await kubectl(api(), ['exec', names[0]!, '--', 'sh', '-c', loop]);
  assert.equal(fromPod.code, 0, fromPod.stderr);
  const answers = new Set(fromPod.stdout.split('\n').filter(Boolean));
  assert.deepEqual([...answers].sort(), names, `both replicas, ${names[0]} itself among them: ${fromPod.stdout}`);
  assert.ok(dnatPackets() - before >= 12, 'each connection from the pod was DNATed by the kernel');

  const fromHost = new Set<string>();
  for (let i = 0; i < 12; i++) fromHost.add((await run('curl', ['-sS', '--max-time', '5', `http://${clusterIP}/`])).stdout);
  assert.deepEqual([...fromHost].sort(), names, 'the host reaches both replicas');

  const down = await runCli(['down', '--all', '--agent', '--root-dir', root]);
  assert.equal(down.code, 0, down.stderr);
  await agent?.exited;
  assert.doesNotMatch(execFileSync('iptables', ['-w', '-t', 'nat', '-S'], { encoding: 'utf8' }), /PODVISOR-SERVICES/, 'the chains are gone');
});
