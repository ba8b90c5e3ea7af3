// The agent's connection to its container runtime, a CRI runtime service (as the kubelet's remote
// runtime): connect to --container-runtime-endpoint, or — for the process runtime on the root dir's own
// endpoint, and for containerd without an endpoint — start `podvisor runtime serve` or the root dir's
// containerd when nothing answers, and start it again when it dies.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CriRuntimeClient } from '../runtime/cri/client.js';
import type { RuntimeService } from '../runtime/cri.js';
import { PROCESS_HANDLER } from '../runtime/pod-rules.js';
import { RuntimeMultiplexer } from '../runtime/runtime-mux.js';
import { connectOrLaunch } from '../runtime/cri/launch.js';
import { lockHolder, processState, runtimeStateDir } from '../runtime/process-runtime.js';
import type { Logger } from '../util/logger.js';
import type { AgentSettings } from './settings.js';
import type { ProcessAwareRuntime } from './usage.js';

export interface RuntimeConnectionOptions {
  logger: Logger;
  /** The script that starts podvisor, run by this Node to start the process runtime's service. */
  podvisorScript: string;
}

/** The runtime an agent drives, as its command connected it. */
export interface AgentRuntime {
  runtime: ProcessAwareRuntime;
  /** Starts the runtime service again when it stopped answering; absent for a runtime the agent does not start. */
  restart?(): Promise<void>;
  /** Fields of `agent status` about the runtime (endpoint, the service's pid). */
  describe?(): Record<string, unknown>;
  /**
   * When the agent stops with no pod running: stops the runtime service it started for the root dir
   * (the process runtime's, or its containerd); false when none runs.
   */
  stopService?(): boolean;
  /**
   * When the agent stops: stops the containerd it started for the root dir unless a pod of
   * livePodUids runs there (the sandboxes left are removed first); whether it did.
   */
  stopWhenIdle?(livePodUids: ReadonlySet<string>): Promise<boolean>;
  /** When the agent stops: removes its pod bridge if no pod is left on it (--cni-conf-dir, --pod-network=cni). */
  releaseNetwork?(): Promise<void>;
}

/** `podvisor runtime serve` for the root dir on endpoint, run by the same Node and script as this process. */
function runtimeServiceCommand(settings: AgentSettings, podvisorScript: string, endpoint = settings.runtimeEndpoint): string[] {
  const pids = settings.podPidsLimit !== undefined ? ['--pod-max-pids', String(settings.podPidsLimit)] : [];
  const network = settings.podNetwork === 'cni' ? ['--pod-network', 'cni', ...(settings.podCIDR ? ['--pod-cidr', settings.podCIDR] : [])] : [];
  return [process.execPath, podvisorScript, 'runtime', 'serve', '--root-dir', settings.rootDir, '--listen', endpoint, ...pids, ...network];
}

/**
 * Connects to the runtime service (starting the process runtime's when nothing answers); with both
 * runtimes (--runtime=process,containerd), to containerd and to the root dir's process runtime
 * service, behind one multiplexer that routes each pod by its RuntimeClass handler.
 */
export async function connectRuntime(settings: AgentSettings, opts: RuntimeConnectionOptions): Promise<RuntimeService> {
  if (!settings.processRuntimeEndpoint) return connectOneRuntime(settings, opts);
  const containerd = await connectOneRuntime(settings, opts);
  let processRuntime: CriRuntimeClient;
  try {
    await mkdir(settings.rootDir, { recursive: true, mode: 0o700 });
    processRuntime = (await connectOrLaunch(processServiceLaunch(settings, opts, settings.processRuntimeEndpoint))).client;
  } catch (err) {
    await containerd.close();
    throw err;
  }
  return new RuntimeMultiplexer({ runtime: containerd, handlers: ['runc'], passHandler: (h) => h }, [
    { runtime: processRuntime, handlers: [PROCESS_HANDLER], passHandler: () => '' },
  ]);
}

/** How the root dir's process runtime service on endpoint is reached, and started when nothing answers. */
function processServiceLaunch(settings: AgentSettings, opts: RuntimeConnectionOptions, endpoint: string) {
  return {
    endpoint,
    logger: opts.logger,
    warmCodecs: true,
    command: runtimeServiceCommand(settings, opts.podvisorScript, endpoint),
    logFile: join(settings.rootDir, 'runtime.log'),
  };
}

async function connectOneRuntime(settings: AgentSettings, opts: RuntimeConnectionOptions): Promise<CriRuntimeClient> {
  if (settings.managedContainerd) {
    const { preparePodNetwork } = await import('./pod-network.js');
    await preparePodNetwork(settings, opts.logger);
    const { connectManagedContainerd } = await import('../runtime/containerd/managed.js');
    return (await connectManagedContainerd(settings.managedContainerd, { logger: opts.logger, warmCodecs: true })).client;
  }
  const own = settings.runtime === 'process';
  if (own) await mkdir(settings.rootDir, { recursive: true, mode: 0o700 });
  if (settings.runtime !== 'process') {
    const { preparePodNetwork } = await import('./pod-network.js');
    await preparePodNetwork(settings, opts.logger);
  }
  if (settings.podNetwork === 'cni') {
    const { prepareProcessPodNetwork } = await import('./pod-network.js');
    await prepareProcessPodNetwork(settings, opts.logger);
  }
  const { client } = await connectOrLaunch({
    endpoint: settings.runtimeEndpoint,
    logger: opts.logger,
    warmCodecs: true,
    ...(own ? { command: runtimeServiceCommand(settings, opts.podvisorScript), logFile: join(settings.rootDir, 'runtime.log') } : {}),
  });
  checkPodNetworkOf(client, settings, opts.logger);
  return client;
}

