// Test harness: serves the API layer (and its streaming upgrades) on a real HTTP server on an
// ephemeral port, writes a kubeconfig for it, and runs the real kubectl with a per-test cache dir.

import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeBackend } from '../../src/kubeapi/backend.js';
import { createKubeApiHandler, type KubeApiOptions } from '../../src/kubeapi/handler.js';
import { createStreamingUpgradeHandler } from '../../src/streaming/upgrade.js';
import { waitFor } from '../fixtures/wait.js';

/** kubectl 1.20 (Debian's kubernetes-client) from $KUBECTL or PATH; undefined when absent. */
export const kubectlPath: string | undefined = process.env.KUBECTL || findOnPath('kubectl');

/** kubectl's client minor version (20 for Debian's 1.20), or undefined without kubectl. */
export const kubectlMinor: number | undefined = kubectlPath ? readClientMinor(kubectlPath) : undefined;

function readClientMinor(path: string): number | undefined {
  try {
    const out = JSON.parse(execFileSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 })) as {
      clientVersion?: { minor?: string };
    };
    const minor = Number.parseInt(out.clientVersion?.minor ?? '', 10);
    return Number.isFinite(minor) ? minor : undefined;
  } catch {
    return undefined;
  }
}

function findOnPath(name: string): string | undefined {
  return (process.env.PATH ?? '')
    .split(':')
    .map((d) => join(d, name))
    .find((p) => existsSync(p));
}

export interface ApiServer {
  url: string;
  port: number;
  dir: string;
  kubeconfig: string;
  server: Server;
  close(): Promise<void>;
}

export async function startApiServer(backend: KubeBackend, opts: KubeApiOptions = {}): Promise<ApiServer> {
  const handler = createKubeApiHandler(backend, opts);
  const upgrade = createStreamingUpgradeHandler(backend);
  const server = createServer((req, res) => {
    void handler(req, res).then((handled) => {
      if (!handled) {
        res.writeHead(404);
        res.end();
      }
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (!upgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-kubeapi-'));
  const url = `http://127.0.0.1:${port}`;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: podvisor',
      '  cluster:',
      `    server: ${url}`,
      'users:',
      '- name: podvisor',
      '  user: {}',
      'contexts:',
      '- name: podvisor',
      '  context: {cluster: podvisor, user: podvisor, namespace: default}',
      'current-context: podvisor',
      '',
    ].join('\n'),
  );
  return {
    url,
    port,
    dir,
    kubeconfig,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl's arguments for this API: its kubeconfig and a cache of its own. */
export function kubectlArgs(api: { kubeconfig: string; dir: string }, args: string[]): string[] {
  return ['--kubeconfig', api.kubeconfig, '--cache-dir', join(api.dir, 'cache'), ...args];
}

/**
 * A kubectl of 1.32 or later, whose typed clients send built-in objects as Kubernetes protobuf:
 * $KUBECTL132, else google-cloud-sdk's kubectl.1.32 (its /usr/bin/kubectl dispatcher picks a
 * kubectl by the server's version, 1.30 for podvisor); undefined when there is none.
 */
export const kubectl132Path: string | undefined =
  process.env.KUBECTL132 || ['/usr/lib/google-cloud-sdk/bin/kubectl.1.32', '/usr/lib/google-cloud-sdk/bin/kubectl.1.33'].find((p) => existsSync(p));

/** Runs kubectl to completion (generous deadline), optionally feeding stdin. */
export function kubectl(api: { kubeconfig: string; dir: string }, args: string[], input?: string): Promise<KubectlResult> {
  return runKubectl(kubectlPath!, api, args, input);
}

/** Runs the kubectl at `bin` to completion, as kubectl() runs the default one. */
export function runKubectl(bin: string, api: { kubeconfig: string; dir: string }, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(bin, kubectlArgs(api, args), { timeout: 60_000, env: { ...process.env, HOME: api.dir } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}

/** Starts a long-running kubectl (watch, logs -f, port-forward); the caller kills it. */
export function kubectlSpawn(api: { kubeconfig: string; dir: string }, args: string[]): ChildProcess & { out: () => string } {
  const child = spawn(kubectlPath!, kubectlArgs(api, args), { env: { ...process.env, HOME: api.dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return Object.assign(child, { out: () => out });
}

/**
 * `kubectl exec -it POD… -- sh -c …` on a terminal: kubectl asks for one only when its own stdin is
 * one, so it runs under `script`. The command says whether it has a terminal, reads a line (typed
 * here as `abc` and a carriage return, as a terminal sends it) and exits 4; resolves with the exit
 * code and everything printed.
 */
export async function kubectlExecOnTerminal(api: { kubeconfig: string; dir: string }, target: string[]): Promise<{ code: number | null; out: string }> {
  const script = "'[ -t 0 ] && echo is-a-tty; read x; echo got-$x; exit 4'";
  const cmd = [kubectlPath!, ...kubectlArgs(api, ['exec', '-it', ...target, '--', 'sh', '-c', script])].join(' ');
  const child = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, HOME: api.dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitFor('the terminal check', () => out.includes('is-a-tty'), 60_000);
    child.stdin!.write('abc\r');
    const code = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000))]);
    return { code, out };
  } finally {
    child.stdin!.end();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

export { waitFor };
