// `podvisor agent --kubeconfig` as a real process against a real kube-apiserver 1.20.2: it registers
// the node, runs the pods bound to it, and serves the kubelet port, so that kubectl logs, logs -f,
// exec and port-forward reach its pods through the API server (which presents its kubelet-client
// certificate, checked against --client-ca-file, and is authorised by SubjectAccessReview). The
// tests run in order and share one control plane and one node.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { ControlPlane, kubectlPath, skipReason } from './control-plane.js';
import { stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const NODE = 'podvisor-node';
const reason = skipReason();
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = join(projectRoot, 'dist', 'src', 'cli', 'launch.cjs');
const version = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

type Json = Record<string, any>;

function freePort(): Promise<number> {
  return new Promise((r) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => r(port));
    });
  });
}

/** A running `podvisor agent`, its stderr collected. */
class AgentProcess {
  child!: ChildProcess;
  log = '';
  exited?: Promise<number | null>;

  start(args: string[]): void {
    this.log = '';
    this.child = spawn(process.execPath, [cli, 'agent', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    return this.exited!;
  }
}

/** An HTTPS request to the kubelet port (its serving certificate is self-signed). */
function kubeletGet(port: number, path: string, token?: string): Promise<{ code: number; body: string }> {
  return new Promise((resolveP, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, headers: token ? { Authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolveP({ code: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function httpGet(port: number): Promise<string> {
  return new Promise((resolveP, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolveP(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('podvisor agent --kubeconfig against a real kube-apiserver', { skip: reason ? `skipped: ${reason}` : false, timeout: 900_000 }, () => {
  let cp: ControlPlane;
  const agent = new AgentProcess();
  let rootDir: string;
  let outDir: string;
  let kubeletPort: number;
  let podPort: number;
  let agentArgs: string[];
  let env: Record<string, string>;

  const podJSON = (name: string) => cp.getJSON<Json>(['pod', name, '-n', 'default']);
  const describePod = async (name: string) => JSON.stringify((await podJSON(name).catch(() => undefined))?.status ?? 'gone');
  const create = (obj: Json) => {
    const f = join(outDir, `${randomUUID()}.json`);
    writeFileSync(f, JSON.stringify(obj));
    return cp.kubectlOk(['create', '-f', f]);
  };
  const boundPod = (name: string, containers: Json[], spec: Json = {}): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 10, ...spec, containers },
  });
  const runningReady = (name: string) =>
    waitFor(
      async () => `${name} Running and Ready: ${await describePod(name)}\nagent log:\n${agent.log.slice(-3000)}`,
      async () => {
        const p = await podJSON(name).catch(() => undefined);
        const ready = p?.status?.conditions?.find((c: Json) => c.type === 'Ready')?.status === 'True';
        return p?.status?.phase === 'Running' && ready ? p : undefined;
      },
      90_000,
    );

  before(async () => {
    cp = new ControlPlane();
    await cp.start();
    env = Object.fromEntries(
      readFileSync(join(cp.dir, 'env'), 'utf8')
        .split('\n')
        .map((l) => /^(?:export\s+)?(\w+)=['"]?(.*?)['"]?$/.exec(l))
        .filter((m): m is RegExpExecArray => !!m)
        .map((m) => [m[1]!, m[2]!]),
    );
    rootDir = mkdtempSync(join(tmpdir(), 'podvisor-agent-root-'));
    outDir = mkdtempSync(join(tmpdir(), 'podvisor-agent-out-'));
    const manifests = join(outDir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(
      join(manifests, 'static-sleeper.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-sleeper\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: ["sleep", "3600"]\n',
    );
    kubeletPort = await freePort();
    podPort = await freePort();
    agentArgs = [
      '--kubeconfig',
      cp.nodeKubeconfig,
      '--node-name',
      NODE,
      '--node-ip',
      '127.0.0.1',
      '--port',
      String(kubeletPort),
      '--client-ca-file',
      join(cp.dir, 'ca.crt'),
      '--root-dir',
      rootDir,
      '--pod-manifest-path',
      manifests,
      '--node-labels',
      'node.kubernetes.io/pool=edge',
      '--node-status-update-frequency',
      '2s',
    ];
    agent.start(agentArgs);
  });

  after(async () => {
    try {
      await agent.stop();
    } finally {
      await cp?.destroy();
      // The runtime service and its containers outlive the agent by design: a test leaves none behind.
      if (rootDir) await stopRuntimeServices(rootDir);
      if (rootDir) rmSync(rootDir, { recursive: true, force: true });
      if (outDir) rmSync(outDir, { recursive: true, force: true });
    }
  });

  it('registers the node, which kubectl shows Ready with the podvisor version', async () => {
    const line = await waitFor(
      () => `node Ready in kubectl get nodes; agent log:\n${agent.log.slice(-3000)}`,
      async () => {
        const out = await cp.kubectlOk(['get', 'nodes', '--no-headers']);
        return out.split('\n').find((l) => l.startsWith(`${NODE} `) && /\sReady\s/.test(l));
      },
      90_000,
    );
    assert.match(line, new RegExp(`podvisor/${version.replace(/\./g, '\\.')}`));
    const n = (await cp.getJSON<Json>(['node', NODE]))!;
    assert.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, kubeletPort);
    assert.equal(n.metadata.labels['node.kubernetes.io/pool'], 'edge');
    const lease = await waitFor('the Lease', () => cp.getJSON<Json>(['lease', NODE, '-n', 'kube-node-lease']), 60_000);
    assert.equal(lease.spec.holderIdentity, NODE);
  });

  it('runs a pod bound to it: Running and Ready in kubectl get pod -o wide', async () => {
    const server = `let n=0; setInterval(()=>console.log('tick '+(++n)), 300); require('http').createServer((q,r)=>r.end('hello from web\\n')).listen(${podPort}, '127.0.0.1')`;
    await create(boundPod('web', [{ name: 'app', image: 'node', command: [process.execPath, '-e', server] }]));
    await runningReady('web');
    const wide = await cp.kubectlOk(['get', 'pod', 'web', '-o', 'wide', '--no-headers']);
    assert.match(wide, new RegExp(`^web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\S+\\s+${NODE}\\s`));
  });

  it('mirrors its static pod in the API server', async () => {
    await runningReady(`static-sleeper-${NODE}`);
  });

  it('kubectl logs and logs -f read the container log through the kubelet port', async () => {
    const out = await waitFor(
      async () => `kubectl logs web: ${JSON.stringify(await cp.kubectl(['logs', 'web']))}`,
      async () => {
        const r = await cp.kubectl(['logs', 'web']);
        return r.code === 0 && /tick 2/.test(r.stdout) ? r.stdout : undefined;
      },
      60_000,
    );
    assert.match(out, /^tick 1\n/);
    const tail = await cp.kubectlOk(['logs', 'web', '--tail=1']);
    assert.equal(tail.trim().split('\n').length, 1);

    const follow = spawn(kubectlPath()!, ['--kubeconfig', cp.adminKubeconfig, 'logs', '-f', 'web', '--tail=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    follow.stdout!.on('data', (d: Buffer) => (seen += d.toString()));
    try {
      // New lines keep arriving on the one request: at least three distinct ticks.
      await waitFor(
        () => `followed lines: ${JSON.stringify(seen)}`,
        () => new Set(seen.match(/tick \d+/g) ?? []).size >= 3,
        60_000,
      );
    } finally {
      follow.kill('SIGTERM');
    }
  });

  it('kubectl exec runs a command in the container and passes its exit code', async () => {
    const ok = await cp.kubectl(['exec', 'web', '--', 'sh', '-c', 'echo out-$((6*7)); echo err >&2']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'out-42\n');
    assert.match(ok.stderr, /err/);
    const bad = await cp.kubectl(['exec', 'web', '--', 'sh', '-c', 'exit 3']);
    assert.equal(bad.code, 3, `exit code through the API server: ${bad.stderr}`);
    const stdin = await new Promise<string>((r) => {
      const c = spawn(kubectlPath()!, ['--kubeconfig', cp.adminKubeconfig, 'exec', '-i', 'web', '--', 'tr', 'a-z', 'A-Z'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let o = '';
      c.stdout!.on('data', (d: Buffer) => (o += d.toString()));
      c.on('exit', () => r(o));
      c.stdin!.end('through stdin\n');
    });
    assert.equal(stdin, 'THROUGH STDIN\n');
  });

  it('kubectl port-forward reaches the pod through the API server', async () => {
    const local = await freePort();
    const pf = spawn(kubectlPath()!, ['--kubeconfig', cp.adminKubeconfig, 'port-forward', 'pod/web', `${local}:${podPort}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    pf.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    pf.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(
        () => `port-forward output: ${out}`,
        () => /Forwarding from/.test(out),
        60_000,
      );
      assert.equal(await httpGet(local), 'hello from web\n');
      assert.equal(await httpGet(local), 'hello from web\n');
    } finally {
      pf.kill('SIGTERM');
    }
  });

  it('the kubelet port refuses unauthenticated requests (401) and authorises tokens by SubjectAccessReview', async () => {
    for (const path of ['/pods', '/healthz', '/containerLogs/default/web/app', '/stats/summary']) {
      const r = await kubeletGet(kubeletPort, path);
      assert.equal(r.code, 401, `${path}: ${r.body}`);
      assert.equal(r.body.trim(), 'Unauthorized');
    }
    assert.equal((await kubeletGet(kubeletPort, '/pods', 'not-a-token')).code, 401);
    // The admin (system:masters) may; the node's own identity may not read nodes/proxy.
    const pods = await kubeletGet(kubeletPort, '/pods', env.KCP_ADMIN_TOKEN);
    assert.equal(pods.code, 200, pods.body);
    const names = (JSON.parse(pods.body) as Json).items.map((p: Json) => p.metadata.name);
    assert.ok(names.includes('web'), names.join(','));
    const denied = await kubeletGet(kubeletPort, '/pods', env.KCP_NODE_TOKEN);
    assert.equal(denied.code, 403, denied.body);
    assert.equal(denied.body.trim(), `Forbidden (user=system:node:${NODE}, verb=get, resource=nodes, subresource=proxy)`);
    const stats = await kubeletGet(kubeletPort, '/stats/summary', env.KCP_ADMIN_TOKEN);
    assert.equal(stats.code, 200);
    assert.equal((JSON.parse(stats.body) as Json).node.nodeName, NODE);
    const metrics = await kubeletGet(kubeletPort, '/metrics/resource', env.KCP_ADMIN_TOKEN);
    assert.equal(metrics.code, 200);
    assert.match(metrics.body, /container_cpu_usage_seconds_total\{container="app",namespace="default",pod="web"\}/);
  });

  it('kubectl delete pod terminates it gracefully, then it disappears', async () => {
    const marker = join(outDir, 'graceful-term');
    await create(
      boundPod('graceful', [
        { name: 'app', image: 'busybox', command: ['sh', '-c', `trap 'echo term > ${marker}; exit 0' TERM; while true; do sleep 0.2; done`] },
      ]),
    );
    await runningReady('graceful');
    await cp.kubectlOk(['delete', 'pod', 'graceful', '--timeout=60s'], { timeoutMs: 90_000 });
    assert.equal(await podJSON('graceful'), undefined);
    assert.equal(readFileSync(marker, 'utf8').trim(), 'term');
  });

  it('keeps pods running while the API server is away for 30 s, and catches up when it returns', async () => {
    await create(boundPod('finisher', [{ name: 'app', image: 'busybox', command: ['sh', '-c', 'sleep 5; exit 3'] }], { restartPolicy: 'Never' }));
    await runningReady('finisher');
    const web = (await podJSON('web'))!;
    const webCid = web.status.containerStatuses[0].containerID;
    await cp.stop();
    // Meanwhile the web pod keeps serving.
    await holdsFor('the web pod serving while the API server is away', async () => (await httpGet(podPort)) === 'hello from web\n', 30_000);
    await cp.start();
    const fin = await waitFor(
      async () => `finisher Failed in the API server: ${await describePod('finisher')}`,
      async () => {
        const p = await podJSON('finisher').catch(() => undefined);
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      120_000,
    );
    assert.equal(fin.status.containerStatuses[0].state.terminated.exitCode, 3);
    const after = (await podJSON('web'))!;
    assert.equal(after.status.phase, 'Running');
    assert.equal(after.status.containerStatuses[0].containerID, webCid, 'same container');
    assert.equal(after.status.containerStatuses[0].restartCount, 0);
    const back = Date.now();
    await waitFor(
      'a fresh Ready heartbeat',
      async () => {
        const n = (await cp.getJSON<Json>(['node', NODE]))!;
        const ready = n.status.conditions.find((c: Json) => c.type === 'Ready');
        return ready.status === 'True' && Date.parse(ready.lastHeartbeatTime) >= back - 1000;
      },
      60_000,
    );
    // kubectl still reaches the pod through the kubelet port.
    assert.equal((await cp.kubectl(['exec', 'web', '--', 'true'])).code, 0);
  });

  it('a restarted agent keeps the same pods without restarting them (the runtime service outlives it)', async () => {
    const before = (await podJSON('web'))!;
    const cid = before.status.containerStatuses[0].containerID;
    assert.equal(await agent.stop(), 0, agent.log.slice(-2000));
    assert.match(agent.log, /runtimeOutlivesAgent="?true/, 'the agent runs on the runtime service');
    agent.start(agentArgs); // a fresh log
    await waitFor(
      () => `the agent back; its log:\n${agent.log.slice(-3000)}`,
      () => /podvisor agent started as a cluster node/.test(agent.log),
      90_000,
    );
    const unchanged = async () => {
      const now = await podJSON('web');
      return now?.status.phase === 'Running' && now.status.containerStatuses[0].containerID === cid && now.status.containerStatuses[0].restartCount === 0;
    };
    await holdsFor('web running in the same container, never restarted, after the agent restart', unchanged, 5000);
    const p = (await podJSON('web'))!;
    assert.equal(p.status.phase, 'Running');
    assert.equal(p.status.containerStatuses[0].containerID, cid);
    assert.equal(p.status.containerStatuses[0].restartCount, 0);
    assert.equal(await httpGet(podPort), 'hello from web\n');
  });
});
