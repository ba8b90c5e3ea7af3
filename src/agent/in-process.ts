// The in-process agent of `run` and `up`: the root dir taken, the runtime service connected, the
// kubelet assembled on it, the pods the runtime still runs taken over, the pods given admitted and
// started in order; plus the container logs and output those commands show, and how the agent ends
// (gracefully, or by SIGKILL as a last resort).

import { resolve } from 'node:path';
import type { ContainerStatus, Pod } from '../api/types.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { RuntimeService } from '../runtime/cri.js';
import { followContainerOutput, type ContainerOutputFollow, type OutputListener } from '../runtime/logs/follow.js';
import { readContainerLog } from '../runtime/logs/reader.js';
import { stopPodSandboxesSync } from '../runtime/cri/stop-sync.js';
import { defaultRuntimeEndpoint, lockHolder, processState, runtimeStateDir } from '../runtime/process-runtime.js';
import { containerLogPath, podLogDir } from '../runtime/root-dir.js';
import { lockRootDir } from '../runtime/root-lock.js';
import { RealClock, type Clock } from '../util/clock.js';
import { streamLogger, type Logger } from '../util/logger.js';
import { assembleKubelet } from './assemble.js';
import { connectRuntime } from './runtime-connection.js';
import type { AgentSettings } from './settings.js';

/** The runtime and the kubelet on top of it, as one agent. */
export interface InProcessAgent {
  /** The CRI client of the runtime service. */
  runtime: RuntimeService;
  kubelet: PodKubelet;
  clock: Clock;
  rootDir: string;
  /** Last lines of a container instance's log (by its `process://` id, else by the log layout). */
  readLogTail(pod: Pod, status: ContainerStatus, containerId: string | undefined, lines: number): Promise<string[]>;
  /** Container output as it reaches the logs, one call per CRI record; drain() hands on what is written so far, stop() unsubscribes. */
  onContainerOutput(listener: OutputListener): ContainerOutputFollow;
  /** The last resort of an exit without a graceful stop: SIGKILLs this agent's containers synchronously. */
  killAllSync(): void;
  /**
   * Stops the agent: the runtime service removes the sandboxes of pods that finished, and stops
   * itself once it holds none (it is started again on demand). Running pods stay with it.
   */
  close(): Promise<void>;
}

export interface InProcessAgentDeps {
  settings: AgentSettings;
  /** ConfigMaps and Secrets from the input, for env references. */
  lookup: ObjectLookup;
  /** The node name the loader defaulted spec.nodeName to. */
  nodeName: string;
  /** The script that starts podvisor (for the process runtime's service). */
  podvisorScript: string;
  logger?: Logger;
  clock?: Clock;
  stderr: NodeJS.WritableStream;
}

export async function createInProcessAgent(deps: InProcessAgentDeps): Promise<InProcessAgent> {
  const clock = deps.clock ?? new RealClock();
  const logger = deps.logger ?? streamLogger(deps.stderr, 'warn');
  const { settings } = deps;
  const runtime = await connectRuntime(settings, { logger, podvisorScript: deps.podvisorScript });
  // `run` and `up` serve no metrics.
  const kubelet = assembleKubelet({ settings, runtime, clock, logger, nodeName: deps.nodeName, lookup: deps.lookup, probeMetrics: 'none' });
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
  // An agent that dies leaves its containers to the runtime service, for the next start to adopt; this
  // last resort stops its sandboxes instead (CRI StopPodSandbox: their containers killed at once).
  // With both runtimes each endpoint is asked for every sandbox: the one that holds it stops it.
  const endpoints = [settings.runtimeEndpoint, ...(settings.processRuntimeEndpoint ? [settings.processRuntimeEndpoint] : [])];
  const killAllSync = () => endpoints.forEach((e) => stopPodSandboxesSync(e, kubelet.sandboxIds()));
  const close = async () => {
    let empty = false;
    try {
      await kubelet.removeFinishedSandboxes();
      empty = (await runtime.listPodSandbox()).length === 0;
    } catch (err) {
      logger.warn('Failed to clean up pod sandboxes', { err: String(err) });
    }
    await kubelet.close();
    // The root dir's containerd with no pod running stops, its sandboxes removed; the next agent starts it again.
    if (settings.managedContainerd) await (await import('../runtime/containerd/managed.js')).stopIdleManagedContainerd(settings.rootDir, logger);
    if (settings.cniConfDir || settings.podNetwork) await (await import('./pod-network.js')).releasePodNetwork(settings, logger);
    // A process runtime service with nothing left to supervise stops; the next agent starts it again.
    const ownService =
      settings.runtime === 'process' ? settings.runtimeEndpoint === defaultRuntimeEndpoint(settings.rootDir) : !!settings.processRuntimeEndpoint;
    if (empty && ownService) {
      const pid = lockHolder(stateDir, same);
      if (pid) process.kill(pid, 'SIGTERM');
    }
  };
  const onContainerOutput = (listener: OutputListener) => followContainerOutput(runtime, listener);
  return { runtime, kubelet, clock, rootDir: settings.rootDir, readLogTail, onContainerOutput, killAllSync, close };
}

/**
 * Starts the in-process agent for the pods given: takes the root dir (one owner per root dir: a
 * second run, up or agent would share sandboxes and delete logs), builds the agent, and takes over
 * the pods the runtime still runs from an earlier agent (the others it holds end). The lock is
 * released when the agent closes, or at once when starting fails (the error is thrown).
 */
export async function startInProcessAgent(deps: InProcessAgentDeps & { pods: Pod[]; command: string }): Promise<InProcessAgent> {
  const lock = lockRootDir(deps.settings.rootDir, deps.command);
  let agent: InProcessAgent | undefined;
  try {
    agent = await createInProcessAgent(deps);
    const close = agent.close;
    agent.close = async () => {
      try {
        await close();
      } finally {
        lock.release();
      }
    };
    await agent.kubelet.recover(deps.pods);
    return agent;
  } catch (err) {
    if (agent) await agent.close().catch(() => undefined);
    else lock.release();
    throw err;
  }
}

/** A pod the node refused, with the reason admission gave. */
export interface RejectedPod {
  pod: Pod;
  reason: string;
  message: string;
}

/**
 * Admits the pods in order, as the kubelet's HandlePodAdditions: each admitted pod starts, each other
 * is rejected (Failed, with the reason) and told to onRejected at once.
 */
export function startAdmitted(kubelet: PodKubelet, pods: readonly Pod[], onRejected: (rejected: RejectedPod) => void): void {
  for (const pod of pods) {
    const admit = kubelet.admit(pod);
    if (admit.admit) {
      kubelet.startPod(pod);
      continue;
    }
    const reason = admit.reason ?? 'UnknownReason';
    const message = admit.message ?? '';
    kubelet.rejectPod(pod, reason, message);
    onRejected({ pod, reason, message });
  }
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
