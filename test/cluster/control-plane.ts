// A real kube-apiserver (with etcd) for the cluster-join tests: the kube-control-plane tools started
// in a temp dir on free ports, kubectl against it, and the reason to skip when the binaries are not
// built (`.ci/run` builds them once per machine into $KCP_CACHE).

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export const kcpTools = process.env.KCP_TOOLS ?? resolve(projectRoot, '../shared/tools/kube-control-plane');
export const kcpCache = process.env.KCP_CACHE ?? join(homedir(), '.cache', 'kube-control-plane');

/** The kubectl to use: the cached 1.20.2, else one on PATH; undefined when there is none. */
export function kubectlPath(): string | undefined {
  const cached = join(kcpCache, 'kubectl-1.20.2');
  if (existsSync(cached)) return cached;
  for (const d of (process.env.PATH ?? '').split(':')) if (d && existsSync(join(d, 'kubectl'))) return join(d, 'kubectl');
  return undefined;
}

/** Why the control plane cannot run here, or undefined when it can. */
export function skipReason(): string | undefined {
  if (!existsSync(join(kcpTools, 'start'))) return `kube-control-plane tools not found at ${kcpTools}`;
  for (const bin of ['kube-apiserver-1.20.2', 'etcd']) {
    if (!existsSync(join(kcpCache, bin))) return `${join(kcpCache, bin)} not built: run ${join(kcpTools, 'build')} (or .ci/run)`;
  }
  if (!kubectlPath()) return 'no kubectl: neither the cached kubectl-1.20.2 nor one on PATH';
  return undefined;
}

function run(file: string, args: string[], opts: { timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(file, args, { timeout: opts.timeoutMs, env: opts.env ?? process.env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolvePromise({ code, stdout: String(stdout), stderr: String(stderr) });
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

/** A port P from the ephemeral range with P+1 and P+2 free too (apiserver, etcd client, etcd peer). */
async function freePortTriple(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = await new Promise<number>((r) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => r(port));
      });
    });
    if (p + 2 > 65535) continue;
    if ((await portFree(p)) && (await portFree(p + 1)) && (await portFree(p + 2))) return p;
  }
  throw new Error('no three consecutive free ports found');
}

export class ControlPlane {
  readonly dir: string;
  port = 0;
  private running = false;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'podvisor-kcp-'));
  }

  get adminKubeconfig(): string {
    return join(this.dir, 'admin.kubeconfig');
  }

  get nodeKubeconfig(): string {
    return join(this.dir, 'node.kubeconfig');
  }

  /** Starts (or resumes, on the same port) etcd and kube-apiserver; waits until ready. extraEnv: kcp's settings (KCP_APISERVER_ARGS…). */
  async start(extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    const env = { ...process.env, KCP_CACHE: kcpCache, KCP_NODE: 'podvisor-node', ...extraEnv };
    let last = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!this.port || attempt > 0) this.port = await freePortTriple();
      const r = await run(join(kcpTools, 'start'), [this.dir, String(this.port)], { timeoutMs: 180_000, env });
      if (r.code === 0) {
        this.running = true;
        return;
      }
      last = `${r.stdout}${r.stderr}`;
      // A resumed start must keep its port (the kubeconfigs name it); only a fresh one may move.
      if (existsSync(join(this.dir, 'admin.kubeconfig'))) break;
    }
    throw new Error(`kube-control-plane start failed:\n${last.slice(-3000)}`);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    const r = await run(join(kcpTools, 'stop'), [this.dir], { timeoutMs: 60_000 });
    this.running = false;
    if (r.code !== 0) throw new Error(`kube-control-plane stop failed: ${r.stderr}`);
  }

  /** Stops everything and deletes the dir. */
  async destroy(): Promise<void> {
    try {
      await this.stop();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** kubectl with the admin kubeconfig. */
  kubectl(args: string[], opts: { timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return run(kubectlPath()!, ['--kubeconfig', this.adminKubeconfig, ...args], { timeoutMs: opts.timeoutMs ?? 60_000 });
  }

  /** kubectl that must succeed; returns stdout. */
  async kubectlOk(args: string[], opts: { timeoutMs?: number } = {}): Promise<string> {
    const r = await this.kubectl(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** `kubectl get … -o json`, parsed; undefined when NotFound. */
  async getJSON<T = Record<string, unknown>>(args: string[]): Promise<T | undefined> {
    const r = await this.kubectl(['get', ...args, '-o', 'json']);
    if (r.code !== 0) {
      if (/NotFound|not found/.test(r.stderr)) return undefined;
      throw new Error(`kubectl get ${args.join(' ')}: ${r.stderr}`);
    }
    return JSON.parse(r.stdout) as T;
  }
}
