// NetworkPolicies enforced between containerd pods on the agent's pod network: a busybox client
// reaches a busybox httpd by its pod IP; a deny-all ingress policy on the server makes the connection
// refused (the filter table rejects it); a second policy allowing the client's label on the named port
// `http` lets it through again (the union of the policies), while another pod stays refused; an
// egress policy on the client with an ipBlock whose except holds the server refuses it from the
// client's side; deleting the policies restores the traffic and the agent's chains are gone at stop.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';
import { waitFor } from '../fixtures/wait.js';
import { networkPolicyChain } from '../../src/proxy/network-policy-rules.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const skipContainerd = await containerdSuite((e) => (env = e));
const skip = skipContainerd || (kubectlPath ? false : 'kubectl is not installed');

const filterRules = () => execFileSync('iptables', ['-w', '-S'], { encoding: 'utf8' });

test('containerd pods: a NetworkPolicy blocks a TCP connection, another allows it by label and named port', { skip }, async (t) => {
  const dir = await tempDir();
  let agent: CliProcess | undefined;
  t.after(async () => {
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent?.exited;
    await dir.remove();
  });
  const root = join(dir.path, 'root');
  agent = startCli([
    'agent',
    '--runtime=containerd',
    `--container-runtime-endpoint=${env.endpoint}`,
    '--root-dir',
    root,
    '--port',
    '0',
    '--address',
    '127.0.0.1',
  ]);
  await agent.waitFor('stderr', /podvisor agent started/);
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  const bb = env.images.busybox!;
  const sleeper = (name: string, app: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {app: ${app}}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: sh, image: ${bb}, command: [sleep, '3600']}\n`;
  await k(
    ['apply', '-f', '-'],
    [
      `apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: httpd\n    image: ${bb}\n    command: [sh, -c, 'mkdir -p /tmp/www && echo hello > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www']\n    ports: [{name: http, containerPort: 8080}]\n`,
      sleeper('client', 'client'),
      sleeper('stranger', 'stranger'),
    ].join('---\n'),
  );
  const podIP = async (name: string) => (await k(['get', 'pod', name, '-o', 'jsonpath={.status.podIP}'])).stdout.trim();
  const running = async (name: string) => (await k(['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).stdout.trim() === 'Running';
  await waitFor('the three pods Running', async () => (await running('web')) && (await running('client')) && (await running('stranger')), 90_000);
  const webIP = await podIP('web');
  const fetchFrom = (pod: string) => kubectl(api, ['exec', pod, '--', 'wget', '-qO-', `http://${webIP}:8080/`]);
  // httpd may not listen yet when the pod is Running.
  await waitFor('the client reaches web', async () => (await fetchFrom('client')).stdout.trim() === 'hello', 30_000);

  // Deny all ingress to web: refused (REJECT answers at once; no timeout is waited for).
  const deny = await k(
    ['apply', '-f', '-'],
    'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: web-deny}\nspec:\n  podSelector: {matchLabels: {app: web}}\n',
  );
  assert.doesNotMatch(deny.stderr, /Warning/);
  const chain = networkPolicyChain(root);
  await waitFor('the client refused', async () => (await fetchFrom('client')).code !== 0, 30_000);
  assert.match(filterRules(), new RegExp(`-A FORWARD -j ${chain}\\b`));
  assert.notEqual((await fetchFrom('stranger')).code, 0);
  const table = (await k(['get', 'netpol'])).stdout;
  assert.match(table, /^NAME\s+POD-SELECTOR\s+AGE\nweb-deny\s+app=web\s+\S+\n$/);

  // Allow app=client on the named port http: the union lets the client in, the stranger stays out.
  await k(
    ['apply', '-f', '-'],
    'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: web-allow-client}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  ingress:\n  - from: [{podSelector: {matchLabels: {app: client}}}]\n    ports: [{port: http}]\n',
  );
  await waitFor('the client allowed', async () => (await fetchFrom('client')).stdout.trim() === 'hello', 30_000);
  assert.notEqual((await fetchFrom('stranger')).code, 0);

  // Egress from the client: everything but the pod range's /24 where web lives.
  const range = webIP.replace(/\.\d+$/, '.0/24');
  await k(
    ['apply', '-f', '-'],
    `apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: client-egress}\nspec:\n  podSelector: {matchLabels: {app: client}}\n  policyTypes: [Egress]\n  egress:\n  - to: [{ipBlock: {cidr: 0.0.0.0/0, except: [${range}]}}]\n`,
  );
  await waitFor('the client refused by its egress policy', async () => (await fetchFrom('client')).code !== 0, 30_000);

  await k(['delete', 'netpol', '--all']);
  await waitFor('traffic restored', async () => (await fetchFrom('stranger')).stdout.trim() === 'hello', 30_000);

  agent.child.kill('SIGTERM');
  await agent.exited;
  assert.doesNotMatch(filterRules(), new RegExp(chain));
});
