// Several podvisors, one cluster: the kube-e2e cluster (kube-apiserver, the real kube-scheduler and
// kube-controller-manager, and one podvisor node) joined by two more podvisor agents, each with its
// own root dir, node name and kubelet port, on the process runtime. A Deployment spread over the
// nodes by a topology spread constraint becomes Available, with its pods on every node.

import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { kubectlPath, skipReason as kcpSkipReason } from './control-plane.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const e2eTools = process.env.KUBE_E2E ?? resolve(projectRoot, '../shared/tools/kube-e2e');
const e2eCache = process.env.E2E_CACHE ?? join(homedir(), '.cache', 'kube-e2e');

function skipReason(): string | undefined {
  const kcp = kcpSkipReason();
  if (kcp) return kcp;
  if (!existsSync(join(e2eTools, 'start'))) return `kube-e2e tools not found at ${e2eTools}`;
  for (const bin of ['kube-scheduler', 'kube-controller-manager']) {
    if (!existsSync(join(e2eCache, 'bin', bin))) return `${join(e2eCache, 'bin', bin)} not built: run ${join(e2eTools, 'build')}`;
  }
  return undefined;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolvePromise) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolvePromise({ code, out: `${stdout}${stderr}` });
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = createServer();
    s.once('error', () => r(false));
    s.listen(port, '127.0.0.1', () => s.close(() => r(true)));
  });
}

/** A port P with P..P+count-1 all free. */
async function freePortBlock(count: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    let ok = true;
    for (let p = base; ok && p < base + count; p++) ok = await portFree(p);
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

const reason = skipReason();
const EXTRA_NODES = ['podvisor-node-2', 'podvisor-node-3'];

type Json = Record<string, any>;

describe('many podvisor nodes in one cluster', { skip: reason ? `skipped: ${reason}` : false, timeout: 600_000 }, () => {
  let dir: string;
  let admin: string;
  const agents: ChildProcess[] = [];
  const kubectl = async (args: string[]) => {
    const r = await run(kubectlPath()!, ['--kubeconfig', admin, ...args], {}, 60_000);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.out}`);
    return r.out;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podvisor-nodes-'));
    const port = await freePortBlock(21);
    const kubeletPorts = [port + 11, port + 12, port + 13];
    const env = { PODVISOR: projectRoot, E2E_RUNTIME: 'process', E2E_KUBELET_PORT: String(kubeletPorts[0]) };
    const started = await run(join(e2eTools, 'start'), [join(dir, 'cluster'), String(port)], env, 300_000);
    if (started.code !== 0) throw new Error(`kube-e2e start failed:\n${started.out.slice(-3000)}`);
    admin = join(dir, 'cluster', 'kcp', 'admin.kubeconfig');
    // The other nodes: an agent each, with its own root dir (and so its own process runtime service).
    EXTRA_NODES.forEach((name, i) => {
      const log = openSync(join(dir, `${name}.log`), 'a');
      const args = ['agent', '--kubeconfig', admin, '--node-name', name, '--port', String(kubeletPorts[i + 1]), '--root-dir', join(dir, name)];
      agents.push(spawn(process.execPath, [join(projectRoot, 'dist/src/cli/launch.cjs'), ...args], { stdio: ['ignore', log, log] }));
    });
  });

  after(async () => {
    // The pods go through the API server while every node runs; then the agents, and the runtime
    // services they started (a runtime service outlives its agent by design).
    if (admin) {
      await kubectl(['delete', 'deployment', 'spread', '--ignore-not-found']).catch(() => '');
      await waitFor(
        'the Deployment’s pods gone',
        async () => (await kubectl(['get', 'pods', '-l', 'app=spread', '-o', 'name']).catch(() => '')).trim() === '',
        120_000,
      ).catch(() => {});
    }
    for (const a of agents) a.kill('SIGTERM');
    await Promise.all(agents.map((a) => (a.exitCode === null && a.signalCode === null ? new Promise((r) => a.once('exit', r)) : undefined)));
    if (dir) {
      await run(join(e2eTools, 'stop'), [join(dir, 'cluster')], { PODVISOR: projectRoot }, 180_000);
      await stopRuntimeServices(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a Deployment spread over three podvisor nodes becomes Available, its pods on every node', async () => {
    const nodes = ['podvisor-node', ...EXTRA_NODES];
    await waitFor(
      'every node Ready and untainted',
      async () => {
        const list = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as Json;
        const ready = (list.items as Json[]).filter(
          (n) =>
            n.status.conditions.some((c: Json) => c.type === 'Ready' && c.status === 'True') &&
            !(n.spec.taints ?? []).some((t: Json) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'),
        );
        return nodes.every((name) => ready.some((n) => n.metadata.name === name));
      },
      180_000,
    );
    const replicas = 6;
    const file = join(dir, 'deployment.json');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'spread', namespace: 'default' },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'spread' } },
          template: {
            metadata: { labels: { app: 'spread' } },
            spec: {
              terminationGracePeriodSeconds: 1,
              topologySpreadConstraints: [
                { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } },
              ],
              containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }],
            },
          },
        },
      }),
    );
    await kubectl(['apply', '-f', file]);
    await waitFor(
      async () => `the Deployment Available: ${await kubectl(['get', 'pods', '-o', 'wide'])}`,
      async () => {
        const d = JSON.parse(await kubectl(['get', 'deployment', 'spread', '-o', 'json'])) as Json;
        return d.status?.availableReplicas === replicas && (d.status.conditions as Json[]).some((c) => c.type === 'Available' && c.status === 'True');
      },
      240_000,
    );
    const pods = (JSON.parse(await kubectl(['get', 'pods', '-l', 'app=spread', '-o', 'json'])) as Json).items as Json[];
    const perNode = new Map<string, number>();
    for (const p of pods) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    assert.deepEqual(
      nodes.map((n) => perNode.get(n) ?? 0),
      nodes.map(() => replicas / nodes.length),
      `two pods per node: ${JSON.stringify([...perNode])}`,
    );
  });
});
