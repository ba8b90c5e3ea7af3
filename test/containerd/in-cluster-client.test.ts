// A client library's in-cluster configuration, unmodified, from inside a containerd pod: the pod runs
// as `default`, gets the kube-api-access projected volume (token, ca.crt, namespace) at
// /var/run/secrets/kubernetes.io/serviceaccount and KUBERNETES_SERVICE_HOST/PORT, and
// @kubernetes/client-node's loadFromCluster lists the pods of its namespace through the `kubernetes`
// Service's ClusterIP, verifying the agent's certificate with the mounted CA: refused (403, RBAC)
// until a RoleBinding grants the account `view`, then allowed. Once the pod is deleted its token is
// refused (401).

import assert from 'node:assert/strict';
import { realpathSync, writeFileSync } from 'node:fs';
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
const serviceRange = `10.${150 + Math.floor(Math.random() * 50)}.0.0/16`;

/** The project's own node_modules, mounted read-only into the pod at the same path. */
const nodeModules = realpathSync(join(import.meta.dirname, '..', '..', '..', 'node_modules'));

const script = `
const fs = require('node:fs');
(async () => {
  const { KubeConfig, CoreV1Api } = await import('${nodeModules}/@kubernetes/client-node/dist/index.js');
  const kc = new KubeConfig();
  kc.loadFromCluster();
  const ns = fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8');
  // Lists again until the answer changes (a RoleBinding granted meanwhile), printing each new answer.
  let last = '';
  const list = async () => {
    let line;
    try {
      const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns });
      line = 'PODS ' + pods.items.map((p) => p.metadata.name).join(',');
    } catch (e) {
      let message = '';
      try { message = JSON.parse(e.body).message; } catch {}
      line = 'ERR ' + (e.code ?? e.message) + ' ' + message;
    }
    if (line !== last) console.log((last = line));
    if (!line.startsWith('PODS')) setTimeout(list, 300);
  };
  await list();
  setInterval(() => {}, 1 << 30);
})();
`;

test('containerd pod: client-node loadFromCluster lists pods with the mounted token; the token dies with the pod', { skip }, async (t) => {
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
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await k(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'lister' },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'modules', hostPath: { path: nodeModules, type: 'Directory' } }],
        containers: [
          {
            name: 'node',
            image: env.images.node!,
            command: [process.execPath, '-e', script],
            volumeMounts: [{ name: 'modules', mountPath: nodeModules, readOnly: true }],
          },
        ],
      },
    }),
  );
  const spec = JSON.parse(await k(['get', 'pod', 'lister', '-o', 'json'])) as {
    spec: {
      serviceAccountName: string;
      volumes: Array<{ name: string }>;
      containers: Array<{ volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }> }>;
    };
  };
  assert.equal(spec.spec.serviceAccountName, 'default');
  const tokenVolume = spec.spec.volumes.find((v) => v.name.startsWith('kube-api-access-'))!;
  assert.match(tokenVolume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.deepEqual(
    spec.spec.containers[0]!.volumeMounts.find((m) => m.name === tokenVolume.name),
    { name: tokenVolume.name, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
  );

  // RBAC: the default account may not list pods (upstream's Forbidden message) until a RoleBinding
  // grants it the `view` ClusterRole; the pod's next list then succeeds.
  const answer = async (what: string, pattern: RegExp) => {
    let logs = '';
    await waitFor(
      what,
      async () => {
        logs = (await kubectl(api, ['logs', 'lister'])).stdout;
        return pattern.test(logs);
      },
      120_000,
    );
    return logs;
  };
  const refused = await answer('the pod to be refused', /^(PODS|ERR) /m);
  assert.match(
    refused,
    /^ERR 403 pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"$/m,
    `${refused}\n${agent.stderr().slice(-3000)}`,
  );
  await k(['create', 'rolebinding', 'default-view', '--clusterrole=view', '--serviceaccount=default:default']);
  await answer('the pod to list the pods once bound to view', /^PODS .*\blister\b/m);

  // The token the kubelet wrote is bound to the pod: refused once the pod is gone.
  const token = (await k(['exec', 'lister', '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/token'])).trim();
  const ns = await k(['exec', 'lister', '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/namespace']);
  assert.equal(ns, 'default');
  const ca = join(dir.path, 'ca.crt');
  writeFileSync(ca, await k(['exec', 'lister', '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt']));
  const ip = (await k(['get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const empty = join(dir.path, 'empty-kubeconfig');
  writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
  const asPod = () =>
    kubectl({ kubeconfig: empty, dir: api.dir }, [
      '--server',
      `https://${ip}:443`,
      '--certificate-authority',
      ca,
      '--token',
      token,
      'get',
      '--raw',
      '/version',
    ]);
  let r = await asPod();
  assert.equal(r.code, 0, r.stderr);
  await k(['delete', 'pod', 'lister', '--wait=true']);
  r = await asPod();
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Unauthorized/);
});
