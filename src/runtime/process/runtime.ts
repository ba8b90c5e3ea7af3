// The process runtime: a RuntimeService whose containers are host processes, each the leader of its
// own process group, with stdout/stderr written to CRI-format log files. Needs no root (a network
// namespace per pod, pod-netns.ts, does).

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import {
  NotFoundError,
  type ContainerConfig,
  type PodSandboxFilter,
  type ContainerEvent,
  type ContainerFilter,
  type ContainerState,
  type ContainerStatus,
  type ExecSyncResult,
  type PodSandboxConfig,
  type PodSandboxStatus,
  type RuntimeService,
  type ContainerProcessInfo,
  PROCESS_INFO_KEY,
  type SandboxState,
  type ContainerListing,
  type Image,
  type ImageService,
  type StreamingRequest,
  type StreamingURL,
} from '../cri.js';
import { CriLineSplitter, encodeRecord, MAX_LOG_LINE_BYTES, type LogStream, type LogTag } from '../logs/cri-format.js';
import { formatRFC3339Nano, LogTimestamps } from '../logs/timestamp.js';
import { ContainerLogFile, DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_SIZE_BYTES } from '../logs/writer.js';
import { assertUnder, ensureDirUnderSync, modes, sandboxDir } from '../root-dir.js';
import { ContainmentHost, type Containment } from './containment.js';
import { execInContext } from './exec.js';
import {
  assertExecFormat,
  DEFAULT_PATH,
  hostIdentity,
  lookPath,
  readPasswd,
  resolveIdentity,
  spawnTarget,
  type HostIdentity,
  type PasswdEntry,
  type ProcessIdentity,
} from './identity.js';
import { exitCodeOf, isKnownSignal, signalGroup } from './process-group.js';
import { checkCommand, joinBeforeExec, type SpawnPlan } from './cgroup-join.js';
import { findPerl, ProcessSpawner, SpawnerLostError, type SpawnedProcess } from './spawner.js';
import { describeSpawnError } from './start-error.js';
import { bootId, ExitWatcher, findSpawned, procStartTime, processState } from './adopt.js';
import { clearFifoPool, FifoPool, openContainerEnds, openRuntimeReaders, OUTPUT_STREAMS } from './output-fifo.js';
import { RuntimeStateStore, type StoredContainer, type StoredSandbox } from './state.js';
import type { ContainerProcessContext } from './exec-session.js';
import { processStreaming, STREAMING_SOCKET, type ProcessStreaming } from './streaming.js';
import { findUnshare, mountNamespaceArgv, mountNamespaceProblem, underMount } from './mount-namespace.js';
import { PROCESS_RUNTIME_CAPABILITIES, PROCESS_RUNTIME_NAME, PROCESS_RUNTIME_VERSION, withPodNetwork } from './profile.js';
import { attachPodNetwork, detachPodNetwork, findNsenter, netnsName, nsenterArgv, type PodNetworkAttachment, type PodNetworkConfig } from './pod-netns.js';

export { PROCESS_RUNTIME_CAPABILITIES, PROCESS_RUNTIME_NAME, PROCESS_RUNTIME_VERSION } from './profile.js';
/** The address of a sandbox on the host's network (every sandbox, without a pod network). */
export const SANDBOX_IP = '127.0.0.1';

/** Events reach listeners in this process directly: the one, never-broken connection. */
const IN_PROCESS_EVENTS = 1;

/**
 * The image service of a runtime without images: every image is present, as `process://<image>`
 * (the name is only recorded), so the kubelet's image manager pulls only what its policy says to.
 */
const hostImages: ImageService = {
  listImages: async () => [],
  imageStatus: async (image) => hostImage(image.image),
  pullImage: async (image) => hostImage(image.image).id,
  removeImage: async () => {},
};

function hostImage(image: string): Image {
  const prefix = `${PROCESS_RUNTIME_NAME}://`;
  return { id: image.startsWith(prefix) ? image : `${prefix}${image}`, repoTags: [image], repoDigests: [], size: 0 };
}

/**
 * The working directory of a container without a workingDir: its sandbox directory, which is the
 * agent's (0700); `/` for a container running as another user, who could not enter it (as runc
 * starts a container whose image names no working directory).
 */
export function defaultWorkingDir(sandboxDir: string, identity: ProcessIdentity): string {
  return identity.uid === undefined ? sandboxDir : '/';
}

/** Output buffered for the log file beyond which the container's pipes are paused. */
const LOG_HIGH_WATER_BYTES = 4 * 1024 * 1024;
/** How long to wait for a container's pipes to close after its processes were killed. */
const PIPE_DRAIN_MS = 2000;

export interface ProcessRuntimeOptions {
  rootDir: string;
  clock: Clock;
  logger: Logger;
  /** Rotate a container log at this size (kubelet's containerLogMaxSize, default 10Mi). */
  logMaxSizeBytes?: number;
  /** Log files kept per container, the current one included (containerLogMaxFiles, default 5). */
  logMaxFiles?: number;
  /** Processes per pod (the kubelet's podPidsLimit); unset or ≤ 0: unlimited. Needs cgroups. */
  podPidsLimit?: number;
  /** 'auto' (default): a cgroup per container where the host allows; false: track processes through /proc. */
  cgroups?: 'auto' | false;
  /** The agent's credentials (injected in tests). */
  host?: HostIdentity;
  /** Told about each field of a container's config this host cannot honour, when the container is created. */
  onUnhonoured?: (labels: Record<string, string>, field: string, why: string) => void;
  /**
   * Durable mode (the runtime service): sandboxes and containers are recorded in this directory,
   * containers write through FIFOs there, and restore() takes them back after a restart.
   */
  stateDir?: string;
  /** Told whenever an event subscriber or a sandbox comes or goes (see occupied()). */
  onOccupancyChange?: () => void;
  /**
   * A network namespace per sandbox on this CNI bridge (pod-netns.ts), for every pod not on the
   * host's network; unset: every pod shares the host's network. Needs root.
   */
  podNetwork?: PodNetworkConfig;
  /**
   * Durable mode: who forks containers' main processes. 'perl' (default): the spawner, where perl
   * is installed (spawner.ts); 'none': this process, with child_process.spawn.
   */
  spawner?: SpawnerChoice;
}

export type SpawnerChoice = 'perl' | 'none';

/** The kubelet's reason and exit code for a container whose status was lost. */
export const STATUS_UNKNOWN_REASON = 'ContainerStatusUnknown';
const STATUS_UNKNOWN_EXIT_CODE = 137;

