// The containerd of a root dir, run by podvisor from the host's binaries (Debian's containerd, runc
// and containernetworking-plugins): what the host lacks for it (named by package), its config written
// and the daemon started detached when nothing answers on its socket — so that it outlives the agent
// that started it, as the process runtime's service does, and the next agent finds it — and, once no
// pod runs there, its sandboxes removed (their network with them) and the daemon stopped, leaving no
// mount of its own behind.

import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Logger } from '../../util/logger.js';
import type { RuntimeService } from '../cri.js';
import { connectOrLaunch } from '../cri/launch.js';
import { CriRuntimeClient } from '../cri/client.js';
import { procStartTime, processState } from '../process/adopt.js';
import { managedContainerdConfig, managedContainerdLayout, type ManagedContainerdLayout } from './config.js';

const run = promisify(execFile);

/** The Debian packages the managed containerd needs, in the order `apt-get install` names them. */
export const CONTAINERD_PACKAGES = 'containerd runc containernetworking-plugins';

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];
/** Where distributions put the CNI plugins: Debian's package, then upstream's tarball. */
export const CNI_BIN_DIRS = ['/usr/lib/cni', '/opt/cni/bin'];
/** CAP_SYS_RESOURCE's bit in a capability mask. */
const CAP_SYS_RESOURCE = 24n;

export interface ManagedContainerdSettings {
  rootDir: string;
  sandboxImage: string;
  /** The CNI configuration directory (default <root>/containerd/net.d). */
  cniConfDir?: string;
  /** containerd's registry hosts directory (default <root>/containerd/certs.d). */
  registryConfigDir?: string;
}

