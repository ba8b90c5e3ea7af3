// Volumes on the process runtime, on a real `podvisor agent` driven by the real kubectl: a host-process
// pod sees its ConfigMap at /etc/config (and the ConfigMap's update, through the atomic writer's
// `..data` swap), a Secret with items and defaultMode, a subPath file, an emptyDir shared by its two
// containers, and the ServiceAccount token at /var/run/secrets/kubernetes.io/serviceaccount, with
// which @kubernetes/client-node's loadFromCluster lists pods; all in the container's own mount
// namespace, while the host's /etc/config and /var/run/secrets stay absent. Then the same ConfigMap
// volume with the agent itself run as a non-root user (a user and mount namespace).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { mountNamespaceProblem } from '../../src/runtime/process/mount-namespace.js';
import { mainJs, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';

const root = process.getuid?.() === 0;
const skip = !kubectlPath ? 'kubectl is not installed' : !root ? 'needs root (the host paths checked, the non-root agent started with runuser)' : false;

/** The project's own node_modules, read by the in-pod client where they are. */
const nodeModules = realpathSync(join(import.meta.dirname, '..', '..', '..', 'node_modules'));

const client = `
const fs = require('node:fs');
(async () => {
  const { KubeConfig, CoreV1Api } = await import('${nodeModules}/@kubernetes/client-node/dist/index.js');
  const kc = new KubeConfig();
  kc.loadFromCluster();
  const ns = fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8');
  try {
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns });
    console.log('PODS ' + list.items.map((p) => p.metadata.name).join(','));
  } catch (e) {
    console.log('ERR ' + (e.code ?? e.message));
  }
  setInterval(() => {}, 1 << 30);
})();
`;

const reader = [
  'while :; do',
  'echo "CFG $(cat /etc/config/greeting) UID $(id -u)";',
  'echo "SUB $(cat /etc/greeting.conf)";',
  'echo "SHARED $(cat /mnt/shared/msg 2>/dev/null)";',
  'echo "SEC $(ls /etc/secret | tr "\\n" ,) $(stat -L -c %a /etc/secret/sub/a.txt) $(cat /etc/secret/sub/a.txt)";',
  'echo "RO $(touch /etc/config/x 2>&1 >/dev/null | grep -c Read-only)";',
  'sleep 0.2; done',
].join(' ');

const configMap = (greeting: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { greeting } });

/** The agent's arguments for a root dir, on the process runtime. */
const agentArgs = (rootDir: string) => ['agent', '--root-dir', rootDir, '--port', '0', '--address', '127.0.0.1'];
/** As root, a service range of this test's own, outside 127.0.0.0/8 (routed to the host while the agent runs). */
const serviceRange = () => `--service-cluster-ip-range=10.${150 + Math.floor(Math.random() * 50)}.0.0/16`;

async function stop(agent: CliProcess | undefined): Promise<void> {
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
}