/**
 * The runtime service decides its pods' network when it starts: one already serving the root dir
 * with another setting keeps it. Asked for pod networks from a service on the host's network is an
 * error (its pods could not have the IPs asked for); the other way round, a warning.
 */
function checkPodNetworkOf(client: CriRuntimeClient, settings: AgentSettings, logger: Logger): void {
  if (settings.runtime !== 'process') return;
  const network = client.capabilities.network;
  if (settings.podNetwork === 'cni' && network !== 'pod') {
    void client.close();
    throw new Error(
      `--pod-network=cni: the runtime service on ${settings.runtimeEndpoint} already runs with pods on the host's network; stop its pods (podvisor down --all) and start again`,
    );
  }
  if (settings.podNetwork !== 'cni' && network === 'pod') {
    logger.warn(`The runtime service on ${settings.runtimeEndpoint} runs with --pod-network=cni: pods get a network namespace each until it stops`);
  }
}

/**
 * The runtime of a long-lived agent (`podvisor agent`): the CRI client and — for the process runtime
 * on the root dir's own endpoint — how to start its service again when it stops answering (killed),
 * and its pid.
 */
export async function connectAgentRuntime(settings: AgentSettings, opts: RuntimeConnectionOptions): Promise<AgentRuntime & { runtime: RuntimeService }> {
  const runtime = await connectRuntime(settings, opts);
  if (settings.managedContainerd) return managedContainerdRuntime(runtime, settings, opts);
  const own = settings.runtime === 'process';
  const stateDir = runtimeStateDir(settings.rootDir);
  const same = (pid: number, start: string) => processState(pid, start) === 'running';
  const describe = () => ({
    name: runtime.name,
    endpoint: settings.runtimeEndpoint,
    ...(own ? { pid: lockHolder(stateDir, same) ?? null } : {}),
  });
  if (!own) {
    if (!settings.cniConfDir) return { runtime, describe };
    const { releasePodNetwork } = await import('./pod-network.js');
    return { runtime, describe, releaseNetwork: () => releasePodNetwork(settings, opts.logger) };
  }
  const { logger } = opts;
  const releaseNetwork = settings.podNetwork === 'cni' ? async () => (await import('./pod-network.js')).releasePodNetwork(settings, logger) : undefined;
  const restart = async () => {
    // A client of its own to start the service and see it answer; the agent's reconnects by itself.
    const { client, startedPid } = await connectOrLaunch({
      endpoint: settings.runtimeEndpoint,
      logger,
      command: runtimeServiceCommand(settings, opts.podvisorScript),
      logFile: join(settings.rootDir, 'runtime.log'),
    });
    await client.close();
    if (startedPid) logger.info('Started the runtime service again', { pid: startedPid, endpoint: settings.runtimeEndpoint });
  };
  const stopService = () => {
    const pid = lockHolder(stateDir, same);
    if (pid === undefined || pid === null) return false;
    process.kill(pid, 'SIGTERM');
    return true;
  };
  return { runtime, restart, describe, stopService, ...(releaseNetwork ? { releaseNetwork } : {}) };
}

/** The root dir's process runtime service beside containerd, stopped when it runs no sandbox. */
async function stopIdleProcessService(runtime: RuntimeMultiplexer, settings: AgentSettings): Promise<void> {
  const processRuntime = runtime.runtimes().find((r) => r.name === 'process');
  const running = await processRuntime?.listPodSandbox({ state: 'SANDBOX_READY' }).catch(() => [{}]);
  if (!running || running.length > 0) return;
  const pid = lockHolder(runtimeStateDir(settings.rootDir), (p, start) => processState(p, start) === 'running');
  if (pid) process.kill(pid, 'SIGTERM');
}

/** The root dir's containerd: started again when it stops answering, stopped with the agent when idle. */
async function managedContainerdRuntime(
  runtime: RuntimeService,
  settings: AgentSettings,
  opts: RuntimeConnectionOptions,
): Promise<AgentRuntime & { runtime: RuntimeService }> {
  const managed = settings.managedContainerd!;
  const { logger } = opts;
  const m = await import('../runtime/containerd/managed.js');
  const { managedContainerdLayout } = await import('../runtime/containerd/config.js');
  const layout = managedContainerdLayout(settings.rootDir);
  const { releasePodNetwork } = await import('./pod-network.js');
  return {
    runtime,
    describe: () => ({ name: runtime.name, endpoint: settings.runtimeEndpoint, pid: m.managedContainerdPid(layout) ?? null, config: layout.config }),
    restart: async () => {
      const { client, startedPid } = await m.connectManagedContainerd(managed, { logger });
      await client.close();
      if (startedPid) logger.info('Started containerd again', { pid: startedPid, endpoint: settings.runtimeEndpoint });
    },
    stopWhenIdle: async (live) => {
      // Beside it, the process runtime service of --runtime=process,containerd goes when none of its pods runs.
      if (runtime instanceof RuntimeMultiplexer) await stopIdleProcessService(runtime, settings);
      return m.stopIdleManagedContainerd(settings.rootDir, logger, live);
    },
    releaseNetwork: () => releasePodNetwork(settings, logger),
  };
}
