// Several podvisor nodes joined to one control plane: kube-apiserver and etcd (kube-control-plane), the
// real kube-scheduler and kube-controller-manager (built by kube-e2e) with the node-lifecycle timings
// a test chooses, and one `podvisor agent --kubeconfig` per node, each with its own root dir, node
// name, kubelet port, client-certificate identity (system:node:NAME) and process runtime service.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { ControlPlane, kcpTools, skipReason as kcpSkipReason } from './control-plane.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const launcher = join(projectRoot, 'dist/src/cli/launch.cjs');
export const e2eTools = process.env.KUBE_E2E ?? resolve(projectRoot, '../shared/tools/kube-e2e');
export const e2eCache = process.env.E2E_CACHE ?? join(homedir(), '.cache', 'kube-e2e');

/** Why the fleet cannot run here (no control plane, no scheduler or controller-manager, no openssl), or undefined. */
export function skipReason(): string | undefined {
  const kcp = kcpSkipReason();
  if (kcp) return kcp;
  for (const bin of ['kube-scheduler', 'kube-controller-manager']) {
    if (!existsSync(join(e2eCache, 'bin', bin))) return `${join(e2eCache, 'bin', bin)} not built: run ${join(e2eTools, 'build')}`;
  }
  if (!(process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, 'openssl')))) return 'no openssl on PATH (node client certificates)';
  return undefined;
}

export type Json = Record<string, any>;

export const podsOn = (pods: Json[], node: string) => pods.filter((p) => p.spec.nodeName === node);
export const live = (pods: Json[]) => pods.filter((p) => !p.metadata.deletionTimestamp);

/**
 * A Deployment of `sleep MARKER` pods (the marker tells their processes from any other; NODE_NAME in
 * their environment says which node runs them) with a grace of 1 s, requesting cpuRequest each when
 * given, and, with tolerationSeconds, short NoExecute tolerations for unreachable and not-ready nodes.
 */
export function deployment(app: string, replicas: number, marker: string, opts: { tolerationSeconds?: number; cpuRequest?: string } = {}): Json {
  const { tolerationSeconds, cpuRequest } = opts;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          terminationGracePeriodSeconds: 1,
          ...(tolerationSeconds === undefined
            ? {}
            : {
                tolerations: ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({
                  key,
                  operator: 'Exists',
                  effect: 'NoExecute',
                  tolerationSeconds,
                })),
              }),
          containers: [
            {
              name: 'app',
              image: 'busybox',
              command: ['sleep', marker],
              env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
              ...(cpuRequest ? { resources: { requests: { cpu: cpuRequest } } } : {}),
            },
          ],
        },
      },
    },
  };
}

/** A `sleep` duration no other process on the host is likely to have: the marker of one run's pods. */
export function runMarker(): string {
  return `${100_000 + Math.floor(Math.random() * 800_000)}.5`;
}

export interface FleetNode {
  name: string;
  /** --max-pods; the kubelet's 110 when unset. */
  maxPods?: number;
  /** --node-cpu, e.g. `1` or `1500m`; the host's CPUs when unset. */
  cpu?: string;
}

export interface FleetOptions {
  /** kube-controller-manager's --node-monitor-grace-period, seconds (upstream 40). */
  nodeMonitorGraceSeconds?: number;
  /** kube-controller-manager's --node-monitor-period, seconds (upstream 5). */
  nodeMonitorPeriodSeconds?: number;
  /** An audit log of every request at Metadata level (who, verb, resource), for counting. */
  auditLog?: boolean;
}

function run(file: string, args: string[], timeoutMs = 60_000): Promise<{ code: number; out: string }> {
  return new Promise((r) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      r({ code, out: `${stdout}${stderr}` });
    });
  });
}