export type { ContainerProcessContext } from './exec-session.js';

/** Receives each record a container writes (a line, or a piece of a line longer than 16 KiB). */
export type ContainerOutputListener = (containerId: string, stream: LogStream, line: string) => void;

interface SandboxRecord {
  id: string;
  config: PodSandboxConfig;
  dir: string;
  state: SandboxState;
  createdAt: number;
  /** The sandbox's containers, so a pod's sync lists only its own (not every container of the node). */
  containers: Map<string, ContainerRecord>;
  /** Its network namespace and address, with a pod network (kept after teardown, for its status). */
  network?: PodNetworkAttachment;
}

interface ContainerRecord {
  status: ContainerStatus;
  config: ContainerConfig;
  env: NodeJS.ProcessEnv;
  cwd: string;
  identity: ProcessIdentity;
  /** Every process of the container and its execs (a cgroup, or the /proc tree). */
  procs: Containment;
  /** Set while startContainer runs, so stop/remove wait for the start to settle. */
  starting?: Promise<void>;
  pgid?: number;
  /** Resolves once the container is EXITED and nothing of it runs. */
  exited: Promise<void>;
  markExited: () => void;
  stopTimers: Timer[];
  /** Process groups of execs still running (or left behind by them) in this container. */
  execGroups: Set<number>;
  /** The main process has exited: an exec that starts from now on is killed at once, not kept. */
  mainExited?: boolean;
  /** Durable mode: the main process's pid and start time, while it runs. */
  pid?: number;
  startTime?: string;
  /** Durable mode: when the write-ahead record of a spawn about to happen was written (cleared once the pid is). */
  startBegunAt?: number;
  logFile?: ContainerLogFile;
  /** An adopted container (not our child): stops polling its pid. */
  unwatch?: () => void;
}

/**
 * Containers as host processes. Choices a reader should know:
 * - Each container is `command[0]` exec'd with `[...command[1:], ...args]` in its own process group
 *   and session, stdin from /dev/null, and exactly the config's env plus the PATH and HOME a
 *   container runtime adds when unset (processEnv). As root it runs as the security context's user
 *   and groups; a cgroup per container (or the /proc tree) holds every process it starts. In durable
 *   mode the spawner (spawner.ts) forks it where perl is installed; otherwise child_process.spawn.
 * - A file that is neither a binary nor a `#!` script fails with "exec format error", as with runc.
 * - imageRef is `process://<image>`: there is no image to resolve, the image name is only recorded.
 * - HOSTNAME is the sandbox's hostname unless the config sets it, as containerd sets it.
 * - When a container's main process exits, whatever is left of it (its cgroup, or every process
 *   found related to it in /proc, execs included) is SIGKILLed, so no process outlives it.
 * - Without stateDir, state lives in memory only. With it (the runtime service), see restore().
 */
export class ProcessRuntime implements RuntimeService {
  readonly name = PROCESS_RUNTIME_NAME;
  readonly capabilities;
  readonly images = hostImages;
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly eventListeners = new Set<(ev: ContainerEvent) => void>();
  private readonly outputListeners = new Set<ContainerOutputListener>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly containment: ContainmentHost;
  private readonly host: HostIdentity;
  private readonly passwd: PasswdEntry[];
  private readonly state: RuntimeStateStore | undefined;
  private readonly exitWatcher = new ExitWatcher();
  private readonly fifos: FifoPool | undefined;
  /** CRI Exec and Attach: a streaming server (a 0600 unix socket in durable mode), started on the first request. */
  private readonly streaming: ProcessStreaming;
  /** Durable mode, where perl is installed: what forks containers' main processes (spawner.ts). */
  private readonly spawner: ProcessSpawner | undefined;

  constructor(private readonly opts: ProcessRuntimeOptions) {
    this.capabilities = opts.podNetwork ? withPodNetwork(PROCESS_RUNTIME_CAPABILITIES) : PROCESS_RUNTIME_CAPABILITIES;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.host = opts.host ?? hostIdentity();
    this.passwd = readPasswd();
    this.containment = new ContainmentHost({ cgroups: opts.cgroups ?? 'auto', podPidsLimit: opts.podPidsLimit ?? 0, logger: opts.logger });
    this.state = opts.stateDir ? new RuntimeStateStore(opts.stateDir, opts.logger) : undefined;
    this.fifos = opts.stateDir ? new FifoPool(join(opts.stateDir, 'fifo-pool')) : undefined;
    const listen = opts.stateDir ? { socketPath: join(opts.stateDir, STREAMING_SOCKET) } : { host: '127.0.0.1' };
    this.streaming = processStreaming(this, { logger: opts.logger, clock: opts.clock, listen });
    const perl = opts.stateDir && opts.spawner !== 'none' ? findPerl() : undefined;
    this.spawner = perl ? new ProcessSpawner(perl, opts.logger) : undefined;
  }

  /** True when containers run in cgroups: limits are enforced and OOM kills reported. */
  get enforcesLimits(): boolean {
    return this.containment.enforcesLimits;
  }

  async version(): Promise<{ runtimeName: string; runtimeVersion: string }> {
    return { runtimeName: PROCESS_RUNTIME_NAME, runtimeVersion: PROCESS_RUNTIME_VERSION };
  }

