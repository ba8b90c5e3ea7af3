// Both runtimes in one agent (--runtime=process,containerd), chosen per pod by its RuntimeClass, with
// the containerd podvisor starts: a host-process pod (RuntimeClass process, busybox httpd on the
// host) and a containerd pod (an image without command) each Ready only once it reaches the other
// through its Service (readiness probes that fetch the other's ClusterIP); a pod whose class names a
// handler no runtime has gets the kubelet's FailedCreatePodSandBox with containerd's words.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { Event, Pod } from '../../src/api/types.js';
import { bridgeName } from '../../src/runtime/cni-config.js';
import { managedContainerdLayout } from '../../src/runtime/containerd/config.js';
import { mountsUnder } from '../../src/runtime/containerd/managed.js';
import { runCli, startCli, stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { removeAllSandboxes } from './cleanup.js';
import { freePort, skipReason, startTestRegistry, type TestRegistry } from './harness.js';

const run = promisify(execFile);
const skip = await skipReason();
let reg: TestRegistry;
let dir: string;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'podvisor-rtclass-'));
  reg = await startTestRegistry(dir);
});
after(async () => {
  await reg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const services = `apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  selector: {app: db}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: dev}
spec:
  selector: {app: dev}
  ports: [{port: 80, targetPort: DEVPORT}]
`;

/** The servers: a host-process httpd (RuntimeClass process) and an image without command on containerd. */
function servers(image: string, devPort: number, www: string): string {
  const dev = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'dev', labels: { app: 'dev' } },
    spec: {
      runtimeClassName: 'process',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'server',
          image: 'busybox',
          command: ['/bin/busybox', 'httpd', '-f', '-p', String(devPort), '-h', www],
          readinessProbe: { tcpSocket: { port: devPort }, periodSeconds: 1 },
        },
      ],
    },
  };
  const db = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'db', labels: { app: 'db' } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'httpd', image, ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 } },
      ],
    },
  };
  return [dev, db].map((p) => JSON.stringify(p)).join('\n---\n');
}

/** Clients that succeed once they fetch the page of the other runtime's server through its Service (the ClusterIP of their env). */
function clients(busybox: string): string {
  const fetch = (svc: string) => `wget -q -O - http://$${svc}_SERVICE_HOST:$${svc}_SERVICE_PORT/index.html`;
  const toDb = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'to-db' },
    spec: {
      runtimeClassName: 'process',
      restartPolicy: 'Never',
      containers: [{ name: 'c', image: 'busybox', command: ['/bin/busybox', 'sh', '-c', fetch('DB')] }],
    },
  };
  const toDev = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'to-dev' },
    spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: busybox, command: ['sh', '-c', fetch('DEV')] }] },
  };
  return [toDb, toDev].map((p) => JSON.stringify(p)).join('\n---\n');
}

