// What `run` and `up` share: the agent flags (runtime, root dir, node allocatable, back-off cap), Go
// duration values, building the runtime and kubelet from them, and the signal handling of commands
// that supervise pods.

import { availableParallelism, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import type { ContainerStatus, Pod, PodStatus } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';
import { DEFAULT_MAX_PODS, type NodeAllocatable } from '../kubelet/admission.js';
import { PodKubelet } from '../kubelet/kubelet.js';
import { podRef } from '../kuberuntime/format.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { RuntimeService } from '../runtime/cri.js';
import type { CriRuntimeClient } from '../runtime/cri/client.js';
import { connectOrLaunch } from '../runtime/cri/launch.js';
import { criTarget } from '../runtime/cri/proto.js';
import { followContainerOutput, type OutputListener } from '../runtime/logs/follow.js';
import { readContainerLog } from '../runtime/logs/reader.js';
import { defaultRuntimeEndpoint, detectRuntimeHost, killRecordedContainersSync, lockHolder, processState, runtimeStateDir, unhonouredFields } from '../runtime/process-runtime.js';
import { containerLogPath, defaultRootDir, podLogDir } from '../runtime/root-dir.js';
import { RealClock, type Clock } from '../util/clock.js';
import { streamLogger, type Logger } from '../util/logger.js';
import { mkdir } from 'node:fs/promises';
import { defaultNodeName, type LoadedManifests } from '../config/load.js';
import { shutdownSignals } from './signals.js';
import { UsageError, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';
import { warnUnhonoured } from './output.js';
import { loadFlaggedManifests } from './validate.js';
import { lockRootDir, type RootDirLock } from '../runtime/root-lock.js';
import { durationFlag } from './duration.js';
import { podvisorExecutable } from './executable.js';

export { durationFlag, parseGoDuration } from './duration.js';

export const supportedRuntimes = ['process', 'containerd'];

/** containerd's own socket, where `--runtime=containerd` connects unless told otherwise. */
export const DEFAULT_CONTAINER_RUNTIME_ENDPOINT = 'unix:///run/containerd/containerd.sock';

/** Flags of every command that runs pods. */
export const agentFlagSpecs: FlagSpec[] = [
  {
    name: 'runtime',
    type: 'string',
    default: 'process',
    valueName: 'NAME',
    usage: 'Container runtime: process (each container a host process group) or containerd (images, volumes, pod networking through its CRI).',
  },
  {
    name: 'cni-conf-dir',
    type: 'string',
    valueName: 'DIR',
    usage: "With --runtime=containerd: write podvisor's pod network (a bridge with host-local addresses and portmap) into this CNI configuration directory, the runtime's.",
  },
  { name: 'pod-cidr', type: 'string', valueName: 'CIDR', usage: 'The pod network range with --cni-conf-dir (default 10.85.0.0/16).' },
  { name: 'root-dir', type: 'string', valueName: 'DIR', usage: 'Directory for pod sandboxes and logs (default /var/lib/podvisor as root, else $XDG_STATE_HOME/podvisor).' },
  { name: 'node-cpu', type: 'string', valueName: 'QUANTITY', usage: "CPU allocatable to pods, e.g. 2 or 1500m (default: the host's CPUs)." },
  { name: 'node-memory', type: 'string', valueName: 'QUANTITY', usage: "Memory allocatable to pods, e.g. 4Gi (default: the host's memory)." },
  {
    name: 'max-container-restart-period',
    type: 'string',
    valueName: 'DURATION',
    usage: 'Cap of the CrashLoopBackOff delay, as the kubelet\'s crashLoopBackOff.maxContainerRestartPeriod (default 5m0s).',
  },
  { name: 'max-pods', type: 'string', valueName: 'N', usage: 'Number of pods the node admits, as the kubelet\'s --max-pods (default 110).' },
  {
    name: 'pod-max-pids',
    type: 'string',
    valueName: 'N',
    usage: "Processes each pod may run, as the kubelet's podPidsLimit (-1 or unset: unlimited; needs root and cgroups).",
  },
  {
    name: 'container-runtime-endpoint',
    type: 'string',
    valueName: 'ENDPOINT',
    usage: `CRI endpoint of the runtime service, unix:///path (default unix://<root-dir>/runtime.sock, where the process runtime service is started when nothing answers; ${DEFAULT_CONTAINER_RUNTIME_ENDPOINT} with --runtime=containerd).`,
  },
];

function quantityFlag(parsed: ParsedArgs, name: string, kind: 'cpu' | 'memory'): number | undefined {
  const raw = parsed.flags[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    const q = parseQuantity(String(raw));
    const v = Number(kind === 'cpu' ? q.milliValue() : q.value());
    if (v <= 0) throw new Error('must be greater than 0');
    return v;
  } catch (err) {
    throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: ${(err as Error).message}`);
  }
}

/** Node allocatable: the host's CPUs (×1000 m) and memory, unless --node-cpu / --node-memory say otherwise. */
export function nodeAllocatable(parsed: ParsedArgs): NodeAllocatable {
  return {
    cpuMilli: quantityFlag(parsed, 'node-cpu', 'cpu') ?? availableParallelism() * 1000,
    memoryBytes: quantityFlag(parsed, 'node-memory', 'memory') ?? totalmem(),
    pods: maxPodsFlag(parsed) ?? DEFAULT_MAX_PODS,
  };
}

function maxPodsFlag(parsed: ParsedArgs): number | undefined {
  const raw = parsed.flags['max-pods'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`invalid argument "${String(raw)}" for "--max-pods" flag: must be a whole number greater than 0`);
  }
  return n;
}

/** --pod-max-pids: a whole number, or -1 (unlimited, the kubelet's default). */
function podMaxPidsFlag(parsed: ParsedArgs): number | undefined {
  const raw = parsed.flags['pod-max-pids'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^-?[0-9]+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < -1 || n === 0) {
    throw new UsageError(`invalid argument "${String(raw)}" for "--pod-max-pids" flag: must be -1 or a whole number greater than 0`);
  }
  return n;
}

/** Rejects a --runtime other than the ones built in. */
export function checkRuntimeFlag(parsed: ParsedArgs): string {
  const runtime = String(parsed.flags.runtime ?? 'process');
  if (!supportedRuntimes.includes(runtime)) {
    throw new UsageError(`unsupported runtime "${runtime}" for "--runtime" flag: supported runtimes: ${supportedRuntimes.join(', ')}`);
  }
  return runtime;
}

/** The crashLoopBackOff cap in seconds from --max-container-restart-period (1s..300s, as the kubelet checks). */
export function maxRestartPeriodSeconds(parsed: ParsedArgs): number | undefined {
  const ms = durationFlag(parsed, 'max-container-restart-period');
  if (ms === undefined) return undefined;
  if (ms < 1000 || ms > 300_000) {
    throw new UsageError(`invalid argument "${String(parsed.flags['max-container-restart-period'])}" for "--max-container-restart-period" flag: must be between 1s and 300s`);
  }
  return ms / 1000;
}

/** Everything the agent flags decide, checked; throws UsageError for a bad value. */
export interface AgentSettings {
  runtime: string;
  rootDir: string;
  /** The CRI endpoint (`unix:///…`). */
  runtimeEndpoint: string;
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** The kubelet's podPidsLimit; unset = unlimited. */
  podPidsLimit?: number;
  /** --runtime=containerd: the pod network to write, if any. */
  cniConfDir?: string;
  podCIDR?: string;
}

export function agentSettings(parsed: ParsedArgs, io: Pick<CommandIO, 'env' | 'cwd'>): AgentSettings {
  const runtime = checkRuntimeFlag(parsed);
  const rootFlag = parsed.flags['root-dir'];
  const rootDir = rootFlag ? resolve(io.cwd, String(rootFlag)) : defaultRootDir(io.env);
  const endpointFlag = parsed.flags['container-runtime-endpoint'];
  const runtimeEndpoint = endpointFlag
    ? String(endpointFlag)
    : runtime === 'containerd'
      ? DEFAULT_CONTAINER_RUNTIME_ENDPOINT
      : defaultRuntimeEndpoint(rootDir);
  try {
    criTarget(runtimeEndpoint);
  } catch (err) {
    throw new UsageError(`invalid argument "${runtimeEndpoint}" for "--container-runtime-endpoint" flag: ${(err as Error).message}`);
  }
  const settings: AgentSettings = { runtime, rootDir, runtimeEndpoint, node: nodeAllocatable(parsed) };
  const cap = maxRestartPeriodSeconds(parsed);
  if (cap !== undefined) settings.crashLoopBackOffMaxSeconds = cap;
  const pids = podMaxPidsFlag(parsed);
  if (pids !== undefined) settings.podPidsLimit = pids;
  const cniDir = parsed.flags['cni-conf-dir'];
  const cidr = parsed.flags['pod-cidr'];
  if (runtime !== 'containerd') {
    for (const [name, v] of [['cni-conf-dir', cniDir], ['pod-cidr', cidr]] as const) {
      if (v !== undefined && v !== '') throw new UsageError(`flag "--${name}" needs --runtime=containerd`);
    }
    return settings;
  }
  if (cniDir) settings.cniConfDir = resolve(io.cwd, String(cniDir));
  if (cidr) {
    if (!cniDir) throw new UsageError('flag "--pod-cidr" needs --cni-conf-dir');
    settings.podCIDR = String(cidr);
  }
  return settings;
}

/** The runtime and the kubelet on top of it, as one agent. */
export interface Agent {
  /** The CRI client of the runtime service. */
  runtime: RuntimeService;
  kubelet: PodKubelet;
  clock: Clock;
  rootDir: string;
  /** Last lines of a container instance's log (by its `process://` id, else by the log layout). */
  readLogTail(pod: Pod, status: ContainerStatus, containerId: string | undefined, lines: number): Promise<string[]>;
  /** Container output as it reaches the logs, one call per CRI record; returns the unsubscribe function. */
  onContainerOutput(listener: OutputListener): () => void;
  /** The last resort of an exit without a graceful stop: SIGKILLs this agent's containers synchronously. */
  killAllSync(): void;
  /**
   * Stops the agent: the runtime service removes the sandboxes of pods that finished, and stops
   * itself once it holds none (it is started again on demand). Running pods stay with it.
   */
  close(): Promise<void>;
}

export interface AgentDeps {
  settings: AgentSettings;
  /** ConfigMaps and Secrets from the input, for env references. */
  lookup: ObjectLookup;
  /** The node name the loader defaulted spec.nodeName to. */
  nodeName: string;
  logger?: Logger;
  clock?: Clock;
  stderr: NodeJS.WritableStream;
}

/** `podvisor runtime serve` for the root dir, run by the same Node and CLI as this process. */
function runtimeServiceCommand(settings: AgentSettings): string[] {
  const cli = podvisorExecutable();
  const pids = settings.podPidsLimit !== undefined ? ['--pod-max-pids', String(settings.podPidsLimit)] : [];
  return [process.execPath, cli, 'runtime', 'serve', '--root-dir', settings.rootDir, '--listen', settings.runtimeEndpoint, ...pids];
}

/** Connects to the runtime service (starting the process runtime's when nothing answers). */
export async function connectRuntime(settings: AgentSettings, logger: Logger): Promise<CriRuntimeClient> {
  const own = settings.runtime === 'process';
  if (own) await mkdir(settings.rootDir, { recursive: true, mode: 0o700 });
  if (settings.runtime === 'containerd') {
    const { preparePodNetwork } = await import('./containerd.js');
    await preparePodNetwork(settings, logger);
  }
  const { client } = await connectOrLaunch({
    endpoint: settings.runtimeEndpoint,
    logger,
    warmCodecs: true,
    ...(own ? { command: runtimeServiceCommand(settings), logFile: join(settings.rootDir, 'runtime.log') } : {}),
  });
  return client;
}

/**
 * The runtime of `podvisor agent`: the CRI client, and — for the process runtime on the root dir's
 * own endpoint — how to start its service again when it stops answering (killed), and its pid.
 */
export async function connectAgentRuntime(settings: AgentSettings, logger: Logger): Promise<{
  runtime: CriRuntimeClient;
  restart?(): Promise<void>;
  describe(): Record<string, unknown>;
}> {
  const runtime = await connectRuntime(settings, logger);
  const own = settings.runtime === 'process';
  const stateDir = runtimeStateDir(settings.rootDir);
  const same = (pid: number, start: string) => processState(pid, start) === 'running';
  const describe = () => ({
    name: runtime.name,
    endpoint: settings.runtimeEndpoint,
    ...(own ? { pid: lockHolder(stateDir, same) ?? null } : {}),
  });
  if (!own) return { runtime, describe };
  const restart = async () => {
    // A client of its own to start the service and see it answer; the agent's reconnects by itself.
    const { client, startedPid } = await connectOrLaunch({
      endpoint: settings.runtimeEndpoint,
      logger,
      command: runtimeServiceCommand(settings),
      logFile: join(settings.rootDir, 'runtime.log'),
    });
    await client.close();
    if (startedPid) logger.info('Started the runtime service again', { pid: startedPid, endpoint: settings.runtimeEndpoint });
  };
  return { runtime, restart, describe };
}

export async function createAgent(deps: AgentDeps): Promise<Agent> {
  const clock = deps.clock ?? new RealClock();
  const logger = deps.logger ?? streamLogger(deps.stderr, 'warn');
  const { settings } = deps;
  // A field the runtime cannot honour on this host is a Warning event on the container when its pod starts.
  let warn: (pod: Pod) => void = () => {};
  const runtime = await connectRuntime(settings, logger);
  const kubelet = new PodKubelet({
    runtime,
    clock,
    logger,
    rootDir: settings.rootDir,
    nodeName: deps.nodeName,
    lookup: deps.lookup,
    nodeAllocatable: settings.node,
    // `run` and `up` serve no metrics.
    probeMetrics: false,
    ...(settings.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: settings.crashLoopBackOffMaxSeconds } : {}),
  });
  if (settings.runtime === 'process') {
    const host = detectRuntimeHost();
    const warned = new Set<string>();
    warn = (pod) => {
      const uid = pod.metadata?.uid ?? '';
      if (warned.has(uid)) return;
      warned.add(uid);
      for (const u of unhonouredFields(pod, host)) {
        kubelet.events.event(podRef(pod), 'Warning', 'Unsupported', `${u.field} is not honoured: ${u.why}`);
      }
    };
    kubelet.onPodStatus((pod) => warn(pod));
  }
  const readLogTail = async (pod: Pod, status: ContainerStatus, containerId: string | undefined, lines: number) => {
    let path: string | undefined;
    const id = containerId?.replace(/^[a-z]+:\/\//, '');
    if (id) {
      try {
        path = (await runtime.containerStatus(id)).logPath || undefined;
      } catch {
        // removed already: fall back to the log layout
      }
    }
    const m = pod.metadata ?? {};
    path ??= resolve(podLogDir(settings.rootDir, m.namespace ?? 'default', m.name ?? '', m.uid ?? ''), containerLogPath(status.name, status.restartCount ?? 0));
    try {
      return await readContainerLog(path, { tailLines: lines });
    } catch {
      return [];
    }
  };
  const same = (pid: number, start: string) => processState(pid, start) === 'running';
  const stateDir = runtimeStateDir(settings.rootDir);
  // An agent that dies leaves its containers to the runtime service, for the next start to adopt.
  const killAllSync = () => {
    if (settings.runtime === 'process') killRecordedContainersSync(stateDir, kubelet.sandboxIds(), same);
  };
  const close = async () => {
    let empty = false;
    try {
      await kubelet.removeFinishedSandboxes();
      empty = (await runtime.listPodSandbox()).length === 0;
    } catch (err) {
      logger.warn('Failed to clean up pod sandboxes', { err: String(err) });
    }
    await kubelet.close();
    // A process runtime service with nothing left to supervise stops; the next agent starts it again.
    if (empty && settings.runtime === 'process' && settings.runtimeEndpoint === defaultRuntimeEndpoint(settings.rootDir)) {
      const pid = lockHolder(stateDir, same);
      if (pid) process.kill(pid, 'SIGTERM');
    }
  };
  const onContainerOutput = (listener: OutputListener) => followContainerOutput(runtime, listener);
  return { runtime, kubelet, clock, rootDir: settings.rootDir, readLogTail, onContainerOutput, killAllSync, close };
}

/**
 * What `run` and `up` do before any pod starts: load, default and validate every manifest (all
 * errors at once, exit 2), then build the agent (exit 1 if that fails). Returns the exit code when
 * either step failed.
 */
export async function loadAndCreateAgent(
  files: string[],
  parsed: ParsedArgs,
  io: CommandIO,
  settings: AgentSettings,
  command = 'run',
): Promise<{ agent: Agent; loaded: LoadedManifests } | number> {
  const nodeName = defaultNodeName();
  const loaded = await loadFlaggedManifests(files, parsed, io, { runtime: settings.runtime, nodeName });
  if (typeof loaded === 'number') return loaded;
  await warnUnhonoured(loaded.pods, io.stderr);
  // One owner per root dir: a second run, up or agent would share sandboxes and delete logs.
  let lock: RootDirLock;
  try {
    lock = lockRootDir(settings.rootDir, command);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  let agent: Agent | undefined;
  try {
    agent = await createAgent({ settings, lookup: loaded, nodeName, stderr: io.stderr });
    const close = agent.close;
    agent.close = async () => {
      try {
        await close();
      } finally {
        lock.release();
      }
    };
    // Pods the runtime still runs from an earlier agent are taken over; the others it holds end.
    await agent.kubelet.recover(loaded.pods);
    return { agent, loaded };
  } catch (err) {
    if (agent) await agent.close().catch(() => undefined);
    else lock.release();
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

/** A Pod as `kubectl get -o json` shows it: apiVersion, kind, and its status. */
export function podWithStatus(pod: Pod, status: PodStatus | undefined): Pod {
  return { ...pod, apiVersion: 'v1', kind: 'Pod', ...(status ? { status } : {}) };
}

/** Gives pods without one a creationTimestamp (the moment the agent took them), for AGE. */
export function stampCreation(pods: Pod[], now: number): void {
  const t = new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  for (const p of pods) {
    // creationTimestamp is readonly in the types because the API server sets it; here we are that server.
    const meta = (p.metadata ??= {}) as { creationTimestamp?: string };
    meta.creationTimestamp ??= t;
  }
}

/**
 * Takes a hidden `--NAME=VALUE` / `--NAME VALUE` flag out of argv before the visible flags are parsed,
 * so test-only knobs stay out of `--help`.
 */
export function takeHiddenFlag(argv: readonly string[], name: string): { argv: string[]; value?: string } {
  const out: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a.startsWith(`--${name}=`)) value = a.slice(name.length + 3);
    else if (a === `--${name}` && i + 1 < argv.length) value = argv[++i];
    else out.push(a);
  }
  return value === undefined ? { argv: out } : { argv: out, value };
}

export { shutdownSignals } from './signals.js';

export interface SignalHandlers {
  /** The first SIGINT/SIGTERM/SIGHUP/SIGQUIT (io.signal aborted): begin a graceful shutdown. */
  first(signal: string): void;
  /**
   * A later shutdown signal: the entry point exits the process right after this returns, so it must
   * do its work synchronously.
   */
  again(signal: NodeJS.Signals): void;
}

/**
 * Routes shutdown signals to a supervising command: the first through io.signal, later ones from
 * the process itself (only when running as the real process, i.e. io.signal is given). Returns the
 * unsubscribe function.
 */
export function watchShutdownSignals(io: CommandIO, handlers: SignalHandlers): () => void {
  const signal = io.signal;
  if (!signal) return () => {};
  let firstSeen = false;
  const onAbort = () => {
    firstSeen = true;
    handlers.first(String(signal.reason ?? 'SIGTERM'));
  };
  const onProcessSignal = (sig: NodeJS.Signals) => {
    // The entry point's own listener turns the first signal into the abort; only later ones are ours.
    if (firstSeen) handlers.again(sig);
  };
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  // Prepended so it runs before the entry point's listener exits the process.
  for (const sig of shutdownSignals) process.prependListener(sig, onProcessSignal);
  return () => {
    signal.removeEventListener('abort', onAbort);
    for (const sig of shutdownSignals) process.removeListener(sig, onProcessSignal);
  };
}

