// ServiceAccounts and their tokens on a real `podvisor agent` driven by the real kubectl (1.20 and
// 1.32): every namespace's `default` account and `kube-root-ca.crt`; `kubectl get|create sa`;
// `kubectl create token` (1.32), plain and bound to a pod; the token used as a pod uses it (through
// the `kubernetes` Service's ClusterIP, verified with kube-root-ca.crt's CA), reviewed by TokenReview,
// `kubectl auth whoami`, refused (403) by RBAC until a RoleBinding grants `view`, and refused (401)
// once its pod is gone; pods run as `default` unless they
// name an account, and one naming a missing account is refused in the API server's words.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl, waitFor, type KubectlResult } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };

const k132 = (a: Api, args: string[], input?: string): Promise<KubectlResult> => runKubectl(kubectl132Path!, a, args, input);

/** kubectl against a server and credentials given on the command line (no kubeconfig), as a pod's in-cluster client is configured. */
function asPod(bin: string, a: Api, server: string, ca: string, token: string, args: string[]): Promise<KubectlResult> {
  const empty = join(a.dir, 'empty-kubeconfig');
  writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
  return runKubectl(bin, { kubeconfig: empty, dir: a.dir }, ['--server', server, '--certificate-authority', ca, '--token', token, ...args]);
}