test('a host-process pod sees its volumes at their mountPaths; the host does not', { skip }, async (t) => {
  const dir = await tempDir();
  let agent: CliProcess | undefined;
  t.after(async () => {
    await stop(agent);
    await dir.remove();
  });
  const rootDir = join(dir.path, 'root');
  agent = startCli([...agentArgs(rootDir), serviceRange()]);
  await agent.waitFor('stderr', /podvisor agent started/);
  const api = { kubeconfig: join(rootDir, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const items = [
    configMap('hello'),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, stringData: { a: 'alpha', b: 'beta' } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'vols' },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [
          { name: 'config', configMap: { name: 'cfg' } },
          { name: 'secret', secret: { secretName: 'sec', defaultMode: 0o440, items: [{ key: 'a', path: 'sub/a.txt' }] } },
          { name: 'shared', emptyDir: {} },
        ],
        containers: [
          {
            name: 'reader',
            image: 'busybox',
            command: ['/bin/sh', '-c', `echo "PWD $(pwd)"; ${reader}`],
            workingDir: '/mnt/shared',
            volumeMounts: [
              { name: 'config', mountPath: '/etc/config' },
              { name: 'config', mountPath: '/etc/greeting.conf', subPath: 'greeting' },
              { name: 'secret', mountPath: '/etc/secret', readOnly: true },
              { name: 'shared', mountPath: '/mnt/shared' },
            ],
          },
          {
            name: 'client',
            image: 'node',
            command: ['/bin/sh', '-c', `echo from-client > /srv/data/msg && exec ${process.execPath} -e "$0"`, client],
            volumeMounts: [{ name: 'shared', mountPath: '/srv/data' }],
          },
        ],
      },
    },
  ];
  await k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  const logs = async (c: string) => (await kubectl(api, ['logs', 'vols', '-c', c, '--tail=10'])).stdout;
  const seen = await waitFor(
    'the reader to see every volume',
    async () => {
      const l = await logs('reader');
      return /^CFG hello UID 0$/m.test(l) && /^SHARED from-client$/m.test(l) && /^RO \d$/m.test(l) && l;
    },
    120_000,
  ).catch((err: Error) => assert.fail(`${err.message}\n${agent!.stderr().slice(-3000)}`));
  assert.match(seen, /^SUB hello$/m);
  assert.match((await kubectl(api, ['logs', 'vols', '-c', 'reader'])).stdout, /^PWD \/mnt\/shared$/m, 'the working directory in a volume');
  assert.match(seen, /^SEC sub, 440 alpha$/m, 'items chose a alone, at sub/a.txt, with defaultMode');
  assert.match(seen, /^RO 1$/m, 'a ConfigMap volume is read-only');
  for (const p of ['/etc/config', '/etc/greeting.conf', '/etc/secret', '/mnt/shared', '/srv/data', '/run/secrets'])
    assert.equal(existsSync(p), false, `${p} on the host`);

  // The ServiceAccount token: admission added the volume, the client found it where it looks.
  const mounts = JSON.parse(await k(['get', 'pod', 'vols', '-o', 'jsonpath={.spec.containers[1].volumeMounts}'])) as Array<{ mountPath: string }>;
  assert.ok(mounts.some((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount'));
  const listed = await waitFor('the client to list pods', async () => /^(PODS|ERR) .*$/m.exec(await logs('client'))?.[0], 120_000);
  assert.match(listed, /^(PODS .*\bvols\b|ERR 403)$/);

  // An update reaches the mounted directory (the subPath file keeps what it had, as upstream's does).
  await k(['apply', '-f', '-'], JSON.stringify(configMap('updated')));
  const after = await waitFor(
    'the update to show',
    async () => {
      const l = await logs('reader');
      return /^CFG updated UID 0$/m.test(l) && l;
    },
    120_000,
  );
  assert.match(after, /^SUB hello$/m);
});

test('a non-root agent mounts a ConfigMap volume through a user namespace', { skip: skip || (mountNamespaceProblem(65534) ?? false) }, async (t) => {
  const dir = await tempDir();
  let agent: ReturnType<typeof spawn> | undefined;
  let stderr = '';
  t.after(async () => {
    if (agent && agent.exitCode === null) {
      const gone = new Promise((r) => agent!.once('close', r));
      agent.kill('SIGTERM');
      await gone;
    }
    await dir.remove();
  });
  chmodSync(dir.path, 0o755);
  const rootDir = join(dir.path, 'root');
  mkdirSync(rootDir);
  chownSync(rootDir, 65534, 65534);
  agent = spawn('runuser', ['-u', 'nobody', '--', process.execPath, mainJs, ...agentArgs(rootDir)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HOME: rootDir },
  });
  agent.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  await waitFor('the non-root agent to start', () => /podvisor agent started/.test(stderr) || agent!.exitCode !== null, 60_000);
  assert.match(stderr, /podvisor agent started/);
  const api = { kubeconfig: join(rootDir, 'kubeconfig'), dir: join(dir.path, 'kubectl') };
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(api, args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'cfg-reader' },
    spec: {
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      volumes: [{ name: 'config', configMap: { name: 'cfg' } }],
      containers: [{ name: 'reader', image: 'busybox', command: ['/bin/sh', '-c', reader], volumeMounts: [{ name: 'config', mountPath: '/etc/config' }] }],
    },
  };
  await k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [configMap('hello'), pod] }));
  const logs = async () => (await kubectl(api, ['logs', 'cfg-reader', '--tail=6'])).stdout;
  await waitFor('the pod to read its ConfigMap as its own user', async () => /^CFG hello UID 65534$/m.test(await logs()), 120_000).catch((err: Error) =>
    assert.fail(`${err.message}\n${stderr.slice(-3000)}`),
  );
  assert.equal(existsSync('/etc/config'), false);
  await k(['apply', '-f', '-'], JSON.stringify(configMap('updated')));
  await waitFor('the update to show', async () => /^CFG updated UID 65534$/m.test(await logs()), 120_000);
  assert.equal(existsSync('/etc/config'), false);
});
