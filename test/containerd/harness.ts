// A private containerd for tests: its own config, root, state, socket and CNI conf dir, a
// docker-registry on 127.0.0.1 (plus the same registry behind HTTP Basic authentication, for
// imagePullSecrets), and the test images pushed to it. Everything it starts is stopped by stop().
//
// Where containerd cannot run (not root, packages missing) start() returns a reason to skip, unless
// PODVISOR_REQUIRE_CONTAINERD=1 (CI), where that is an error.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writePodNetworkConfig } from '../../src/runtime/cni-config.js';
import { waitFor } from '../fixtures/wait.js';
import { buildTestImages, pushImage, BUSYBOX } from './images.js';

const run = promisify(execFile);

export const CNI_BIN_DIR = '/usr/lib/cni';
const NEEDED = ['containerd', 'containerd-shim-runc-v2', 'runc', 'skopeo', 'umoci', 'docker-registry', 'ip'];

export interface ContainerdEnv {
  dir: string;
  /** `unix://…/containerd.sock` */
  endpoint: string;
  /** Where the pod network's CNI config goes (containerd watches it). */
  cniConfDir: string;
  /** A private /24 for this instance's pod network and its bridge's name. */
  podCIDR: string;
  bridge: string;
  /** `127.0.0.1:<port>` without authentication. */
  registry: string;
  /** `127.0.0.1:<port>`: the same images, behind Basic authentication as authUser/authPassword. */
  authRegistry: string;
  authUser: string;
  authPassword: string;
  /** Test image references in the open registry, by tag (pause, busybox, web, entrypoint, node). */
  images: Record<string, string>;
  /** containerd's own log (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

async function which(cmd: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${cmd}`]);
    return true;
  } catch {
    return false;
  }
}

/** Why containerd tests cannot run here, or undefined when they can. */
export async function skipReason(): Promise<string | undefined> {
  const missing: string[] = [];
  for (const c of NEEDED) if (!(await which(c))) missing.push(c);
  if (!existsSync(BUSYBOX)) missing.push('busybox-static');
  if (!existsSync(join(CNI_BIN_DIR, 'bridge'))) missing.push('containernetworking-plugins');
  let reason: string | undefined;
  if (process.getuid?.() !== 0) reason = 'containerd tests need root';
  else if (missing.length)
    reason = `containerd tests need ${missing.join(', ')} (apt-get install containerd runc containernetworking-plugins docker-registry skopeo umoci busybox-static)`;
  if (reason && process.env.PODVISOR_REQUIRE_CONTAINERD === '1') throw new Error(`${reason}, and PODVISOR_REQUIRE_CONTAINERD=1`);
  return reason;
}

/**
 * One private containerd for a test file: started before its tests, stopped after them, handed to
 * use. Resolves to the reason to skip, if the host cannot run it.
 */
export async function containerdSuite(use: (env: ContainerdEnv) => void): Promise<string | undefined> {
  // Loaded here so startContainerd serves programs that are not tests (the bench) as well.
  const { after, before } = await import('node:test');
  const skip = await skipReason();
  let env: ContainerdEnv | undefined;
  before(async () => {
    if (skip) return;
    env = await startContainerd();
    use(env);
  });
  after(async () => {
    await env?.stop();
  });
  return skip;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function httpOK(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

function socketUp(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * An HTTP Basic-authentication gate in front of the registry: Debian's docker-registry checks
 * htpasswd files with bcrypt only, which nothing on a plain host can produce; the gate answers 401
 * with the same `WWW-Authenticate: Basic` challenge the registry would and forwards the rest.
 */
function basicAuthGate(target: number, user: string, password: string): Server {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="podvisor-test"', 'Content-Type': 'application/json' });
      res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
      return;
    }
    const up = request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
}

export async function startContainerd(): Promise<ContainerdEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-ctrd-'));
  const children: ChildProcess[] = [];
  const stops: Array<() => Promise<void>> = [];
  const suffix = Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
  const bridge = `pvt${suffix}`;
  const podCIDR = `10.123.${Math.floor(Math.random() * 250) + 2}.0/24`;
  const logFile = join(dir, 'containerd.log');

  const stop = async () => {
    await removeEverything(join(dir, 'containerd.sock')).catch(() => {});
    for (const c of children.reverse()) await stopChild(c);
    for (const st of stops) await st();
    await run('ip', ['link', 'del', bridge]).catch(() => {});
    await run('umount', ['-R', join(dir, 'state')]).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const reg = await startTestRegistry(dir);
    stops.push(reg.stop);
    const { registry, authRegistry, authUser, authPassword, images } = reg;

    // containerd.
    const cniConfDir = join(dir, 'net.d');
    await writePodNetworkConfig(cniConfDir, { podCIDR, bridge, ipMasq: false, ipamDataDir: join(dir, 'ipam') });
    const sock = join(dir, 'containerd.sock');
    writeFileSync(
      join(dir, 'config.toml'),
      [
        'version = 2',
        `root = "${join(dir, 'root')}"`,
        `state = "${join(dir, 'state')}"`,
        '[grpc]',
        `  address = "${sock}"`,
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = "${join(dir, 'opt')}"`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = "${images.pause}"`,
        '  restrict_oom_score_adj = true',
        '  stream_server_port = "0"',
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        `    bin_dir = "${CNI_BIN_DIR}"`,
        `    conf_dir = "${cniConfDir}"`,
        '',
      ].join('\n'),
    );
    const out = openSync(logFile, 'a');
    const ctrd = spawn('containerd', ['--config', join(dir, 'config.toml')], { stdio: ['ignore', out, out] });
    children.push(ctrd);
    await waitFor('containerd', () => socketUp(sock));

    return {
      dir,
      endpoint: `unix://${sock}`,
      cniConfDir,
      podCIDR,
      bridge,
      registry,
      authRegistry,
      authUser,
      authPassword,
      images,
      log: () => {
        try {
          return readFileSync(logFile, 'utf8');
        } catch {
          return '';
        }
      },
      stop,
    };
  } catch (e) {
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4000) : '';
    await stop();
    throw new Error(`${(e as Error).message}${log ? `\ncontainerd log:\n${log}` : ''}`);
  }
}

export interface TestRegistry {
  /** `127.0.0.1:<port>` without authentication. */
  registry: string;
  /** `127.0.0.1:<port>`: the same images, behind Basic authentication as authUser/authPassword. */
  authRegistry: string;
  authUser: string;
  authPassword: string;
  /** Test image references in the open registry, by tag (pause, busybox, web, entrypoint, node). */
  images: Record<string, string>;
  /** The OCI layout the images were built in. */
  layout: string;
  stop(): Promise<void>;
}

/**
 * A docker-registry on 127.0.0.1 (storage under dir/registry) holding the test images, and the same
 * registry behind HTTP Basic authentication.
 */
export async function startTestRegistry(dir: string): Promise<TestRegistry> {
  const suffix = Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
  let gate: Server | undefined;
  let reg: ChildProcess | undefined;
  const stop = async () => {
    await stopChild(reg);
    if (gate) await new Promise((r) => gate!.close(r));
  };
  try {
    const layout = await buildTestImages();
    const port = await freePort();
    mkdirSync(join(dir, 'registry'), { recursive: true });
    writeFileSync(
      join(dir, 'registry', 'config.yml'),
      `version: 0.1\nlog: {level: error}\nstorage:\n  filesystem: {rootdirectory: ${join(dir, 'registry', 'storage')}}\n  delete: {enabled: true}\nhttp: {addr: 127.0.0.1:${port}}\n`,
    );
    reg = spawn('docker-registry', ['serve', join(dir, 'registry', 'config.yml')], { stdio: 'ignore' });
    const registry = `127.0.0.1:${port}`;
    await waitFor('the registry', () => httpOK(`http://${registry}/v2/`));
    const images: Record<string, string> = {};
    for (const tag of ['pause', 'busybox', 'web', 'entrypoint', 'node']) images[tag] = await pushImage(layout, tag, registry);

    const authUser = 'tester';
    const authPassword = `pw-${suffix}`;
    gate = basicAuthGate(port, authUser, authPassword);
    await new Promise<void>((r) => gate!.listen(0, '127.0.0.1', r));
    const authRegistry = `127.0.0.1:${(gate.address() as AddressInfo).port}`;
    return { registry, authRegistry, authUser, authPassword, images, layout, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Stops and removes every pod sandbox the instance holds (network torn down by CNI DEL). */
async function removeEverything(sock: string): Promise<void> {
  if (!existsSync(sock)) return;
  const { removeAllSandboxes } = await import('./cleanup.js');
  await removeAllSandboxes(`unix://${sock}`);
}
