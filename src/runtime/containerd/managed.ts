// The containerd of a root dir, run by podvisor from the host's binaries (Debian's containerd, runc
// and containernetworking-plugins): what the host lacks for it (named by package), its config written
// and the daemon started detached when nothing answers on its socket — so that it outlives the agent
// that started it, as the process runtime's service does, and the next agent finds it — and, once no
// pod runs there, its sandboxes removed (their network with them) and the daemon stopped, leaving no
// mount of its own behind.

import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { release } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Logger } from '../../util/logger.js';
import type { RuntimeService } from '../cri.js';
import { connectOrLaunch } from '../cri/launch.js';
import { bridgeName } from '../cni-config.js';
import { listPodBridges } from '../pod-bridge.js';
import { CriRuntimeClient } from '../cri/client.js';
import { procStartTime, processState } from '../process/adopt.js';
import { importImageArchive } from './import.js';
import { LOCAL_PAUSE_IMAGE, pauseImageStream } from './pause-image.js';
import { CNI_BIN_DIRS, cniBinDir, hasSysResource, managedContainerdProblems, onPath } from './host.js';
import { managedContainerdConfig, managedContainerdLayout, type ManagedContainerdLayout } from './config.js';
import { delegatedCgroup, rootlessKitCommand, rootlessKitStateDir, rootlessSnapshotter, thisRootlessHost } from './rootless.js';

const run = promisify(execFile);

