// The process runtime: a RuntimeService whose containers are host processes, each the leader of its
// own process group, with stdout/stderr written to CRI-format log files. Needs no root.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
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
  type SandboxState,
} from '../cri.js';
import { CriLineSplitter, encodeRecord, MAX_LOG_LINE_BYTES, type LogStream, type LogTag } from '../logs/cri-format.js';
import { formatRFC3339Nano, LogTimestamps } from '../logs/timestamp.js';
import { ContainerLogFile, DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_SIZE_BYTES } from '../logs/writer.js';
import { sandboxDir } from '../root-dir.js';
import { execInContext } from './exec.js';
import { exitCodeOf, isKnownSignal, signalGroup, waitGroupGone } from './process-group.js';
import { describeSpawnError } from './start-error.js';

export const PROCESS_RUNTIME_NAME = 'process';
export const PROCESS_RUNTIME_VERSION = '0.1.0';
/** The address every sandbox gets: containers share the host's network. */
export const SANDBOX_IP = '127.0.0.1';
/** Used when neither the container nor the agent has a PATH (containerd's default). */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

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
}

/** See ProcessRuntime.containerProcess. */
export interface ContainerProcessContext {
  pgid: number | undefined;
  running: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Registers an exec's process group: killed with the container (at once if it is not running). */
  trackGroup(pgid: number): void;
  untrackGroup(pgid: number): void;
}

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
}

interface ContainerRecord {
  status: ContainerStatus;
  config: ContainerConfig;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Set while startContainer runs, so stop/remove wait for the start to settle. */
  starting?: Promise<void>;
  pgid?: number;
  /** Resolves once the container is EXITED and nothing of it runs. */
  exited: Promise<void>;
  markExited: () => void;
  stopTimers: Timer[];
  /** Process groups of execs still running (or left behind by them) in this container. */
  execGroups: Set<number>;
}

/**
 * Containers as host processes. Choices a reader should know:
 * - Each container is `spawn(command[0], [...command[1:], ...args])` with `detached: true` (its own
 *   process group and session), stdin from /dev/null, and exactly the config's env; when that env
 *   sets no PATH the agent's PATH is added (DEFAULT_PATH if the agent has none), since host binaries
 *   are found through it and there is no image config to supply one.
 * - imageRef is `process://<image>`: there is no image to resolve, the image name is only recorded.
 * - When a container's main process exits, whatever is left of its process group is SIGKILLed, so
 *   no process of a container outlives it.
 * - State lives in memory only.
 */
export class ProcessRuntime implements RuntimeService {
  readonly name = PROCESS_RUNTIME_NAME;
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly eventListeners = new Set<(ev: ContainerEvent) => void>();
  private readonly outputListeners = new Set<ContainerOutputListener>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly agentPath: string;

  constructor(private readonly opts: ProcessRuntimeOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.agentPath = process.env.PATH || DEFAULT_PATH;
  }

  async version(): Promise<{ runtimeName: string; runtimeVersion: string }> {
    return { runtimeName: PROCESS_RUNTIME_NAME, runtimeVersion: PROCESS_RUNTIME_VERSION };
  }

