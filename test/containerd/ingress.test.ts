// An Ingress in front of containerd pods: busybox httpd pods on the CNI bridge behind a Service, an
// Ingress routing web.localhost to it; requests through the agent's ingress proxy reach the pod
// addresses, only the Ready pod answers, and the Ingress's status names the proxy's address.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';
import { waitFor } from '../fixtures/wait.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const skipContainerd = await containerdSuite((e) => (env = e));
const skip = skipContainerd || (kubectlPath ? false : 'kubectl is not installed');

const server = (image: string, name: string, ready: boolean) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: web}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: httpd
    image: ${image}
    command: [sh, -c, 'mkdir -p /tmp/www && echo ${name} > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www']
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {exec: {command: ['${ready ? 'true' : 'false'}']}, periodSeconds: 1}
`;

function get(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('containerd pods behind an Ingress: requests reach the Ready pod only, through the ingress proxy', { skip }, async (t) => {
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
    '--ingress-http-port',
    '0',
    '--ingress-https-port',
    '0',
  ]);
  await agent.waitFor('stderr', /podvisor agent started/);
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const bb = env.images.busybox!;
  await k(
    ['apply', '-f', '-'],
    [
      'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: http}]\n',
      server(bb, 'web-ready', true),
      server(bb, 'web-unready', false),
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  rules: [{host: web.localhost, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}]}}]\n',
    ].join('---\n'),
  );
  const port = await waitFor('the Ingress status with the proxy port', async () => {
    const out = (await k(['get', 'ing', 'web', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip} {.status.loadBalancer.ingress[0].ports[0].port}'])).trim();
    const [ip, p] = out.split(' ');
    return ip === '127.0.0.1' && p ? Number(p) : undefined;
  });
  const first = await waitFor(
    'web-ready through the ingress',
    async () => {
      const r = await get(port, 'web.localhost', '/');
      return r.status === 200 ? r.body : undefined;
    },
    120_000,
  );
  assert.equal(first.trim(), 'web-ready');
  const podIP = (await k(['get', 'pod', 'web-ready', '-o', 'jsonpath={.status.podIP}'])).trim();
  assert.doesNotMatch(podIP, /^127\./, 'the pod has an address of its own on the bridge');
  for (let i = 0; i < 4; i++) assert.equal((await get(port, 'web.localhost', '/')).body.trim(), 'web-ready');
});