export interface ManagedContainerdSettings {
  rootDir: string;
  sandboxImage: string;
  /** The CNI configuration directory (default <root>/containerd/net.d). */
  cniConfDir?: string;
  /** containerd's registry hosts directory (default <root>/containerd/certs.d). */
  registryConfigDir?: string;
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

/** Whether podvisor runs containerd in a user namespace under RootlessKit (it runs as a normal user). */
export function isRootless(): boolean {
  return (process.getuid?.() ?? 0) !== 0;
}

/** What containerd needs in the user namespace, as probed on this host. */
function rootlessSetup(layout: ManagedContainerdLayout) {
  const host = thisRootlessHost((cmd) => onPath(cmd), process.getuid?.() ?? 0);
  const snapshotter = rootlessSnapshotter(release(), (cmd) => onPath(cmd));
  return {
    snapshotter,
    cgroupDelegated: delegatedCgroup(host) !== undefined,
    ...(snapshotter === 'fuse-overlayfs' ? { fuseOverlayfsSocket: join(layout.dir, 'fuse-overlayfs.sock') } : {}),
  };
}

/** The argv that starts the root dir's containerd: itself as root, under RootlessKit otherwise. */
function containerdCommand(layout: ManagedContainerdLayout): string[] {
  const containerd = onPath('containerd') ?? 'containerd';
  if (!isRootless()) return [containerd, '--config', layout.config];
  const setup = rootlessSetup(layout);
  return rootlessKitCommand({
    rootlesskit: onPath('rootlesskit') ?? 'rootlesskit',
    stateDir: rootlessKitStateDir(layout.dir),
    containerd,
    config: layout.config,
    ...(setup.fuseOverlayfsSocket
      ? {
          fuseOverlayfs: {
            binary: onPath('containerd-fuse-overlayfs-grpc') ?? 'containerd-fuse-overlayfs-grpc',
            socket: setup.fuseOverlayfsSocket,
            root: join(layout.root, 'io.containerd.snapshotter.v1.fuse-overlayfs'),
          },
        }
      : {}),
  });
}

/** Writes the config (and the directories it names) for a start. */
export async function writeManagedContainerdConfig(settings: ManagedContainerdSettings): Promise<ManagedContainerdLayout> {
  const layout = managedContainerdLayout(settings.rootDir);
  // RootlessKit makes its state directory afresh (one left by a daemon killed would hold its socket).
  if (isRootless()) rmSync(rootlessKitStateDir(layout.dir), { recursive: true, force: true });
  await mkdir(layout.dir, { recursive: true, mode: 0o700 });
  await mkdir(settings.cniConfDir ?? layout.cniConfDir, { recursive: true, mode: 0o755 });
  await mkdir(settings.registryConfigDir ?? layout.certsDir, { recursive: true, mode: 0o755 });
  const text = managedContainerdConfig(layout, {
    sandboxImage: settings.sandboxImage,
    cniBinDir: cniBinDir() ?? CNI_BIN_DIRS[0]!,
    ...(settings.cniConfDir ? { cniConfDir: settings.cniConfDir } : {}),
    ...(settings.registryConfigDir ? { registryConfigDir: settings.registryConfigDir } : {}),
    restrictOOMScoreAdj: !hasSysResource(),
    ...(isRootless() ? { rootless: rootlessSetup(layout) } : {}),
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
    command: containerdCommand(layout),
    logFile: layout.log,
    ...(opts.warmCodecs ? { warmCodecs: true } : {}),
  });
  if (settings.sandboxImage === LOCAL_PAUSE_IMAGE) await ensureLocalPauseImage(launched.client, layout.socket, logger);
  if (launched.startedPid) {
    writeFileSync(layout.pidFile, `${launched.startedPid} ${procStartTime(launched.startedPid) ?? ''}\n`, { mode: 0o600 });
    logger.info(isRootless() ? 'Started containerd for the root dir under RootlessKit' : 'Started containerd for the root dir', {
      pid: launched.startedPid,
      endpoint,
      config: layout.config,
    });
  }
  return launched;
}

/** podvisor's own pause image, loaded into the store when it is not there (a new root dir). */
async function ensureLocalPauseImage(client: CriRuntimeClient, socket: string, logger: Logger): Promise<void> {
  if (await client.images.imageStatus({ image: LOCAL_PAUSE_IMAGE })) return;
  await importImageArchive(socket, pauseImageStream());
  logger.info('Loaded the sandbox image', { image: LOCAL_PAUSE_IMAGE });
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
  await bridgeEmptied(bridgeName(rootDir));
  logger.info('Stopped containerd of the root dir, no pod left in it', { pid });
  return true;
}

/**
 * The kernel takes a pod's veth off the bridge once its network namespace is gone, a moment after
 * the sandbox's removal: waits for that (at most ms), so that the bridge is seen without pods.
 */
async function bridgeEmptied(name: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (let delay = 10; Date.now() < deadline; delay = Math.min(delay * 2, 200)) {
    const bridge = (await listPodBridges().catch(() => [])).find((b) => b.name === name);
    if (!bridge || bridge.ports.length === 0) return;
    await sleep(delay);
  }
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
  await sweepContainers(layout);
  await unmountUnder(layout.dir);
  for (const f of [layout.socket, `${layout.socket}.ttrpc`, layout.pidFile]) rmSync(f, { force: true });
}

/**
 * What a sandbox started while containerd was stopping leaves (its creation was under way when the
 * sandboxes were listed): the runc containers in containerd's private runc root, killed and deleted,
 * their network namespaces removed, and the shims serving containerd's socket ended.
 */
async function sweepContainers(layout: ManagedContainerdLayout): Promise<void> {
  const namespaces = await readdir(layout.runcRoot).catch(() => [] as string[]);
  const netns = new Set<string>();
  for (const ns of namespaces) {
    const root = join(layout.runcRoot, ns);
    const listed = await run('runc', ['--root', root, 'list', '--format', 'json']).then(
      (r) => (JSON.parse(r.stdout || 'null') as Array<{ id: string; pid: number }> | null) ?? [],
      () => [],
    );
    for (const c of listed) {
      const name = await run('ip', ['netns', 'identify', String(c.pid)]).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (name) netns.add(name);
      await run('runc', ['--root', root, 'kill', c.id, 'KILL']).catch(() => undefined);
      await run('runc', ['--root', root, 'delete', '--force', c.id]).catch(() => undefined);
    }
  }
  for (const pid of await shimsOf(layout.socket)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  for (const name of netns) await run('ip', ['netns', 'delete', name]).catch(() => undefined);
}

/** The pids of containerd shims started for the socket (their command line names it). */
async function shimsOf(socket: string): Promise<number[]> {
  const out: number[] = [];
  for (const p of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(p)) continue;
    const argv: string[] = await readFile(`/proc/${p}/cmdline`, 'utf8').then(
      (t) => t.split('\0'),
      () => [],
    );
    if (argv[0]?.endsWith('containerd-shim-runc-v2') && argv[argv.indexOf('-address') + 1] === socket) out.push(Number(p));
  }
  return out;
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

export { cniBinDir, hasSysResource, managedContainerdProblems, onPath } from './host.js';