async function getJSON<T>(root: string, args: string[]): Promise<T> {
  const r = await runCli(['get', ...args, '-o', 'json', `--root-dir=${root}`]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

const ready = (p: Pod | undefined) => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

test(
  'one agent, two runtimes: a process pod and a containerd pod reach each other through Services; an unknown handler fails as the kubelet says',
  { skip },
  async () => {
    const root = join(dir, 'root');
    const www = join(dir, 'www');
    mkdirSync(www, { recursive: true });
    writeFileSync(join(www, 'index.html'), 'dev\n');
    const devPort = await freePort();
    const layout = managedContainerdLayout(root);
    // A service range of the test's own outside 127.0.0.0/8, so that pods with a network of their own reach ClusterIPs.
    const serviceRange = `10.${200 + Math.floor(Math.random() * 50)}.0.0/16`;
    const agent = startCli([
      'agent',
      '--runtime=process,containerd',
      `--pod-infra-container-image=${reg.images.pause}`,
      `--root-dir=${root}`,
      `--service-cluster-ip-range=${serviceRange}`,
    ]);
    try {
      await agent.waitFor('stderr', /podvisor agent started/, 90_000);
      const svc = join(dir, 'svc.yaml');
      writeFileSync(svc, services.replace('DEVPORT', String(devPort)));
      const a1 = await runCli(['apply', '-f', svc, `--root-dir=${root}`]);
      assert.equal(a1.code, 0, a1.stderr);
      const podsFile = join(dir, 'pods.yaml');
      writeFileSync(podsFile, servers(reg.images.web!, devPort, www));
      const a2 = await runCli(['apply', '-f', podsFile, `--root-dir=${root}`]);
      assert.equal(a2.code, 0, a2.stderr);

      const observed = async () => {
        const r = await runCli(['get', 'pods,events', '-o', 'wide', `--root-dir=${root}`]);
        return `dev and db Ready\n${r.stdout}${r.stderr}`;
      };
      const both = await waitFor(
        observed,
        async () => {
          const list = await getJSON<{ items: Pod[] }>(root, ['pods']);
          const by = new Map(list.items.map((p) => [p.metadata?.name, p]));
          return ready(by.get('dev')) && ready(by.get('db')) ? by : undefined;
        },
        120_000,
      );
      // The process pod is a host process on the host's network; the containerd pod has an address of its own.
      const dev = both.get('dev')!;
      const db = both.get('db')!;
      assert.match(dev.status?.containerStatuses?.[0]?.containerID ?? '', /^process:\/\//);
      assert.match(db.status?.containerStatuses?.[0]?.containerID ?? '', /^containerd:\/\//);
      assert.equal(dev.status?.podIP, dev.status?.hostIP);
      assert.notEqual(db.status?.podIP, db.status?.hostIP);

      // Each runtime's client reaches the other runtime's server through its Service.
      const clientsFile = join(dir, 'clients.yaml');
      writeFileSync(clientsFile, clients(reg.images.busybox!));
      const a4 = await runCli(['apply', '-f', clientsFile, `--root-dir=${root}`]);
      assert.equal(a4.code, 0, a4.stderr);
      for (const name of ['to-db', 'to-dev']) {
        await waitFor(
          async () => `${name} Succeeded\n${(await observed()).slice(17)}`,
          async () => {
            const phase = (await getJSON<Pod>(root, ['pod', name])).status?.phase;
            if (phase === 'Failed') {
              const logs = await runCli(['logs', name, `--root-dir=${root}`]);
              const svc = await runCli(['get', 'svc,endpoints', '-o', 'wide', `--root-dir=${root}`]);
              assert.fail(`${name} failed: ${logs.stdout}${logs.stderr}\n${svc.stdout}`);
            }
            return phase === 'Succeeded';
          },
          120_000,
        );
        const logs = await runCli(['logs', name, `--root-dir=${root}`]);
        assert.equal(logs.stdout, name === 'to-db' ? 'hello-from-pod\n' : 'dev\n', logs.stderr);
      }

      // A class whose handler no runtime of the agent has: the sandbox is never made.
      const odd = join(dir, 'odd.yaml');
      writeFileSync(
        odd,
        'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: sandboxed}\nhandler: runsc\n---\n' +
          'apiVersion: v1\nkind: Pod\nmetadata: {name: odd}\nspec:\n  runtimeClassName: sandboxed\n  containers: [{name: c, image: busybox, command: [sleep, "60"]}]\n',
      );
      const a3 = await runCli(['apply', '-f', odd, `--root-dir=${root}`]);
      assert.equal(a3.code, 0, a3.stderr);
      const ev = await waitFor('FailedCreatePodSandBox for odd', async () => {
        const events = await getJSON<{ items: Event[] }>(root, ['events']);
        return events.items.find((e) => e.involvedObject?.name === 'odd' && e.reason === 'FailedCreatePodSandBox');
      });
      assert.equal(ev.type, 'Warning');
      assert.equal(
        ev.message,
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured',
      );

      const down = await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal((await agent.exited).code, 0, agent.stderr().slice(-3000));
    } finally {
      if (agent.child.exitCode === null) agent.child.kill('SIGKILL');
      await runCli(['agent', 'stop', `--root-dir=${root}`]).catch(() => undefined);
      if (existsSync(layout.socket)) await removeAllSandboxes(`unix://${layout.socket}`).catch(() => undefined);
      await stopRuntimeServices(dir);
      const { managedContainerdPid } = await import('../../src/runtime/containerd/managed.js');
      const pid = managedContainerdPid(layout);
      if (pid) process.kill(pid, 'SIGKILL');
      for (const m of mountsUnder(root)) await run('umount', ['-l', m]).catch(() => undefined);
      await run('ip', ['link', 'del', bridgeName(root)]).catch(() => undefined);
    }
  },
);