  // --- sandboxes ---

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const dir = sandboxDir(this.opts.rootDir, config.metadata.uid);
    // Synchronous, as the container's log directory below: a few local calls, no thread-pool waits.
    ensureDirUnderSync(this.opts.rootDir, dir, modes.private);
    if (config.logDirectory) ensureDirUnderSync(this.opts.rootDir, config.logDirectory, modes.logDir);
    const id = newId();
    this.containment.openPod(id);
    const sb: SandboxRecord = { id, config, dir, state: 'SANDBOX_READY', createdAt: this.clock.now(), containers: new Map() };
    const ownNetwork = this.opts.podNetwork && config.linux?.securityContext?.namespaceOptions?.network !== 'NODE';
    // The namespace's name is recorded before it exists, so a runtime killed meanwhile still removes it.
    if (ownNetwork) sb.network = { netns: netnsName(id), config: this.opts.podNetwork };
    if (this.state) {
      // Recorded before it exists: a sandbox the disk cannot hold is refused, not half-made.
      try {
        await this.state.saveSandboxBeforeActing(storedSandbox(sb));
      } catch (err) {
        this.containment.closePod(id);
        throw new Error(`cannot record the pod sandbox, so it was not created: ${(err as Error).message}`);
      }
    }
    if (this.opts.podNetwork && sb.network) {
      try {
        sb.network = await attachPodNetwork(this.opts.podNetwork, id, config.portMappings);
      } catch (err) {
        this.containment.closePod(id);
        await this.state?.removeSandbox(id);
        // containerd's words for a sandbox whose network could not be set up.
        throw new Error(`failed to setup network for sandbox "${id}": ${(err as Error).message}`);
      }
      await this.persistSandbox(sb);
    }
    this.sandboxes.set(id, sb);
    this.opts.onOccupancyChange?.();
    return id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) return;
    await Promise.all(this.containersOf(podSandboxId).map((c) => this.stopContainer(c.status.id, 0)));
    // As containerd: a stopped sandbox's network is torn down (CNI DEL), its address kept in its status.
    await this.detachNetwork(sb);
    if (sb.state === 'SANDBOX_NOTREADY') return;
    sb.state = 'SANDBOX_NOTREADY';
    await this.persistSandbox(sb);
  }

  /** CNI DEL and the namespace's removal, once; a failure is logged and tried again at the next stop or remove. */
  private async detachNetwork(sb: SandboxRecord): Promise<void> {
    const network = sb.network;
    const config = network?.config ?? this.opts.podNetwork;
    if (!network || network.detached || !config) return;
    try {
      await detachPodNetwork(config, sb.id, network, sb.config.portMappings);
      network.detached = true;
      await this.persistSandbox(sb);
    } catch (err) {
      this.logger.warn('Failed to tear down the pod network', { podSandboxId: sb.id, netns: network.netns, err: (err as Error).message });
    }
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    if (!this.sandboxes.has(podSandboxId)) return;
    await this.stopPodSandbox(podSandboxId);
    await Promise.all(this.containersOf(podSandboxId).map((c) => this.removeContainer(c.status.id)));
    const sb = this.sandboxes.get(podSandboxId);
    if (sb) await this.detachNetwork(sb);
    this.sandboxes.delete(podSandboxId);
    this.containment.closePod(podSandboxId);
    await this.state?.removeSandbox(podSandboxId);
    this.opts.onOccupancyChange?.();
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) throw new NotFoundError(`pod sandbox ${podSandboxId}`);
    return sandboxStatus(sb);
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandboxStatus[]> {
    const out: PodSandboxStatus[] = [];
    for (const sb of this.sandboxes.values()) {
      if (filter?.id && sb.id !== filter.id) continue;
      if (filter?.state && sb.state !== filter.state) continue;
      if (!labelsMatch(sb.config.labels, filter?.labelSelector)) continue;
      out.push(sandboxStatus(sb));
    }
    return out;
  }

  // --- containers ---

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) throw new NotFoundError(`pod sandbox ${podSandboxId}`);
    if (sb.state !== 'SANDBOX_READY') throw new Error(`sandbox ${podSandboxId} is not ready`);
    const logDir = sandboxConfig.logDirectory || sb.config.logDirectory;
    const logPath = logDir && config.logPath ? join(logDir, config.logPath) : '';
    if (logPath) {
      assertUnder(logDir, logPath);
      ensureDirUnderSync(this.opts.rootDir, dirname(logPath), modes.logDir);
    }

    const id = newId();
    const identity = resolveIdentity(config.linux?.securityContext, this.host, this.passwd);
    const procs = this.containment.container(podSandboxId, id, config.linux?.resources);
    for (const u of [...identity.unhonoured, ...this.containment.unhonoured(config.linux?.resources)]) {
      this.opts.onUnhonoured?.(config.labels, u.field, u.why);
    }
    const rec = this.addRecord(sb, {
      status: {
        id,
        podSandboxId,
        metadata: { ...config.metadata },
        state: 'CONTAINER_CREATED',
        createdAt: this.clock.now(),
        startedAt: 0,
        finishedAt: 0,
        exitCode: 0,
        image: config.image,
        imageRef: hostImage(config.image).id,
        reason: '',
        message: '',
        labels: { ...config.labels },
        annotations: { ...config.annotations },
        logPath,
      },
      config,
      env: this.processEnv(config, identity, sb.config.hostname),
      cwd: config.workingDir || defaultWorkingDir(sb.dir, identity),
      identity,
      procs,
    });
    if (this.state) {
      try {
        await this.state.saveContainerBeforeActing(this.stored(rec));
      } catch (err) {
        this.containers.delete(id);
        sb.containers.delete(id);
        procs.release();
        throw new Error(`cannot record the container, so it was not created: ${(err as Error).message}`);
      }
    }
    this.emit(rec, 'CONTAINER_CREATED_EVENT');
    return id;
  }

  async startContainer(containerId: string): Promise<void> {
    const c = this.get(containerId);
    if (c.status.state !== 'CONTAINER_CREATED' || c.starting) {
      throw new Error(`container ${containerId} is in ${c.status.state} state, only a created container can be started`);
    }
    const started = this.start(c);
    c.starting = started.then(
      () => undefined,
      () => undefined,
    );
    try {
      await started;
    } finally {
      c.starting = undefined;
    }
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    const c = this.get(containerId);
    if (c.starting) await c.starting;
    if (c.status.state !== 'CONTAINER_RUNNING' || c.pgid === undefined) return;
    const pgid = c.pgid;
    if (c.unwatch && c.startTime && processState(pgid, c.startTime) === 'gone') {
      // Adopted and already gone: the poll reports its exit; its pid may name another process now.
      this.exitWatcher.poll();
      await c.exited;
      return;
    }
    const kill = () => {
      signalGroup(pgid, 'SIGKILL');
      c.procs.killSync();
      if (c.unwatch) this.exitWatcher.pollSoon();
    };
    if (timeoutSeconds <= 0) {
      kill();
    } else {
      signalGroup(pgid, this.stopSignalOf(c));
      c.stopTimers.push(this.clock.setTimer(timeoutSeconds * 1000, kill));
    }
    await c.exited;
  }

  async removeContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    // As containerd: a running container is stopped at once before it is removed.
    await this.stopContainer(containerId, 0);
    if (!this.containers.delete(containerId)) return;
    c.procs.release();
    this.sandboxes.get(c.status.podSandboxId)?.containers.delete(containerId);
    await this.state?.removeContainer(containerId);
    this.emit(c, 'CONTAINER_DELETED_EVENT');
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    return snapshot(this.get(containerId).status);
  }

  async listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]> {
    const out: ContainerStatus[] = [];
    const from = filter?.podSandboxId ? this.sandboxes.get(filter.podSandboxId)?.containers : this.containers;
    for (const c of from?.values() ?? []) {
      if (filter?.id && c.status.id !== filter.id) continue;
      if (filter?.state && c.status.state !== filter.state) continue;
      if (!labelsMatch(c.status.labels, filter?.labelSelector)) continue;
      out.push(snapshot(c.status));
    }
    return out;
  }

  async listContainerStates(filter?: ContainerFilter): Promise<ContainerListing[]> {
    return (await this.listContainers(filter)).map((c) => ({ id: c.id, podSandboxId: c.podSandboxId, state: c.state }));
  }

  containerEventsConnection(): number {
    return IN_PROCESS_EVENTS;
  }

  exec(req: StreamingRequest): Promise<StreamingURL> {
    return this.streaming.exec(req);
  }

  attach(req: Omit<StreamingRequest, 'cmd'>): Promise<StreamingURL> {
    return this.streaming.attach(req);
  }

  portForward(): Promise<StreamingURL> {
    return this.streaming.portForward();
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    const c = this.containers.get(containerId);
    if (!c) throw new NotFoundError(`container ${containerId}`);
    if (c.status.state !== 'CONTAINER_RUNNING') throw new Error('container not running');
    let plan: SpawnPlan | undefined;
    return execInContext(cmd, timeoutSeconds, {
      cwd: c.cwd,
      env: c.env,
      clock: this.clock,
      target: (file, args) => (plan = this.spawnPlan(c, file, args)),
      started: (pgid) => this.addExecGroup(c, pgid, plan?.join ?? 'after-spawn'),
      groupGone: (pgid, pipesClosed) => this.forgetExecGroup(c, pgid, pipesClosed),
    });
  }

  /** Whether an exec may start beside the container: it runs, and its main process has not exited. */
  private acceptsExecs(c: ContainerRecord): boolean {
    return c.status.state === 'CONTAINER_RUNNING' && !c.mainExited;
  }

  /**
   * An exec's process group, spawned an instant ago, joins the container's containment (its cgroup,
   * or the /proc tracker), so what it starts, even in a session of its own (a terminal's), ends with
   * the container; one starting as the container ends is killed at once.
   */
  private addExecGroup(c: ContainerRecord, pgid: number, join: SpawnPlan['join']): void {
    if (join === 'before-exec') c.procs.addJoined(pgid);
    else c.procs.addSpawned(pgid);
    if (this.acceptsExecs(c)) c.execGroups.add(pgid);
    else signalGroup(pgid, 'SIGKILL');
  }

  private forgetExecGroup(c: ContainerRecord, pgid: number, pipesClosed: boolean): void {
    c.execGroups.delete(pgid);
    c.procs.forget(pgid, pipesClosed);
  }

  /**
   * A container's process context, for what runs beside it (interactive exec sessions, /proc usage):
   * its main process group, env and working directory; exec groups registered here die with it.
   */
  containerProcess(containerId: string): ContainerProcessContext | undefined {
    const c = this.containers.get(containerId);
    if (!c) return undefined;
    return {
      ...this.processInfo(c),
      running: this.acceptsExecs(c),
      // An interactive exec is held as ExecSync's; whether its pipes are closed is not known here, so
      // whatever still holds them stays the container's.
      spawnPlan: (file, args) => this.spawnPlan(c, file, args),
      trackGroup: (pgid, join) => this.addExecGroup(c, pgid, join ?? 'after-spawn'),
      untrackGroup: (pgid) => this.forgetExecGroup(c, pgid, false),
    };
  }

  /** The verbose ContainerStatus info: the container's process context (see ContainerProcessInfo). */
  async containerInfo(containerId: string): Promise<Record<string, string>> {
    return { [PROCESS_INFO_KEY]: JSON.stringify(this.processInfo(this.get(containerId))) };
  }

  private processInfo(c: ContainerRecord): ContainerProcessInfo {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.env)) if (v !== undefined) env[k] = v;
    const running = c.status.state === 'CONTAINER_RUNNING';
    return {
      ...(running && c.pgid !== undefined ? { pgid: c.pgid, pid: c.pid ?? c.pgid } : {}),
      ...(running && c.pgid !== undefined ? { startTime: c.startTime ?? procStartTime(c.pgid) } : {}),
      env,
      cwd: c.cwd,
      ...(c.identity.uid !== undefined ? { uid: c.identity.uid } : {}),
      ...(c.identity.gid !== undefined ? { gid: c.identity.gid } : {}),
      ...(c.identity.groups ? { groups: [...c.identity.groups] } : {}),
    };
  }

  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void {
    this.eventListeners.add(listener);
    this.opts.onOccupancyChange?.();
    return () => {
      if (this.eventListeners.delete(listener)) this.opts.onOccupancyChange?.();
    };
  }

  /** True while someone follows this runtime's events (an agent) or a pod sandbox exists. */
  occupied(): boolean {
    return this.eventListeners.size > 0 || this.sandboxes.size > 0;
  }

  /**
   * Subscribes to container output as it is written to the log: one call per CRI record, i.e. per
   * line (without its newline), a line longer than 16 KiB arriving in 16 KiB pieces. Output is only
   * decoded to strings while someone listens. Returns the unsubscribe function.
   */
  onContainerOutput(listener: ContainerOutputListener): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  /** Kills every container this runtime started and waits until they are gone. */
  async close(): Promise<void> {
    await this.streaming.close();
    await Promise.all([...this.containers.values()].map((c) => this.stopContainer(c.status.id, 0)));
    // State lives in memory only: the cgroups of what was stopped serve nobody after this.
    for (const c of this.containers.values()) c.procs.release();
    this.spawner?.close();
    for (const id of this.sandboxes.keys()) this.containment.closePod(id);
    // Nor do their network namespaces.
    await Promise.all([...this.sandboxes.values()].map((sb) => this.detachNetwork(sb)));
  }

  /**
   * SIGKILLs, synchronously, every process group this runtime started (containers and execs). The
   * last resort when the agent is about to exit without a graceful stop: signals are delivered
   * before the process ends, so nothing of a container outlives the agent.
   */
  killAllSync(): void {
    for (const c of this.containers.values()) {
      if (c.pgid !== undefined && c.status.state === 'CONTAINER_RUNNING') signalGroup(c.pgid, 'SIGKILL');
      for (const g of c.execGroups) signalGroup(g, 'SIGKILL');
      if (c.status.state === 'CONTAINER_RUNNING' || c.execGroups.size > 0) c.procs.killSync();
    }
  }

  // --- durable state (the runtime service) ---

  /**
   * Takes back what the state directory records, after this runtime's restart. A container recorded
   * running whose pid still names the same process (same start time, same boot) is supervised again:
   * its output FIFOs are reopened and its pid polled, since it is no longer this process's child. One
   * that is gone exited unobserved: it is reported exited with exit code 137 and reason
   * ContainerStatusUnknown. Nothing is signalled for it, since its pid may name another process now.
   */
  async restore(): Promise<{ sandboxes: number; adopted: number; lost: number }> {
    const counts = { sandboxes: 0, adopted: 0, lost: 0 };
    if (!this.state) return counts;
    await this.state.init();
    await clearFifoPool(join(this.state.dir, 'fifo-pool'));
    const { sandboxes, containers } = await this.state.load();
    for (const s of sandboxes) {
      if (this.sandboxes.has(s.id)) continue;
      const sb: SandboxRecord = { ...s, containers: new Map() };
      this.sandboxes.set(s.id, sb);
      if (sb.network && !sb.network.ip && !sb.network.detached) {
        // The runtime stopped while attaching it: what was made goes, and the sandbox is not ready.
        sb.state = 'SANDBOX_NOTREADY';
        await this.detachNetwork(sb);
      }
      if (sb.state === 'SANDBOX_READY') this.containment.openPod(s.id);
      counts.sandboxes++;
    }
    for (const stored of containers) {
      const sb = this.sandboxes.get(stored.status.podSandboxId);
      if (!sb || this.containers.has(stored.status.id)) {
        if (!sb) await this.state.removeContainer(stored.status.id);
        continue;
      }
      const c = this.addRecord(sb, {
        status: stored.status,
        config: stored.config,
        env: stored.env,
        cwd: stored.cwd,
        identity: resolveIdentity(stored.config.linux?.securityContext, this.host, this.passwd),
        procs: this.containment.container(sb.id, stored.status.id, stored.config.linux?.resources),
      });
      const { markExited } = c;
      if (c.status.state === 'CONTAINER_CREATED' && stored.startBegunAt !== undefined) {
        // The runtime died between the write-ahead record and the pid's: the process may run.
        const io = this.state.ioDir(c.status.id);
        const spawned = findSpawned(OUTPUT_STREAMS.map((s) => join(io, s)));
        if (spawned) {
          Object.assign(c.status, { state: 'CONTAINER_RUNNING' satisfies ContainerState, startedAt: stored.startBegunAt });
          await this.adopt(c, spawned.pid, spawned.startTime);
          await this.persist(c);
          counts.adopted++;
        } else {
          this.markLost(c, 'The runtime service stopped while starting the container, which is not running; whether it ran is unknown');
          await this.persist(c);
          markExited();
          counts.lost++;
        }
      } else if (c.status.state === 'CONTAINER_EXITED') {
        markExited();
      } else if (c.status.state === 'CONTAINER_RUNNING') {
        const { pid, startTime } = stored;
        if (pid && startTime && processState(pid, startTime, stored.bootId) === 'running') {
          await this.adopt(c, pid, startTime);
          counts.adopted++;
        } else {
          this.markLost(c, 'The container exited while the runtime service was not running; its exit code is unknown');
          await this.persist(c);
          markExited();
          counts.lost++;
        }
      }
    }
    return counts;
  }

  private markLost(c: ContainerRecord, message: string): void {
    Object.assign(c.status, {
      state: 'CONTAINER_EXITED' satisfies ContainerState,
      exitCode: STATUS_UNKNOWN_EXIT_CODE,
      finishedAt: this.clock.now(),
      reason: STATUS_UNKNOWN_REASON,
      message,
    });
  }

  /**
   * Lets go of every container without stopping it (the runtime service shutting down): output
   * read so far reaches the logs, state reaches the disk; the containers keep running and write into
   * their FIFOs until a runtime reads them again.
   */
  async release(): Promise<void> {
    await this.streaming.close();
    this.exitWatcher.close();
    this.spawner?.close();
    await Promise.all(
      [...this.containers.values()].map(async (c) => {
        c.unwatch = undefined;
        await c.logFile?.whenDrained();
      }),
    );
    await this.state?.flush();
  }

  private async adopt(c: ContainerRecord, pid: number, startTime: string): Promise<void> {
    c.pgid = c.pid = pid;
    c.startTime = startTime;
    try {
      c.procs.add(pid);
    } catch (err) {
      this.logger.warn('Failed to add an adopted container process to its cgroup', { containerId: c.status.id, err: String(err) });
    }
    let streams: Readable[] = [];
    try {
      streams = openRuntimeReaders(this.state!.ioDir(c.status.id));
    } catch (err) {
      this.logger.warn('Cannot reopen container output', { containerId: c.status.id, err: String(err) });
    }
    const logFile = streams.length ? await this.openLog(c.status.logPath) : undefined;
    c.logFile = logFile;
    if (streams.length) this.pipeOutput(c, streams, logFile);
    const closed = streams.length ? streamsEnded(streams) : Promise.resolve();
    // Its output closing is the sign of its exit (nothing of it holds the FIFOs any more); the
    // watcher's slow sweep finds an exit whose output something left behind still holds.
    if (streams.length) void closed.then(() => this.exitWatcher.pollSoon());
    c.unwatch = this.exitWatcher.watch(
      pid,
      startTime,
      () =>
        void this.onMainExit(
          c,
          pid,
          null,
          null,
          closed,
          streams,
          logFile,
          'The container was taken over after a runtime restart, so its exit code could not be observed',
        ),
    );
  }

  private async openOutputFifos(c: ContainerRecord): Promise<{ ends: number[]; readers: Readable[] }> {
    const dir = this.state!.ioDir(c.status.id);
    await this.fifos!.createOutputFifos(dir);
    // The container's ends first: a FIFO reader opened while no writer exists would see end-of-file.
    const ends = openContainerEnds(dir);
    return { ends, readers: openRuntimeReaders(dir) };
  }

  /** A container record with nothing running yet, registered with the runtime and its sandbox. */
  private addRecord(sb: SandboxRecord, fields: Pick<ContainerRecord, 'status' | 'config' | 'env' | 'cwd' | 'identity' | 'procs'>): ContainerRecord {
    let markExited!: () => void;
    const exited = new Promise<void>((r) => (markExited = r));
    const rec: ContainerRecord = { ...fields, exited, markExited, stopTimers: [], execGroups: new Set() };
    this.containers.set(rec.status.id, rec);
    sb.containers.set(rec.status.id, rec);
    return rec;
  }

  private persist(c: ContainerRecord): Promise<void> {
    return this.state ? this.state.saveContainer(this.stored(c)) : Promise.resolve();
  }

  private stored(c: ContainerRecord): StoredContainer {
    const stored: StoredContainer = { status: c.status, config: c.config, env: c.env, cwd: c.cwd };
    if (c.pid !== undefined && c.startTime !== undefined) Object.assign(stored, { pid: c.pid, startTime: c.startTime, bootId: bootId() });
    if (c.startBegunAt !== undefined) stored.startBegunAt = c.startBegunAt;
    return stored;
  }

  private persistSandbox(sb: SandboxRecord): Promise<void> {
    return this.state ? this.state.saveSandbox(storedSandbox(sb)) : Promise.resolve();
  }

  private async openLog(path: string): Promise<ContainerLogFile | undefined> {
    if (!path) return undefined;
    return ContainerLogFile.open({
      path,
      maxSizeBytes: this.opts.logMaxSizeBytes ?? DEFAULT_LOG_MAX_SIZE_BYTES,
      maxFiles: this.opts.logMaxFiles ?? DEFAULT_LOG_MAX_FILES,
      now: () => this.clock.now(),
      logger: this.logger,
    });
  }

  // --- internals ---

  private async start(c: ContainerRecord): Promise<void> {
    const { config, status } = c;
    const logFile = await this.openLog(status.logPath);

    const argv = [...config.command, ...config.args];
    const file = argv[0] ?? '';
    let child: ChildProcess | undefined;
    let spawned: SpawnedProcess | undefined;
    let plan: SpawnPlan | undefined;
    let spawnError: NodeJS.ErrnoException | undefined;
    // Durable mode: output through FIFOs that outlive this process (output-fifo.ts says why).
    const fifo = this.state && file ? await this.openOutputFifos(c) : undefined;
    if (fifo) {
      // Write-ahead: the record says a process may exist before one does, so a runtime killed before
      // it records the pid still finds the process (by these FIFOs) instead of starting a second one.
      c.startBegunAt = this.clock.now();
      try {
        await this.state!.saveContainerBeforeActing(this.stored(c));
      } catch (err) {
        c.startBegunAt = undefined;
        for (const fd of fifo.ends) closeSync(fd);
        for (const r of fifo.readers) r.destroy();
        await logFile?.close();
        throw new Error(`cannot record the container's start, so it was not started: ${(err as Error).message}`);
      }
    }
    if (!file) {
      spawnError = Object.assign(new Error('no command specified'), { code: 'EINVAL' });
    } else {
      try {
        const resolved = checkExecFormat(file, c.env.PATH ?? DEFAULT_PATH, c.cwd);
        if (fifo && this.spawner) {
          spawned = await this.spawnerStart(c, this.spawner, file, argv.slice(1), resolved).catch((err: unknown) => this.startedDespiteLoss(c, err));
        } else {
          plan = this.spawnPlan(c, file, argv.slice(1));
          const t = plan;
          child = spawn(t.file, t.args, {
            cwd: this.spawnCwd(c),
            env: c.env,
            detached: true,
            stdio: fifo ? ['ignore', fifo.ends[0], fifo.ends[1]] : ['ignore', 'pipe', 'pipe'],
            uid: t.uid,
            gid: t.gid,
          });
        }
      } catch (err) {
        spawnError = err as NodeJS.ErrnoException;
      }
      if (child && child.pid === undefined) {
        spawnError = await new Promise<NodeJS.ErrnoException>((r) => child!.once('error', r));
      }
    }
    for (const fd of fifo?.ends ?? []) closeSync(fd);
    const pid = spawned?.pid ?? child?.pid;
    if (spawnError || pid === undefined) {
      for (const r of fifo?.readers ?? []) r.destroy();
      const message = file ? await describeSpawnError(spawnError ?? new Error('spawn failed'), file, c.cwd) : 'exec: no command specified';
      await logFile?.close();
      c.startBegunAt = undefined;
      // containerd reports a container that never ran as exited 128 / StartError, started at 0.
      Object.assign(status, {
        state: 'CONTAINER_EXITED' satisfies ContainerState,
        exitCode: 128,
        reason: 'StartError',
        message,
        finishedAt: this.clock.now(),
      });
      await this.persist(c);
      c.markExited();
      this.emit(c, 'CONTAINER_STOPPED_EVENT');
      throw new Error(message);
    }

    const pgid = pid;
    c.pgid = pgid;
    if (plan?.join === 'before-exec' || (spawned && c.procs.joinFiles())) {
      c.procs.addJoined(pgid);
    } else {
      // Tracked at once; the cgroup moves complete off the event loop (containment.ts).
      c.procs
        .addSpawnedInBackground(pgid)
        .catch((err) => this.logger.warn('Failed to add container process to its cgroup', { containerId: status.id, err: String(err) }));
    }
    const streams: Readable[] = fifo?.readers ?? [child!.stdout!, child!.stderr!];
    const closed = fifo ? streamsEnded(streams) : new Promise<void>((r) => child!.once('close', () => r()));
    this.pipeOutput(c, streams, logFile);
    if (spawned) {
      void spawned.exited.then((e) =>
        'lost' in e ? this.watchUnwaitable(c, pgid, closed, streams, logFile) : this.onMainExit(c, pgid, e.code, e.signal, closed, streams, logFile),
      );
    } else {
      child!.on('error', (err) => this.logger.warn('Container process error', { containerId: status.id, err: String(err) }));
      child!.once('exit', (code, signal) => void this.onMainExit(c, pgid, code, signal, closed, streams, logFile));
    }

    status.startedAt = this.clock.now();
    status.state = 'CONTAINER_RUNNING';
    if (this.state) {
      c.pid = pgid;
      c.startTime = procStartTime(pgid);
      c.startBegunAt = undefined;
      c.logFile = logFile;
      await this.persist(c);
    }
    this.emit(c, 'CONTAINER_STARTED_EVENT');
  }

  /**
   * How to spawn file for container c: inside its cgroup from the first instruction where the
   * containment has one (cgroup-join.ts), as the container's user. Throws, as spawn would, for a
   * command that cannot be executed, so its start error reads the same either way.
   */
  private spawnPlan(c: ContainerRecord, file: string, args: string[]): SpawnPlan {
    const joinFiles = c.procs.joinFiles();
    const netns = this.netnsOf(c);
    const mounts = c.config.mounts ?? [];
    if ((joinFiles || netns || mounts.length) && !underMount(mounts, file)) checkCommand(file, c.env.PATH ?? DEFAULT_PATH, c.cwd, c.identity, this.host);
    const own = this.withMounts(c, spawnTarget(file, args, c.identity, this.host, c.env, c.cwd));
    // In the pod's network namespace: nsenter joins it, then sets the user and execs the command.
    const target = netns ? nsenterArgv(netns, own, this.nsenter()) : own;
    return (joinFiles && joinBeforeExec(target, joinFiles, c.env, this.host)) || { ...target, join: 'after-spawn' };
  }

  /**
   * Starts file for container c through the spawner, whose child does what spawnPlan's shell and
   * setpriv do (join the cgroup, then change user) itself before it execs: one exec, not three.
   * Its output goes to the container's FIFOs, opened by path. resolved: file as found on PATH.
   */
  private spawnerStart(c: ContainerRecord, spawner: ProcessSpawner, file: string, args: string[], resolved: string | undefined): Promise<SpawnedProcess> {
    const path = c.env.PATH ?? DEFAULT_PATH;
    // Fails as spawn would (ENOENT, EACCES, for the container's user), so the start error reads the same.
    const mounts = c.config.mounts ?? [];
    if (!underMount(mounts, file)) checkCommand(file, path, c.cwd, c.identity, this.host);
    const own = this.withMounts(c, spawnTarget(file, args, c.identity, this.host, c.env, c.cwd));
    const netns = this.netnsOf(c);
    // In the pod's network namespace nsenter joins it and sets the user, as in spawnPlan.
    const target: { file: string; args: string[]; uid?: number; gid?: number } = netns ? nsenterArgv(netns, own, this.nsenter()) : own;
    const io = this.state!.ioDir(c.status.id);
    return spawner.spawn({
      file: target.file === file && resolved ? resolved : lookPath(target.file, path, c.cwd),
      argv: [target.file, ...target.args],
      cwd: this.spawnCwd(c),
      env: c.env,
      ...(target.uid !== undefined ? { uid: target.uid } : {}),
      ...(target.gid !== undefined ? { gid: target.gid } : {}),
      stdout: join(io, 'stdout'),
      stderr: join(io, 'stderr'),
      cgroupProcs: c.procs.joinFiles() ?? [],
    });
  }

  /**
   * The spawner was lost during this start: the process runs if something holds the container's
   * output FIFOs (as restore finds one), and is then watched by pid; otherwise the start failed.
   */
  private startedDespiteLoss(c: ContainerRecord, err: unknown): SpawnedProcess {
    if (!(err instanceof SpawnerLostError)) throw err;
    const io = this.state!.ioDir(c.status.id);
    const found = findSpawned(OUTPUT_STREAMS.map((s) => join(io, s)));
    if (!found) throw err;
    return { pid: found.pid, exited: Promise.resolve({ lost: true }) };
  }

  /**
   * A container whose spawner was lost: it runs on, no longer anyone's child here, so its pid is
   * polled as an adopted one's is, and its exit code is unknown.
   */
  private watchUnwaitable(c: ContainerRecord, pid: number, closed: Promise<void>, streams: Readable[], logFile: ContainerLogFile | undefined): void {
    const why = "The runtime's process spawner stopped, so the container's exit code could not be observed";
    const gone = () => void this.onMainExit(c, pid, null, null, closed, streams, logFile, why);
    if (!c.startTime) return gone();
    void closed.then(() => this.exitWatcher.pollSoon());
    c.unwatch = this.exitWatcher.watch(pid, c.startTime, gone);
  }

  /**
   * The target run in a mount namespace of its own where the container has mounts (its volumes at
   * their mountPaths, mount-namespace.ts); the user is then set inside, after the mounts.
   */
  private withMounts(
    c: ContainerRecord,
    own: { file: string; args: string[]; uid?: number; gid?: number },
  ): { file: string; args: string[]; uid?: number; gid?: number } {
    const mounts = c.config.mounts ?? [];
    if (!mounts.length) return own;
    const problem = mountNamespaceProblem(this.host.uid);
    if (problem) throw Object.assign(new Error(`cannot mount the container's volumes: ${problem}`), { code: 'EPERM' });
    const sb = this.sandboxes.get(c.status.podSandboxId);
    const scratch = join(sb?.dir ?? this.opts.rootDir, `mounts-${c.status.id}`);
    mkdirSync(scratch, { recursive: true, mode: 0o700 });
    this.unsharePath ??= findUnshare();
    return mountNamespaceArgv(mounts, own, {
      unshare: this.unsharePath,
      setpriv: this.host.setpriv ?? '/usr/bin/setpriv',
      scratch,
      cwd: c.cwd,
      hostUid: this.host.uid,
      hostGid: this.host.gid,
    });
  }

  private unsharePath: string | undefined;

  /** Where a container's process starts: in a volume, the mount namespace's setup enters it (from /). */
  private spawnCwd(c: ContainerRecord): string {
    return underMount(c.config.mounts ?? [], c.cwd) ? '/' : c.cwd;
  }

  /** The network namespace a container's processes run in; undefined on the host's network. */
  private netnsOf(c: ContainerRecord): string | undefined {
    const network = this.sandboxes.get(c.status.podSandboxId)?.network;
    return network && !network.detached ? network.netns : undefined;
  }

  private nsenterPath: string | undefined;
  private nsenter(): string {
    return (this.nsenterPath ??= findNsenter());
  }

  private pipeOutput(c: ContainerRecord, [stdout, stderr]: Readable[], logFile: ContainerLogFile | undefined): void {
    const timestamps = new LogTimestamps(this.clock);
    const id = c.status.id;
    const streams = [
      ['stdout', stdout!],
      ['stderr', stderr!],
    ] as const;
    for (const [name, readable] of streams) {
      const sink = (tag: LogTag, content: Buffer) => {
        if (logFile) logFile.append(encodeRecord(formatRFC3339Nano(timestamps.nowNs()), name, tag, content));
        if (this.outputListeners.size > 0) {
          const line = content.toString('utf8');
          for (const l of this.outputListeners) {
            try {
              l(id, name, line);
            } catch (err) {
              this.logger.warn('Container output listener failed', { err: String(err) });
            }
          }
        }
      };
      const splitter = new CriLineSplitter(sink, MAX_LOG_LINE_BYTES);
      readable.on('data', (chunk: Buffer) => {
        splitter.write(chunk);
        if (logFile && logFile.pendingBytes > LOG_HIGH_WATER_BYTES && !readable.isPaused()) {
          readable.pause();
          void logFile.whenDrained().then(() => readable.resume());
        }
      });
      readable.once('end', () => splitter.end());
    }
  }

  private async onMainExit(
    c: ContainerRecord,
    pgid: number,
    code: number | null,
    signal: NodeJS.Signals | null,
    closed: Promise<void>,
    streams: Readable[],
    logFile: ContainerLogFile | undefined,
    lostBecause?: string,
  ): Promise<void> {
    const exitCode = lostBecause ? STATUS_UNKNOWN_EXIT_CODE : exitCodeOf(code, signal);
    const finishedAt = this.clock.now();
    // Nothing of a container outlives its main process (an exec starting meanwhile is killed as it starts).
    c.mainExited = true;
    signalGroup(pgid, 'SIGKILL');
    for (const execGroup of c.execGroups) signalGroup(execGroup, 'SIGKILL');
    c.execGroups.clear();
    const allGone = c.procs.killAll();
    // Let the last output reach the log before the container is reported exited.
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (drainTimer = setTimeout(r, PIPE_DRAIN_MS)))]);
    clearTimeout(drainTimer);
    for (const s of streams) s.destroy();
    await logFile?.close();
    // The containment answers for the group too: its members are in the cgroup, or found by the scan.
    if (!(await allGone)) {
      this.logger.warn('Processes of an exited container are still present', { containerId: c.status.id, pgid });
    }
    // As containerd: an OOM kill in the container's cgroup makes the reason OOMKilled.
    const oomKilled = c.procs.oomKilled();
    for (const t of c.stopTimers) t.cancel();
    c.stopTimers = [];
    c.unwatch?.();
    c.unwatch = undefined;
    Object.assign(c.status, {
      state: 'CONTAINER_EXITED' satisfies ContainerState,
      exitCode,
      finishedAt,
      reason: oomKilled ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error',
      message: '',
    });
    if (lostBecause) {
      // Its exit could not be waited for (it was not this runtime's child): say so, as the kubelet does.
      c.status.reason = STATUS_UNKNOWN_REASON;
      c.status.message = lostBecause;
    }
    c.pid = c.startTime = undefined;
    await this.persist(c);
    c.markExited();
    this.emit(c, 'CONTAINER_STOPPED_EVENT');
  }

  private stopSignalOf(c: ContainerRecord): NodeJS.Signals {
    const sig = c.config.stopSignal;
    if (!sig) return 'SIGTERM';
    if (isKnownSignal(sig)) return sig;
    this.logger.warn('Unknown stop signal, using SIGTERM', { containerId: c.status.id, signal: sig });
    return 'SIGTERM';
  }

  /**
   * The config's env, plus what a container runtime adds when it is unset: PATH as containerd's
   * default (the agent's own PATH never reaches a container) and HOME from the user's passwd entry,
   * `/` when the user has none (runc's rule; the host's /etc/passwd is the container's here).
   */
  private processEnv(config: ContainerConfig, identity: ProcessIdentity, sandboxHostname: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const { key, value } of config.envs) env[key] = value;
    env.PATH ??= DEFAULT_PATH;
    env.HOME ??= identity.home;
    // As containerd: the sandbox's hostname (the node's on the host's network), unless the container sets its own.
    env.HOSTNAME ??= sandboxHostname || hostname();
    return env;
  }

  private containersOf(podSandboxId: string): ContainerRecord[] {
    return [...(this.sandboxes.get(podSandboxId)?.containers.values() ?? [])];
  }

  private get(containerId: string): ContainerRecord {
    const c = this.containers.get(containerId);
    if (!c) throw new NotFoundError(`container ${containerId}`);
    return c;
  }

  private emit(c: ContainerRecord, type: ContainerEvent['type']): void {
    if (type === 'CONTAINER_STOPPED_EVENT' || type === 'CONTAINER_DELETED_EVENT') this.streaming.revoke(c.status.id);
    if (this.eventListeners.size === 0) return;
    const ev: ContainerEvent = { containerId: c.status.id, podSandboxId: c.status.podSandboxId, type, createdAt: this.clock.now() };
    for (const l of this.eventListeners) {
      try {
        l(ev);
      } catch (err) {
        this.logger.warn('Container event listener failed', { err: String(err) });
      }
    }
  }
}