/** The executable named cmd on PATH, if any. */
export function onPath(cmd: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(dir, cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The first directory holding every CNI plugin podvisor's network uses. */
export function cniBinDir(): string | undefined {
  return CNI_BIN_DIRS.find((d) => CNI_PLUGINS.every((p) => existsSync(join(d, p))));
}

/** Whether this process's bounding set holds CAP_SYS_RESOURCE (needed for a negative oom_score_adj). */
export function hasSysResource(): boolean {
  try {
    const m = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return !m || ((BigInt(`0x${m[1]}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
  } catch {
    return true;
  }
}

/** One thing the host lacks for the managed containerd, with the package that brings it. */
export interface HostProblem {
  what: string;
  fix: string;
}

/** What this host lacks to run its own containerd (empty: nothing). */
export function managedContainerdProblems(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): HostProblem[] {
  const out: HostProblem[] = [];
  if (uid !== 0) {
    out.push({
      what: `podvisor runs as uid ${uid}: it starts containerd as root only`,
      fix: 'run as root (sudo), or give --container-runtime-endpoint of a containerd you run',
    });
  }
  const missing = new Set<string>();
  for (const [cmd, pkg] of [
    ['containerd', 'containerd'],
    ['containerd-shim-runc-v2', 'containerd'],
    ['runc', 'runc'],
  ] as const) {
    if (!onPath(cmd, env)) {
      out.push({ what: `${cmd} is not on PATH`, fix: `apt-get install ${pkg}` });
      missing.add(pkg);
    }
  }
  if (!cniBinDir()) {
    out.push({
      what: `the CNI plugins ${CNI_PLUGINS.join(', ')} are not in ${CNI_BIN_DIRS.join(' or ')}`,
      fix: 'apt-get install containernetworking-plugins',
    });
  }
  return out;
}

/** The pid of the root dir's containerd when it runs (as recorded when podvisor started it). */
export function managedContainerdPid(layout: ManagedContainerdLayout): number | undefined {
  try {
    const [pid, start] = readFileSync(layout.pidFile, 'utf8').trim().split(' ');
    return pid && start && processState(Number(pid), start) === 'running' ? Number(pid) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the config (and the directories it names) for a start. */
export async function writeManagedContainerdConfig(settings: ManagedContainerdSettings): Promise<ManagedContainerdLayout> {
  const layout = managedContainerdLayout(settings.rootDir);
  await mkdir(layout.dir, { recursive: true, mode: 0o700 });
  await mkdir(settings.cniConfDir ?? layout.cniConfDir, { recursive: true, mode: 0o755 });
  await mkdir(settings.registryConfigDir ?? layout.certsDir, { recursive: true, mode: 0o755 });
  const text = managedContainerdConfig(layout, {
    sandboxImage: settings.sandboxImage,
    cniBinDir: cniBinDir() ?? CNI_BIN_DIRS[0]!,
    ...(settings.cniConfDir ? { cniConfDir: settings.cniConfDir } : {}),
    ...(settings.registryConfigDir ? { registryConfigDir: settings.registryConfigDir } : {}),
    restrictOOMScoreAdj: !hasSysResource(),
  });
  await writeFile(layout.config, text, { mode: 0o600 });
  return layout;
}

export interface ManagedConnection {
  client: CriRuntimeClient;
  /** The pid of the containerd this call started; undefined when it ran already. */
  startedPid?: number;
}

/**
 * A CRI client of the root dir's containerd, started first when nothing answers on its socket (the
 * host's problems, if any, are the error): detached, its log in <root>/containerd/containerd.log.
 */
export async function connectManagedContainerd(
  settings: ManagedContainerdSettings,
  opts: { logger: Logger; warmCodecs?: boolean },
): Promise<ManagedConnection> {
  const { logger } = opts;
  const layout = managedContainerdLayout(settings.rootDir);
  const endpoint = `unix://${layout.socket}`;
  if (managedContainerdPid(layout) === undefined) {
    const problems = managedContainerdProblems();
    if (problems.length) {
      throw new Error(`podvisor cannot start containerd here: ${problems.map((p) => `${p.what} (${p.fix})`).join('; ')}; or give --container-runtime-endpoint`);
    }
    await writeManagedContainerdConfig(settings);
  }
  const launched = await connectOrLaunch({
    endpoint,
    logger,
    command: [onPath('containerd') ?? 'containerd', '--config', layout.config],
    logFile: layout.log,
    ...(opts.warmCodecs ? { warmCodecs: true } : {}),
  });
  if (launched.startedPid) {
    writeFileSync(layout.pidFile, `${launched.startedPid} ${procStartTime(launched.startedPid) ?? ''}\n`, { mode: 0o600 });
    logger.info('Started containerd for the root dir', { pid: launched.startedPid, endpoint, config: layout.config });
  }
  return launched;
}

/** Whether any sandbox is still ready (a pod runs there). */
export async function runsPods(runtime: Pick<RuntimeService, 'listPodSandbox'>): Promise<boolean> {
  return (await runtime.listPodSandbox()).some((s) => s.state === 'SANDBOX_READY');
}

/**
 * Stops the root dir's containerd when no pod runs there (with livePodUids: none of those pods; the
 * sandboxes of others are left from pods already deleted): its remaining sandboxes are stopped and
 * removed (CNI DEL, network namespaces gone), then containerd gets SIGTERM (SIGKILL after 10 s) and
 * whatever it left mounted under its directory is unmounted. False when a pod still runs or none ran.
 */
export async function stopIdleManagedContainerd(rootDir: string, logger: Logger, livePodUids?: ReadonlySet<string>): Promise<boolean> {
  const layout = managedContainerdLayout(rootDir);
  const pid = managedContainerdPid(layout);
  if (pid === undefined) return false;
  // A client of its own: the agent's is closed by the time it stops.
  const runtime = new CriRuntimeClient({ endpoint: `unix://${layout.socket}`, logger, requestTimeoutMs: 30_000 });
  try {
    const sandboxes = await runtime.listPodSandbox();
    // A ready sandbox of a pod the agent no longer has (deleted, its removal cut short) keeps nothing running.
    if (sandboxes.some((s) => s.state === 'SANDBOX_READY' && (!livePodUids || livePodUids.has(s.metadata.uid)))) return false;
    for (const s of sandboxes) {
      await runtime.stopPodSandbox(s.id).catch((err: Error) => logger.warn('Could not stop a pod sandbox', { id: s.id, err: err.message }));
      await runtime.removePodSandbox(s.id).catch((err: Error) => logger.warn('Could not remove a pod sandbox', { id: s.id, err: err.message }));
    }
  } catch (err) {
    logger.warn('containerd of the root dir does not answer; stopping it all the same', { err: (err as Error).message });
  } finally {
    await runtime.close();
  }
  await stopManagedContainerd(layout, pid);
  logger.info('Stopped containerd of the root dir, no pod left in it', { pid });
  return true;
}

/** SIGTERM (SIGKILL after graceMs), then the daemon's mounts and sockets cleared. */
async function stopManagedContainerd(layout: ManagedContainerdLayout, pid: number, graceMs = 10_000): Promise<void> {
  const start = procStartTime(pid) ?? '';
  const gone = () => processState(pid, start) === 'gone';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // gone already
  }
  const deadline = Date.now() + graceMs;
  for (let delay = 10; !gone(); delay = Math.min(delay * 2, 200)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await sleep(delay);
  }
  await unmountUnder(layout.dir);
  for (const f of [layout.socket, `${layout.socket}.ttrpc`, layout.pidFile]) rmSync(f, { force: true });
}

/** Mount points at or below dir, deepest first (from /proc/self/mountinfo, octal escapes decoded). */
export function mountsUnder(dir: string, mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const points = mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => Boolean(p))
    .map((p) => p.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountUnder(dir: string): Promise<void> {
  for (const p of mountsUnder(dir)) await run('umount', ['-l', p]).catch(() => undefined);
}