test('every namespace has the default ServiceAccount and kube-root-ca.crt; kubectl get and create sa', { skip }, async (t) => {
  const a = env.api(t);
  await waitFor('the default accounts', async () => /\nkube-system\s+default\s+0\s/.test((await kubectl(a, ['get', 'sa', '-A'])).stdout), 30_000);
  let r = await kubectl(a, ['get', 'sa']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+\S+\n$/);
  r = await kubectl(a, ['create', 'namespace', 'team']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('team to have its default account and CA', async () => {
    const sa = await kubectl(a, ['get', 'serviceaccount', 'default', '-n', 'team', '-o', 'name']);
    const cm = await kubectl(a, ['get', 'configmap', 'kube-root-ca.crt', '-n', 'team', '-o', 'jsonpath={.data.ca\\.crt}']);
    return sa.stdout.trim() === 'serviceaccount/default' && cm.stdout.startsWith('-----BEGIN CERTIFICATE-----');
  });
  // Deleted, the default account is made again (the ServiceAccount controller).
  const uid = (await kubectl(a, ['get', 'sa', 'default', '-n', 'team', '-o', 'jsonpath={.metadata.uid}'])).stdout;
  r = await kubectl(a, ['delete', 'sa', 'default', '-n', 'team']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the default account to come back', async () => {
    const now = await kubectl(a, ['get', 'sa', 'default', '-n', 'team', '-o', 'jsonpath={.metadata.uid}']);
    return now.code === 0 && now.stdout !== '' && now.stdout !== uid;
  });
  r = await kubectl(a, ['create', 'serviceaccount', 'old-client', '-n', 'team']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'serviceaccount/old-client created');
  if (kubectl132Path) {
    r = await k132(a, ['create', 'sa', 'new-client', '-n', 'team']);
    assert.equal(r.code, 0, r.stderr);
    r = await k132(a, ['get', 'sa', '-n', 'team']);
    assert.match(r.stdout, /^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+\S+\nnew-client\s+0\s+\S+\nold-client\s+0\s+\S+\n$/);
  }
  r = await kubectl(a, ['create', 'sa', 'Bad_Name']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /ServiceAccount "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
});

test('pods run as default; a missing account is refused; they get the kubernetes Service variables', { skip }, async (t) => {
  const a = env.api(t);
  let r = await kubectl(a, [
    'run',
    'ghost',
    '--image=busybox',
    '--restart=Never',
    '--overrides={"spec":{"serviceAccountName":"nobody"}}',
    '--command',
    '--',
    'sleep',
    '1',
  ]);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /Error from server \(Forbidden\): pods "ghost" is forbidden: error looking up service account default\/nobody: serviceaccount "nobody" not found/,
  );
  r = await kubectl(a, ['run', 'envs', '--image=busybox', '--restart=Never', '--command', '--', 'sh', '-c', 'env | grep ^KUBERNETES_SERVICE | sort']);
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the pod to finish', async () => (await kubectl(a, ['get', 'pod', 'envs', '-o', 'jsonpath={.status.phase}'])).stdout === 'Succeeded', 60_000);
  const ip = (await kubectl(a, ['get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
  r = await kubectl(a, ['logs', 'envs']);
  assert.equal(r.stdout, `KUBERNETES_SERVICE_HOST=${ip}\nKUBERNETES_SERVICE_PORT=443\nKUBERNETES_SERVICE_PORT_HTTPS=443\n`);
  r = await kubectl(a, ['get', 'pod', 'envs', '-o', 'jsonpath={.spec.serviceAccountName}']);
  assert.equal(r.stdout, 'default');
  // A pod that asks for its token gets the volume: the process runtime mounts volumes through a
  // mount namespace (a runtime that mounts none warns instead: runtime-less admission tests cover it).
  r = await kubectl(a, [
    'run',
    'asks',
    '--image=busybox',
    '--restart=Never',
    '--overrides={"spec":{"automountServiceAccountToken":true}}',
    '--command',
    '--',
    'true',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const caps = (await kubectl(a, ['get', 'node', '-o', 'jsonpath={.items[0].status.nodeInfo.containerRuntimeVersion}'])).stdout;
  assert.ok(caps, 'the node names its runtime');
  assert.doesNotMatch(r.stderr, /not honoured/);
  r = await kubectl(a, ['get', 'pod', 'asks', '-o', 'jsonpath={.spec.containers[0].volumeMounts[0].mountPath}']);
  assert.equal(r.stdout, '/var/run/secrets/kubernetes.io/serviceaccount');
  r = await kubectl(a, ['get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets[0].addresses[0].ip} {.subsets[0].ports[0].name}']);
  assert.equal(r.stdout, '127.0.0.1 https');
  r = await kubectl(a, ['get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.ports[0].port} {.spec.ports[0].name}']);
  assert.equal(r.stdout, '443 https');
});

test(
  'kubectl create token: a pod-bound token lists pods through the kubernetes Service, is reviewed, and is refused once its pod is gone',
  { skip: skip || (kubectl132Path ? false : 'no kubectl 1.32') },
  async (t) => {
    const a = env.api(t);
    let r = await k132(a, ['create', 'token', 'default', '--duration', '15m']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    r = await k132(a, ['create', 'token', 'default', '--duration', '5m']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/);
    r = await k132(a, ['create', 'token', 'nobody']);
    assert.match(r.stderr, /serviceaccounts "nobody" not found/);

    r = await kubectl(a, ['run', 'client', '--image=busybox', '--restart=Never', '--command', '--', 'sleep', '3600']);
    assert.equal(r.code, 0, r.stderr);
    const podUid = (await kubectl(a, ['get', 'pod', 'client', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    r = await k132(a, ['create', 'token', 'default', '--bound-object-kind', 'Pod', '--bound-object-name', 'client']);
    assert.equal(r.code, 0, r.stderr);
    const token = r.stdout.trim();

    // A pod's in-cluster configuration: the kubernetes Service's ClusterIP and port, kube-root-ca.crt's CA.
    const ip = (await kubectl(a, ['get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    const ca = join(a.dir, 'ca.crt');
    writeFileSync(ca, (await kubectl(a, ['get', 'cm', 'kube-root-ca.crt', '-o', 'jsonpath={.data.ca\\.crt}'])).stdout);
    const server = `https://${ip}:443`;

    r = await asPod(kubectl132Path!, a, server, ca, token, ['auth', 'whoami']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Username\s+system:serviceaccount:default:default\n/);
    assert.match(r.stdout, /Groups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]\n/);
    assert.match(r.stdout, new RegExp(`authentication.kubernetes.io/pod-uid\\s+\\[${podUid}\\]`));
    r = await k132(a, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(r.stdout, 'system:admin');

    // RBAC: the default account may not list pods (upstream's Forbidden message) until a RoleBinding
    // grants it `view`; `auth can-i --list` with its token answers what it may do before and after.
    r = await asPod(kubectlPath!, a, server, ca, token, ['get', 'pods', '-o', 'name']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /Error from server \(Forbidden\): pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"/,
    );
    r = await asPod(kubectl132Path!, a, server, ca, token, ['auth', 'can-i', '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    assert.doesNotMatch(r.stdout, /^pods\s/m);
    r = await kubectl(a, ['create', 'rolebinding', 'default-view', '--clusterrole=view', '--serviceaccount=default:default']);
    assert.equal(r.code, 0, r.stderr);
    r = await asPod(kubectlPath!, a, server, ca, token, ['get', 'pods', '-o', 'name']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pod\/client$/m);
    r = await asPod(kubectl132Path!, a, server, ca, token, ['auth', 'can-i', '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);

    const review = (tok: string) =>
      kubectl(
        a,
        ['create', '--raw', '/apis/authentication.k8s.io/v1/tokenreviews', '-f', '-'],
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: tok } }),
      );
    r = await review(token);
    assert.equal(r.code, 0, r.stderr);
    const status = (JSON.parse(r.stdout) as { status: { authenticated?: boolean; user?: { username?: string; extra?: Record<string, string[]> } } }).status;
    assert.equal(status.authenticated, true);
    assert.equal(status.user?.username, 'system:serviceaccount:default:default');
    assert.deepEqual(status.user?.extra?.['authentication.kubernetes.io/pod-name'], ['client']);

    r = await kubectl(a, ['delete', 'pod', 'client', '--grace-period=0', '--force']);
    assert.equal(r.code, 0, r.stderr);
    await waitFor('the pod to be gone', async () => (await kubectl(a, ['get', 'pod', 'client', '-o', 'name'])).code !== 0, 60_000);
    r = await asPod(kubectlPath!, a, server, ca, token, ['get', 'pods']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /error: You must be logged in to the server \(Unauthorized\)/);
    r = await review(token);
    const after = (JSON.parse(r.stdout) as { status: { authenticated?: boolean; error?: string } }).status;
    assert.equal(after.authenticated, undefined);
    assert.equal(after.error, 'pod default/client has been deleted');
    // The agent's own credentials keep full access.
    r = await kubectl(a, ['get', 'pods']);
    assert.equal(r.code, 0, r.stderr);
  },
);