  // --- sandboxes ---

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const dir = sandboxDir(this.opts.rootDir, config.metadata.uid);
    await mkdir(dir, { recursive: true });
    if (config.logDirectory) await mkdir(config.logDirectory, { recursive: true });
    const id = newId();
    this.sandboxes.set(id, { id, config, dir, state: 'SANDBOX_READY', createdAt: this.clock.now(), containers: new Map() });
    return id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) return;
    await Promise.all(this.containersOf(podSandboxId).map((c) => this.stopContainer(c.status.id, 0)));
    sb.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    if (!this.sandboxes.has(podSandboxId)) return;
    await this.stopPodSandbox(podSandboxId);
    await Promise.all(this.containersOf(podSandboxId).map((c) => this.removeContainer(c.status.id)));
    this.sandboxes.delete(podSandboxId);
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
    if (logPath) await mkdir(dirname(logPath), { recursive: true });

    const id = newId();
    let markExited!: () => void;
    const exited = new Promise<void>((r) => (markExited = r));
    const rec: ContainerRecord = {
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
        imageRef: `${PROCESS_RUNTIME_NAME}://${config.image}`,
        reason: '',
        message: '',
        labels: { ...config.labels },
        annotations: { ...config.annotations },
        logPath,
      },
      config,
      env: this.processEnv(config),
      cwd: config.workingDir || sb.dir,
      exited,
      markExited,
      stopTimers: [],
      execGroups: new Set(),
    };
    this.containers.set(id, rec);
    sb.containers.set(id, rec);
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
    if (timeoutSeconds <= 0) {
      signalGroup(pgid, 'SIGKILL');
    } else {
      signalGroup(pgid, this.stopSignalOf(c));
      c.stopTimers.push(this.clock.setTimer(timeoutSeconds * 1000, () => signalGroup(pgid, 'SIGKILL')));
    }
    await c.exited;
  }

  async removeContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    // As containerd: a running container is stopped at once before it is removed.
    await this.stopContainer(containerId, 0);
    if (!this.containers.delete(containerId)) return;
    this.sandboxes.get(c.status.podSandboxId)?.containers.delete(containerId);
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

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    const c = this.containers.get(containerId);
    if (!c) throw new NotFoundError(`container ${containerId}`);
    if (c.status.state !== 'CONTAINER_RUNNING') throw new Error('container not running');
    return execInContext(cmd, timeoutSeconds, {
      cwd: c.cwd,
      env: c.env,
      clock: this.clock,
      started: (pgid) => {
        if (c.status.state === 'CONTAINER_RUNNING') c.execGroups.add(pgid);
        else signalGroup(pgid, 'SIGKILL');
      },
      groupGone: (pgid) => c.execGroups.delete(pgid),
    });
  }

  /**
   * A container's process context, for what runs beside it (interactive exec sessions, /proc usage):
   * its main process group, env and working directory; exec groups registered here die with it.
   */
  containerProcess(containerId: string): ContainerProcessContext | undefined {
    const c = this.containers.get(containerId);
    if (!c) return undefined;
    return {
      pgid: c.pgid,
      running: c.status.state === 'CONTAINER_RUNNING',
      cwd: c.cwd,
      env: c.env,
      trackGroup: (pgid) => {
        if (c.status.state === 'CONTAINER_RUNNING') c.execGroups.add(pgid);
        else signalGroup(pgid, 'SIGKILL');
      },
      untrackGroup: (pgid) => c.execGroups.delete(pgid),
    };
  }

  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
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
    await Promise.all([...this.containers.values()].map((c) => this.stopContainer(c.status.id, 0)));
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
    }
  }

  // --- internals ---

  private async start(c: ContainerRecord): Promise<void> {
    const { config, status } = c;
    const logFile = status.logPath
      ? await ContainerLogFile.open({
          path: status.logPath,
          maxSizeBytes: this.opts.logMaxSizeBytes ?? DEFAULT_LOG_MAX_SIZE_BYTES,
          maxFiles: this.opts.logMaxFiles ?? DEFAULT_LOG_MAX_FILES,
          now: () => this.clock.now(),
          logger: this.logger,
        })
      : undefined;

    const argv = [...config.command, ...config.args];
    const file = argv[0] ?? '';
    let child: ChildProcess | undefined;
    let spawnError: NodeJS.ErrnoException | undefined;
    if (!file) {
      spawnError = Object.assign(new Error('no command specified'), { code: 'EINVAL' });
    } else {
      try {
        child = spawn(file, argv.slice(1), { cwd: c.cwd, env: c.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        spawnError = err as NodeJS.ErrnoException;
      }
      if (child && child.pid === undefined) {
        spawnError = await new Promise<NodeJS.ErrnoException>((r) => child!.once('error', r));
      }
    }
    if (spawnError || !child || child.pid === undefined) {
      const message = file
        ? await describeSpawnError(spawnError ?? new Error('spawn failed'), file, c.cwd)
        : 'exec: no command specified';
      await logFile?.close();
      // containerd reports a container that never ran as exited 128 / StartError, started at 0.
      Object.assign(status, {
        state: 'CONTAINER_EXITED' satisfies ContainerState,
        exitCode: 128,
        reason: 'StartError',
        message,
        finishedAt: this.clock.now(),
      });
      c.markExited();
      this.emit(c, 'CONTAINER_STOPPED_EVENT');
      throw new Error(message);
    }

    const pgid = child.pid;
    c.pgid = pgid;
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    child.on('error', (err) => this.logger.warn('Container process error', { containerId: status.id, err: String(err) }));
    this.pipeOutput(c, child, logFile);
    child.once('exit', (code, signal) => void this.onMainExit(c, pgid, code, signal, closed, child, logFile));

    status.startedAt = this.clock.now();
    status.state = 'CONTAINER_RUNNING';
    this.emit(c, 'CONTAINER_STARTED_EVENT');
  }

  private pipeOutput(c: ContainerRecord, child: ChildProcess, logFile: ContainerLogFile | undefined): void {
    const timestamps = new LogTimestamps(this.clock);
    const id = c.status.id;
    const streams = [
      ['stdout', child.stdout!],
      ['stderr', child.stderr!],
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
    child: ChildProcess,
    logFile: ContainerLogFile | undefined,
  ): Promise<void> {
    const exitCode = exitCodeOf(code, signal);
    const finishedAt = this.clock.now();
    // Nothing of a container outlives its main process.
    signalGroup(pgid, 'SIGKILL');
    for (const execGroup of c.execGroups) signalGroup(execGroup, 'SIGKILL');
    c.execGroups.clear();
    // Let the last output reach the log before the container is reported exited.
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (drainTimer = setTimeout(r, PIPE_DRAIN_MS)))]);
    clearTimeout(drainTimer);
    child.stdout?.destroy();
    child.stderr?.destroy();
    await logFile?.close();
    if (!(await waitGroupGone(pgid))) {
      this.logger.warn('Processes of an exited container are still present', { containerId: c.status.id, pgid });
    }
    for (const t of c.stopTimers) t.cancel();
    c.stopTimers = [];
    Object.assign(c.status, {
      state: 'CONTAINER_EXITED' satisfies ContainerState,
      exitCode,
      finishedAt,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      message: '',
    });
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

  private processEnv(config: ContainerConfig): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const { key, value } of config.envs) env[key] = value;
    if (env.PATH === undefined) env.PATH = this.agentPath;
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
    network: { ip: SANDBOX_IP, additionalIps: [] },
    labels: { ...sb.config.labels },
    annotations: { ...sb.config.annotations },
  };
}

function labelsMatch(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}
