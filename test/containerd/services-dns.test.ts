// Services seen from inside containerd pods: an agent whose service range lies outside the loopback
// routes it to the host as local, so a busybox pod's resolv.conf names the cluster DNS with the
// kubelet's search path and ndots:5 (no MissingClusterDNS event), `nslookup` resolves a Service, a
// headless Service and a StatefulSet-style pod name (hostname + subdomain), and `wget` of
// http://<svc>:<port> reaches only the Ready endpoint, through the ClusterIP.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';
import { waitFor } from '../fixtures/wait.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const skipContainerd = await containerdSuite((e) => (env = e));
const skip = skipContainerd || (kubectlPath ? false : 'kubectl is not installed');

/** A range of this test's own, outside 127.0.0.0/8 (routed to the host while the agent runs). */
const serviceRange = `10.${200 + Math.floor(Math.random() * 50)}.0.0/16`;

/** A busybox pod serving its own name on 8080, Ready only when `ready` is true. */
const server = (image: string, name: string, labels: string, ready: boolean, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {${labels}}}
spec:
  terminationGracePeriodSeconds: 1
  ${extra}
  containers:
  - name: httpd
    image: ${image}
    command: [sh, -c, 'mkdir -p /tmp/www && echo ${name} > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www']
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {exec: {command: ['${ready ? 'true' : 'false'}']}, periodSeconds: 1}
`;

test('containerd pods: cluster DNS in resolv.conf, Service names resolve, ClusterIPs reach Ready endpoints', { skip }, async (t) => {
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
    `--service-cluster-ip-range=${serviceRange}`,
  ]);
  await agent.waitFor('stderr', /podvisor agent started/);
  assert.match(agent.stderr(), /Service range routed to the host/);
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
      'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: http}]\n',
      'apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec:\n  clusterIP: None\n  selector: {app: db}\n  ports: [{name: pg, port: 5432, targetPort: 8080}]\n',
      server(bb, 'web-ready', 'app: web', true),
      server(bb, 'web-unready', 'app: web', false),
      server(bb, 'db-pod', 'app: db', true, 'hostname: db-0\n  subdomain: db'),
      `apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: sh, image: ${bb}, command: [sleep, '3600']}\n`,
    ].join('---\n'),
  );
  const podIP = async (name: string) => (await k(['get', 'pod', name, '-o', 'jsonpath={.status.podIP}'])).trim();
  const ready = async (name: string) => (await k(['get', 'pod', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])).trim() === 'True';
  await waitFor('web-ready, db-pod and client Ready', async () => (await ready('web-ready')) && (await ready('db-pod')) && (await ready('client')), 90_000);
  await waitFor('web-unready running with its IP', async () => (await podIP('web-unready')) !== '', 60_000);
  const clusterIP = (await k(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const dbIP = await podIP('db-pod');
  await waitFor(
    'the web Endpoints to list web-ready',
    async () => (await k(['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[*].addresses[*].ip}'])).trim() !== '',
    30_000,
  );

  // The agent tells where the Service is reachable once it has a Ready endpoint.
  await agent.waitFor('stderr', new RegExp(`"Service reachable" service="default/web" urls="http://${clusterIP.replace(/\./g, '\\.')}:80"`));

  const inClient = (...cmd: string[]) => kubectl(api, ['exec', 'client', '--', ...cmd]);

  // resolv.conf as the kubelet writes it for ClusterFirst.
  const resolv = (await inClient('cat', '/etc/resolv.conf')).stdout;
  const dnsIP = serviceRange.replace(/0\.0\/16$/, '0.10');
  assert.match(resolv, new RegExp(`^nameserver ${dnsIP.replace(/\./g, '\\.')}$`, 'm'), resolv);
  assert.match(resolv, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local\b/m, resolv);
  assert.match(resolv, /^options ndots:5$/m, resolv);
  const events = await k(['get', 'events', '-o', 'jsonpath={.items[*].reason}']);
  assert.doesNotMatch(events, /MissingClusterDNS/);

  // Names: the Service, the headless Service, the StatefulSet-style pod name, and a short name through the search path.
  const lookup = async (name: string) => {
    const r = await inClient('nslookup', name);
    assert.equal(r.code, 0, `nslookup ${name}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  assert.match(await lookup('web.default.svc.cluster.local'), new RegExp(`Address:\\s+${clusterIP.replace(/\./g, '\\.')}\\b`));
  assert.match(await lookup('db.default.svc.cluster.local'), new RegExp(`Address:\\s+${dbIP.replace(/\./g, '\\.')}\\b`));
  assert.match(await lookup('db-0.db.default.svc.cluster.local'), new RegExp(`Address:\\s+${dbIP.replace(/\./g, '\\.')}\\b`));

  // By the Service's short name (the search path) and by its ClusterIP: always the Ready pod, never
  // the other. (busybox-static's wget crashes with -T: the default timeout it is.)
  for (const url of ['http://web:80/', `http://${clusterIP}/`]) {
    for (let i = 0; i < 4; i++) {
      const r = await inClient('wget', '-qO-', url);
      assert.equal(r.code, 0, `wget ${url}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), 'web-ready', url);
    }
  }
});