async function runOk(file: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const r = await run(file, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code}: ${r.out.slice(-2000)}`);
  return r.out;
}

const AUDIT_POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n';

/** The control plane, its scheduler and controller-manager, and the agents of the nodes. */
export class NodeFleet {
  readonly cp: ControlPlane;
  private readonly daemons: ChildProcess[] = [];
  private readonly agents = new Map<string, ChildProcess>();
  private readonly specs = new Map<string, FleetNode>();
  private readonly ports = new Map<string, number>();
  private nextPort = 0;

  constructor(private readonly opts: FleetOptions = {}) {
    this.cp = new ControlPlane();
  }

  get dir(): string {
    return this.cp.dir;
  }

  get auditLogPath(): string {
    return join(this.cp.dir, 'audit.log');
  }

  rootDir(node: string): string {
    return join(this.cp.dir, 'nodes', node);
  }

  /** The process id of a node's agent (undefined while it is down). */
  agentPid(node: string): number | undefined {
    const a = this.agents.get(node);
    return a && a.exitCode === null && a.signalCode === null ? a.pid : undefined;
  }

  /** The pid of the process runtime service of a node's root dir. */
  async runtimeServicePid(node: string): Promise<number | undefined> {
    const pid = Number((await readFile(join(this.rootDir(node), 'runtime', 'service.lock'), 'utf8').catch(() => '')).split(' ')[0]);
    return pid > 0 ? pid : undefined;
  }

  /** A test process ended from outside (its file's timeout sends SIGTERM) takes the whole fleet with it. */
  private readonly onEnd = (signal?: unknown) => {
    const pids = [...this.agents.values(), ...this.daemons].map((c) => c.pid ?? 0).filter((p) => p > 0);
    NodeFleet.killAllSync(this.cp.dir, pids);
    if (signal === 'SIGTERM') process.exit(1);
  };

  /** Starts the control plane, the scheduler and the controller-manager (no nodes yet). */
  async start(): Promise<void> {
    process.once('SIGTERM', this.onEnd);
    process.once('exit', this.onEnd);
    const env: NodeJS.ProcessEnv = {};
    if (this.opts.auditLog) {
      writeFileSync(join(this.cp.dir, 'audit-policy.yaml'), AUDIT_POLICY);
      env.KCP_APISERVER_ARGS = `--audit-policy-file=${join(this.cp.dir, 'audit-policy.yaml')} --audit-log-path=${this.auditLogPath} --audit-log-format=json --audit-log-mode=blocking`;
    }
    await this.cp.start(env);
    // Kubelet ports after the control plane's three; the next ones free are checked when used.
    this.nextPort = this.cp.port + 10;
    const admin = this.cp.adminKubeconfig;
    const common = [
      `--kubeconfig=${admin}`,
      `--authentication-kubeconfig=${admin}`,
      `--authorization-kubeconfig=${admin}`,
      '--bind-address=127.0.0.1',
      '--port=0',
      '--leader-elect=false',
      '--v=1',
    ];
    const kcpDir = this.cp.dir;
    this.daemon('kube-controller-manager', [
      ...common,
      `--secure-port=${this.cp.port + 3}`,
      `--service-account-private-key-file=${join(kcpDir, 'pki', 'sa.key')}`,
      `--root-ca-file=${join(kcpDir, 'ca.crt')}`,
      '--use-service-account-credentials=false',
      `--node-monitor-grace-period=${this.opts.nodeMonitorGraceSeconds ?? 40}s`,
      `--node-monitor-period=${this.opts.nodeMonitorPeriodSeconds ?? 5}s`,
    ]);
    this.daemon('kube-scheduler', [...common, `--secure-port=${this.cp.port + 4}`]);
  }

  private daemon(name: string, args: string[]): void {
    const fd = openSync(join(this.cp.dir, 'logs', `${name}.log`), 'a');
    const env = { ...process.env };
    for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY']) delete env[k];
    this.daemons.push(spawn(join(e2eCache, 'bin', name), args, { stdio: ['ignore', fd, fd], env }));
    closeSync(fd);
  }

  /** A kubeconfig with a client certificate for system:node:NAME (group system:nodes), signed by the cluster CA. */
  private async nodeKubeconfig(node: string): Promise<string> {
    const dir = join(this.cp.dir, 'node-certs', node);
    mkdirSync(dir, { recursive: true });
    const ca = join(this.cp.dir, 'ca.crt');
    const [key, csr, crt] = ['node.key', 'node.csr', 'node.crt'].map((f) => join(dir, f)) as [string, string, string];
    await runOk('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-subj',
      `/O=system:nodes/CN=system:node:${node}`,
      '-out',
      csr,
    ]);
    // A serial of its own: nodes are signed at once, and -CAcreateserial's shared ca.srl is read and
    // rewritten by each signing (one read another's half-written file).
    const serial = `0x${randomBytes(8).toString('hex')}`;
    await runOk('openssl', ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', join(this.cp.dir, 'ca.key'), '-set_serial', serial, '-days', '2', '-out', crt]);
    const b64 = (f: string) => readFileSync(f).toString('base64');
    const server = /server: (\S+)/.exec(readFileSync(this.cp.adminKubeconfig, 'utf8'))![1]!;
    const file = join(dir, 'kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'kcp', cluster: { server, 'certificate-authority-data': b64(ca) } }],
        users: [{ name: node, user: { 'client-certificate-data': b64(crt), 'client-key-data': b64(key) } }],
        contexts: [{ name: node, context: { cluster: 'kcp', user: node } }],
        'current-context': node,
      }),
    );
    return file;
  }

  /** Starts (or, after killAgent, restarts with the same root dir, port and identity) a node's agent. */
  async startAgent(spec: FleetNode): Promise<void> {
    this.specs.set(spec.name, spec);
    let port = this.ports.get(spec.name);
    if (port === undefined) this.ports.set(spec.name, (port = this.nextPort++));
    const kubeconfig = join(this.cp.dir, 'node-certs', spec.name, 'kubeconfig');
    if (!existsSync(kubeconfig)) await this.nodeKubeconfig(spec.name);
    const root = this.rootDir(spec.name);
    mkdirSync(root, { recursive: true });
    const args = ['agent', '--kubeconfig', kubeconfig, '--node-name', spec.name, '--port', String(port), '--root-dir', root];
    args.push('--node-ip', '127.0.0.1', '--client-ca-file', join(this.cp.dir, 'ca.crt'));
    if (spec.maxPods !== undefined) args.push('--max-pods', String(spec.maxPods));
    if (spec.cpu !== undefined) args.push('--node-cpu', spec.cpu);
    const fd = openSync(join(this.cp.dir, 'logs', `agent-${spec.name}.log`), 'a');
    this.agents.set(spec.name, spawn(process.execPath, [launcher, ...args], { stdio: ['ignore', fd, fd] }));
    closeSync(fd);
  }

  /** SIGKILLs a node's agent, as a crash would; its runtime service and containers stay. */
  async killAgent(node: string): Promise<void> {
    const a = this.agents.get(node);
    if (!a || a.exitCode !== null || a.signalCode !== null) return;
    a.kill('SIGKILL');
    await new Promise((r) => a.once('exit', r));
  }

  async restartAgent(node: string): Promise<void> {
    await this.startAgent(this.specs.get(node)!);
  }

  /** Waits until every named node is Ready and carries no NoSchedule/NoExecute taint. */
  async waitReady(nodes: string[], ms = 180_000): Promise<void> {
    await waitFor(
      async () => `nodes ${nodes.join(', ')} Ready and untainted: ${await this.cp.kubectlOk(['get', 'nodes']).catch((e: Error) => e.message)}`,
      async () => {
        const list = (await this.cp.getJSON<Json>(['nodes']))!;
        const ok = (list.items as Json[]).filter(
          (n) =>
            (n.status?.conditions ?? []).some((c: Json) => c.type === 'Ready' && c.status === 'True') &&
            !(n.spec?.taints ?? []).some((t: Json) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'),
        );
        return nodes.every((name) => ok.some((n) => n.metadata.name === name));
      },
      ms,
    );
  }

  /**
   * Kills, at once and synchronously, everything this fleet under dir started: the agents, runtime
   * services and containers of dir/nodes/*, the scheduler and controller-manager, and (kcp stop) the
   * control plane. For a test process that is being ended (its file's timeout): nothing may outlive it.
   */
  static killAllSync(dir: string, pids: number[] = []): void {
    const kill = (pid: number) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    pids.forEach(kill);
    const nodes = join(dir, 'nodes');
    for (const node of existsSync(nodes) ? readdirSync(nodes) : []) {
      const state = join(nodes, node, 'runtime');
      const lock = Number((existsSync(join(state, 'service.lock')) ? readFileSync(join(state, 'service.lock'), 'utf8') : '').split(' ')[0]);
      if (lock > 0) kill(lock);
      const records = join(state, 'containers');
      for (const f of existsSync(records) ? readdirSync(records) : []) {
        try {
          const pid = (JSON.parse(readFileSync(join(records, f), 'utf8')) as { pid?: number }).pid;
          if (pid) kill(pid);
        } catch {
          // not a record
        }
      }
    }
    spawnSync(join(kcpTools, 'stop'), [dir], { timeout: 30_000, stdio: 'ignore', env: { ...process.env, KCP_STOP_TIMEOUT: '5' } });
  }

  /** Stops the agents (their pods deleted through the API first when deletePods), runtime services, daemons and control plane. */
  async destroy(opts: { deleteNamespacePods?: string } = {}): Promise<void> {
    process.off('SIGTERM', this.onEnd);
    process.off('exit', this.onEnd);
    if (opts.deleteNamespacePods) {
      await this.cp
        .kubectl(['-n', opts.deleteNamespacePods, 'delete', 'deployments,replicasets,pods', '--all', '--wait=false'], { timeoutMs: 60_000 })
        .catch(() => undefined);
    }
    for (const a of this.agents.values()) if (a.exitCode === null && a.signalCode === null) a.kill('SIGTERM');
    await Promise.all([...this.agents.values()].map((a) => (a.exitCode === null && a.signalCode === null ? new Promise((r) => a.once('exit', r)) : undefined)));
    await stopRuntimeServices(join(this.cp.dir, 'nodes'));
    // PODVISOR_FLEET_LOGS=DIR keeps every daemon's and agent's log for a look after the run.
    if (process.env.PODVISOR_FLEET_LOGS) cpSync(join(this.cp.dir, 'logs'), join(process.env.PODVISOR_FLEET_LOGS, basename(this.cp.dir)), { recursive: true });
    for (const d of this.daemons) if (d.exitCode === null && d.signalCode === null) d.kill('SIGTERM');
    await Promise.all(this.daemons.map((d) => (d.exitCode === null && d.signalCode === null ? new Promise((r) => d.once('exit', r)) : undefined)));
    await this.cp.destroy();
  }

  /** The pods of a Deployment made by deployment() (label app=NAME), Terminating ones included. */
  async pods(app: string): Promise<Json[]> {
    return (await this.cp.getJSON<Json>(['pods', '-l', `app=${app}`]))!.items as Json[];
  }

  /** The Deployment has n available replicas, Available, and n Ready pods that are not terminating. */
  async available(app: string, n: number): Promise<boolean> {
    const d = await this.cp.getJSON<Json>(['deployment', app]);
    const ready = live(await this.pods(app)).filter(
      (p) => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c: Json) => c.type === 'Ready' && c.status === 'True'),
    );
    return (
      d?.status?.availableReplicas === n && (d.status.conditions as Json[]).some((c) => c.type === 'Available' && c.status === 'True') && ready.length === n
    );
  }

  /** The count of a Deployment's live pods on each node. */
  async spread(app: string, nodes: string[]): Promise<Record<string, number>> {
    const all = live(await this.pods(app));
    return Object.fromEntries(nodes.map((n) => [n, podsOn(all, n).length]));
  }

  /** For a failure message: the pods per node, the nodes and the Deployments. */
  async describe(app: string, nodes: string[]): Promise<string> {
    return `${JSON.stringify(await this.spread(app, nodes).catch(() => ({})))}\n${await this.cp.kubectlOk(['get', 'nodes,deployments']).catch((e: Error) => e.message)}`;
  }

  /** Pods of app that a node rejected (phase Failed), as `name on node: reason message`. */
  async failedPods(app: string): Promise<string[]> {
    return (await this.pods(app))
      .filter((p) => p.status?.phase === 'Failed')
      .map((p) => `${p.metadata.name} on ${p.spec.nodeName}: ${p.status.reason} ${p.status.message}`);
  }

  /**
   * From the audit log (auditLog: true): each node's requests received in [fromMs, toMs), by
   * `verb resource[/subresource]`. A watch counts when its response starts, anything else when it completes.
   */
  async requestsByNode(fromMs: number, toMs: number): Promise<Record<string, Record<string, number>>> {
    const out: Record<string, Record<string, number>> = {};
    for (const line of (await readFile(this.auditLogPath, 'utf8')).split('\n')) {
      if (!line.includes('system:node:')) continue;
      const ev = JSON.parse(line) as Json;
      const user = String(ev.user?.username ?? '');
      if (!user.startsWith('system:node:')) continue;
      const watch = ev.verb === 'watch';
      if (ev.stage !== (watch ? 'ResponseStarted' : 'ResponseComplete')) continue;
      const at = Date.parse(ev.requestReceivedTimestamp);
      if (at < fromMs || at >= toMs) continue;
      const o = ev.objectRef ?? {};
      const what = `${ev.verb} ${o.resource ?? ev.requestURI}${o.subresource ? `/${o.subresource}` : ''}`;
      const node = (out[user.slice('system:node:'.length)] ??= {});
      node[what] = (node[what] ?? 0) + 1;
    }
    return out;
  }

  /** The processes with marker among their arguments, with their environment (to tell whose they are). */
  static async processes(marker: string): Promise<Array<{ pid: number; env: Record<string, string> }>> {
    const out: Array<{ pid: number; env: Record<string, string> }> = [];
    for (const e of await readdir('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      const args = (await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '')).split('\0');
      if (!args.slice(1).includes(marker)) continue;
      const raw = await readFile(`/proc/${e}/environ`, 'utf8').catch(() => '');
      const env: Record<string, string> = {};
      for (const kv of raw.split('\0')) {
        const i = kv.indexOf('=');
        if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
      }
      out.push({ pid: Number(e), env });
    }
    return out;
  }
}
