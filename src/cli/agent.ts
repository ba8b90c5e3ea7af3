// What `run` and `up` share: the agent flags (runtime, root dir, node allocatable, back-off cap), Go
// duration values, building the runtime and kubelet from them, and the signal handling of commands
// that supervise pods.

import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import type { ContainerStatus, Pod, PodStatus } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';
import { DEFAULT_MAX_PODS, type NodeAllocatable } from '../lifecycle/admission.js';
import { PodKubelet } from '../lifecycle/kubelet.js';
import type { ObjectLookup } from '../lifecycle/start.js';
import { readContainerLog } from '../runtime/logs/reader.js';
import { ProcessRuntime } from '../runtime/process/runtime.js';
import { containerLogPath, defaultRootDir, podLogDir } from '../runtime/root-dir.js';
import { RealClock, type Clock } from '../util/clock.js';
import { streamLogger, type Logger } from '../util/logger.js';
import { defaultNodeName, loadManifests, type LoadedManifests, type ValidateMode } from '../config/load.js';
import { UsageError, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';
import { reportLoadError } from './output.js';
import { lockRootDir, type RootDirLock } from '../runtime/root-lock.js';
import { durationFlag } from './duration.js';

export { durationFlag, parseGoDuration } from './duration.js';

export const supportedRuntimes = ['process'];

/** Flags of every command that runs pods. */
export const agentFlagSpecs: FlagSpec[] = [
  { name: 'runtime', type: 'string', default: 'process', valueName: 'NAME', usage: 'Container runtime: process (each container a host process group).' },
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
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
}

export function agentSettings(parsed: ParsedArgs, io: Pick<CommandIO, 'env' | 'cwd'>): AgentSettings {
  const runtime = checkRuntimeFlag(parsed);
  const rootFlag = parsed.flags['root-dir'];
  const rootDir = rootFlag ? resolve(io.cwd, String(rootFlag)) : defaultRootDir(io.env);
  const settings: AgentSettings = { runtime, rootDir, node: nodeAllocatable(parsed) };
  const cap = maxRestartPeriodSeconds(parsed);
  if (cap !== undefined) settings.crashLoopBackOffMaxSeconds = cap;
  return settings;
}

/** The runtime and the kubelet on top of it, as one agent. */
export interface Agent {
  runtime: ProcessRuntime;
  kubelet: PodKubelet;
  clock: Clock;
  rootDir: string;
  /** Last lines of a container instance's log (by its `process://` id, else by the log layout). */
  readLogTail(pod: Pod, status: ContainerStatus, containerId: string | undefined, lines: number): Promise<string[]>;
  /** Stops everything at once and releases the runtime. */
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

export function createAgent(deps: AgentDeps): Agent {
  const clock = deps.clock ?? new RealClock();
  const logger = deps.logger ?? streamLogger(deps.stderr, 'warn');
  const { settings } = deps;
  const runtime = new ProcessRuntime({ rootDir: settings.rootDir, clock, logger });
  const kubelet = new PodKubelet({
    runtime,
    clock,
    logger,
    rootDir: settings.rootDir,
    nodeName: deps.nodeName,
    lookup: deps.lookup,
    nodeAllocatable: settings.node,
    ...(settings.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: settings.crashLoopBackOffMaxSeconds } : {}),
  });
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
  // Whatever ends the process (a second signal, an uncaught error), no container may outlive it.
  const killOnExit = () => runtime.killAllSync();
  process.once('exit', killOnExit);
  const close = async () => {
    await kubelet.close();
    process.removeListener('exit', killOnExit);
  };
  return { runtime, kubelet, clock, rootDir: settings.rootDir, readLogTail, close };
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
  let loaded: LoadedManifests;
  try {
    loaded = await loadManifests(files, {
      stdin: io.stdin,
      cwd: io.cwd,
      validate: parsed.flags.validate as ValidateMode,
      onWarning: (msg) => io.stderr.write(`Warning: ${msg}\n`),
      runtime: settings.runtime,
      nodeName,
    });
  } catch (err) {
    return reportLoadError(err, io.stderr);
  }
  // One owner per root dir: a second run, up or agent would share sandboxes and delete logs.
  let lock: RootDirLock;
  try {
    lock = lockRootDir(settings.rootDir, command);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const agent = createAgent({ settings, lookup: loaded, nodeName, stderr: io.stderr });
    const close = agent.close;
    agent.close = async () => {
      try {
        await close();
      } finally {
        lock.release();
      }
    };
    return { agent, loaded };
  } catch (err) {
    lock.release();
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

export interface SignalHandlers {
  /** The first SIGINT/SIGTERM (io.signal aborted): begin a graceful shutdown. */
  first(signal: string): void;
  /**
   * A later SIGINT/SIGTERM: the entry point exits the process right after this returns, so it must
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
  process.prependListener('SIGINT', onProcessSignal);
  process.prependListener('SIGTERM', onProcessSignal);
  return () => {
    signal.removeEventListener('abort', onAbort);
    process.removeListener('SIGINT', onProcessSignal);
    process.removeListener('SIGTERM', onProcessSignal);
  };
}