/**
 * ENOEXEC for a command that names a file neither binary nor script (assertExecFormat). Returns the
 * command as found on PATH; undefined when it is not found, which is left to the spawn to report.
 */
function checkExecFormat(file: string, path: string, cwd: string): string | undefined {
  let resolved: string;
  try {
    resolved = lookPath(file, path, cwd);
  } catch {
    return undefined;
  }
  assertExecFormat(resolved);
  return resolved;
}

/** Resolves once every stream ended (or failed). */
function streamsEnded(streams: Readable[]): Promise<void> {
  return Promise.all(streams.map((s) => new Promise<void>((r) => (s.readableEnded || s.destroyed ? r() : (s.once('end', r), s.once('close', r)))))).then(
    () => undefined,
  );
}

function storedSandbox(sb: SandboxRecord): StoredSandbox {
  return { id: sb.id, config: sb.config, dir: sb.dir, state: sb.state, createdAt: sb.createdAt, ...(sb.network ? { network: { ...sb.network } } : {}) };
}

function newId(): string {
  return randomBytes(32).toString('hex');
}

function snapshot(s: ContainerStatus): ContainerStatus {
  return { ...s, metadata: { ...s.metadata }, labels: { ...s.labels }, annotations: { ...s.annotations } };
}

function sandboxStatus(sb: SandboxRecord): PodSandboxStatus {
  return {
    id: sb.id,
    metadata: { ...sb.config.metadata },
    state: sb.state,
    createdAt: sb.createdAt,
    network: { ip: sb.network ? (sb.network.ip ?? '') : SANDBOX_IP, additionalIps: [] },
    labels: { ...sb.config.labels },
    annotations: { ...sb.config.annotations },
  };
}

function labelsMatch(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}
