// The life of the standalone agent (`podvisor agent` without --kubeconfig): take the root dir, connect
// to the runtime service, gather the pods of every source (persisted API pods, the static-pod
// directory, the manifest URL), take over what the runtime still runs for them (and end what no source
// has any more), start the listeners (unix socket always; the in-cluster TLS listener on the
// loopback, the `kubernetes` Service's endpoint; TLS+token TCP and the read-only port when asked),
// write the kubeconfig, serve until SIGTERM/SIGINT, then stop serving and exit: the
// containers keep running with the runtime service, for the next start to take over.

import { join } from 'node:path';
import { sendJSON } from '../http/status.js';
import type { NodeAllocatable } from '../kubelet/admission.js';
import type { Pod, Taint } from '../api/types.js';
import { configSourceAnnotation } from '../api/defaults.js';
import { APIPodStore } from '../config/api-pod-store.js';
import { ManifestURLSource, StaticPodDirSource, type ManifestUpdate } from '../config/static-source.js';
import type { PodSandboxStatus } from '../runtime/cri.js';
import { capabilitiesByRuntimeClass, runtimePodRules } from '../runtime/pod-rules.js';
import { SOCKET_NAME, listen, type Listening } from '../server/listen.js';
import { ensureServiceAccountKey, ensureToken, writeKubeconfig } from '../server/pki.js';
import { readFile } from 'node:fs/promises';
import { RealClock, type Clock } from '../util/clock.js';
import { klogLogger } from '../util/klog.js';
import type { Logger } from '../util/logger.js';
import { lockAndConnect, reportFailure, serveUntilAborted, servingCert } from './agent-lifecycle.js';
import { PodConfig } from './pod-config.js';
import type { AgentRuntime } from './runtime-connection.js';
import { StandaloneAgent } from './standalone-agent.js';
import type { DiskThresholds } from '../kubelet/disk-pressure.js';
import { startReadinessNotifier, type StopNotifier } from './systemd-notify.js';
import { defaultServiceNetwork, parseIpv4Range } from '../kubeapi/service-allocator.js';
import type { ProxyMode } from '../proxy/service-proxy.js';
import { serviceRangeFor, type ServiceNetworkRecord } from './service-range.js';

export interface StandaloneAgentConfig {
  rootDir: string;
  nodeName: string;
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** --horizontal-pod-autoscaler-sync-period (15 s). */
  hpaSyncPeriodMs?: number;
  evictionHard?: DiskThresholds;
  /** The containerd podvisor runs for the root dir, when it does (KubeletSettings.managedContainerd). */
  managedContainerd?: unknown;
  podManifestPath?: string;
  manifestURL?: string;
  address: string;
  /** TCP port with TLS and the token; undefined = no TCP listener (0 = an ephemeral port). */
  port?: number;
  /** 0 = off. */
  readOnlyPort: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  anonymousAuth: boolean;
  loggingFormat: 'text' | 'json';
  version: string;
  /** Runtime settings shown by /configz (runtime, endpoint, ...). */
  runtimeConfig?: Record<string, unknown>;
  /** Re-read periods of the sources (the kubelet's fileCheckFrequency and httpCheckFrequency, 20 s). */
  fileCheckMs?: number;
  httpCheckMs?: number;
  /** --service-cluster-ip-range (default: the root dir's own, see service-range.ts). */
  serviceClusterIPRange?: string;
  /** Where the agents of the host claim their service ranges (default claimsDir()). */
  serviceRangeClaims?: string;
  /** --nodeport-addresses (default 127.0.0.1). */
  nodePortAddresses?: string[];
  /** --proxy-mode (default userspace). */
  proxyMode?: ProxyMode;
  /** --ingress-http-port and --ingress-https-port: the ports tried in order. */
  ingressPorts?: { http: number[]; https: number[] };
  /** --node-labels, parsed. */
  nodeLabels?: Record<string, string>;
  /** --register-with-taints, parsed. */
  registerWithTaints?: Taint[];
}

export interface StandaloneAgentIO {
  stderr: NodeJS.WritableStream;
  /** Connects to the runtime service (starting it when the agent owns it). */
  connectRuntime(logger: Logger): Promise<AgentRuntime>;
  /** Aborted on SIGTERM/SIGINT. */
  signal?: AbortSignal;
  clock?: Clock;
}

/** The DNS names of the kubernetes Service its serving certificate carries. */
const kubernetesServiceNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

/** How long a restarted agent waits for its restored pods' first statuses before serving. */
const restoredStatusWaitMs = 10_000;

export async function runStandaloneAgent(cfg: StandaloneAgentConfig, io: StandaloneAgentIO): Promise<number> {
  const log = klogLogger(io.stderr, { format: cfg.loggingFormat });
  const taken = await lockAndConnect(cfg.rootDir, io.stderr, log, () => io.connectRuntime(log));
  if (!taken) return 1;
  const { lock, connected } = taken;
  // The root dir's own service range (and with it the cluster DNS address), recorded in the root dir.
  let network: ServiceNetworkRecord;
  try {
    network = await serviceRangeFor(cfg.rootDir, cfg.serviceClusterIPRange, cfg.serviceRangeClaims);
  } catch (err) {
    await connected.runtime.close().catch(() => {});
    lock.release();
    return reportFailure(err, 'No service range for the agent', io.stderr, log);
  }
  const clock = io.clock ?? new RealClock();
  const store = new APIPodStore(cfg.rootDir);
  let serviceAccountKey: string;
  try {
    serviceAccountKey = await ensureServiceAccountKey(cfg.rootDir);
  } catch (err) {
    await connected.runtime.close().catch(() => {});
    lock.release();
    return reportFailure(err, 'No service-account signing key', io.stderr, log);
  }
  const agent = new StandaloneAgent({
    rootDir: cfg.rootDir,
    nodeName: cfg.nodeName,
    clock,
    logger: log,
    version: cfg.version,
    nodeAllocatable: cfg.node,
    store,
    runtime: connected.runtime,
    ...(connected.restart ? { restartRuntime: () => connected.restart!() } : {}),
    ...(cfg.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: cfg.crashLoopBackOffMaxSeconds } : {}),
    ...(cfg.hpaSyncPeriodMs !== undefined ? { hpaSyncPeriodMs: cfg.hpaSyncPeriodMs } : {}),
    ...(cfg.evictionHard ? { evictionHard: cfg.evictionHard } : {}),
    ...(cfg.managedContainerd ? { managedContainerd: cfg.managedContainerd } : {}),
    serviceNetwork: { ...defaultServiceNetwork(), clusterIPRange: parseIpv4Range(network.serviceClusterIPRange) },
    ...(cfg.nodePortAddresses ? { nodePortAddresses: cfg.nodePortAddresses } : {}),
    ...(cfg.proxyMode ? { proxyMode: cfg.proxyMode } : {}),
    ...(cfg.ingressPorts ? { ingressPorts: cfg.ingressPorts } : {}),
    ...(cfg.nodeLabels ? { nodeLabels: cfg.nodeLabels } : {}),
    ...(cfg.registerWithTaints ? { registerWithTaints: cfg.registerWithTaints } : {}),
    ...(cfg.port ? { kubeletPort: cfg.port } : {}),
    serviceAccountKey,
    config: {
      staticPodPath: cfg.podManifestPath ?? '',
      staticPodURL: cfg.manifestURL ?? '',
      fileCheckFrequency: `${(cfg.fileCheckMs ?? 20_000) / 1000}s`,
      httpCheckFrequency: `${(cfg.httpCheckMs ?? 20_000) / 1000}s`,
      syncFrequency: '1m0s',
      address: cfg.address,
      port: cfg.port ?? 0,
      readOnlyPort: cfg.readOnlyPort,
      maxPods: cfg.node.pods,
      authentication: { anonymous: { enabled: cfg.anonymousAuth } },
      containerLogMaxSize: '10Mi',
      containerLogMaxFiles: 5,
      ...(cfg.runtimeConfig ?? {}),
    },
  });
  agent.statusProviders.push(() => ({ nodePortAddresses: cfg.nodePortAddresses ?? ['127.0.0.1'], serviceNetwork: network }));
  if (connected.describe) agent.statusProviders.push(() => ({ runtimeService: connected.describe!() }));
  // `podvisor agent stop`: the same graceful shutdown as SIGTERM, asked over the API socket.
  const stopAsked = new AbortController();
  agent.router.route('POST', '/podvisor/v1/stop', (_req, res) => {
    sendJSON(res, 202, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: 'the agent is stopping' });
    stopAsked.abort('agent stop');
  });
  // SIGTERM/SIGINT end it the same way. A listener of its own on the command's signal (AbortSignal.any
  // adds none), which is also how the command line knows the agent stops gracefully.
  io.signal?.addEventListener('abort', () => stopAsked.abort(io.signal?.reason), { once: true });
  try {
    await agent.startServiceNetwork();
  } catch (err) {
    // An address the proxy or the cluster DNS cannot take: a refusal naming the flag, not a warning.
    await agent.stop().catch(() => {});
    lock.release();
    return reportFailure(err, 'The service network cannot start', io.stderr, log);
  }

  const sources: Array<{ stop(): void }> = [];
  let listening: Listening | undefined;
  const podConfig = new PodConfig(agent.registry, agent.kubelet.events, log, cfg.nodeName);
  const listenInfo: Record<string, unknown> = { socket: join(cfg.rootDir, SOCKET_NAME) };
  let stopNotifier: StopNotifier = () => Promise.resolve();
  agent.statusProviders.push(() => ({
    listen: listenInfo,
    sources: [
      { kind: 'api', location: store.dir },
      ...(cfg.podManifestPath
        ? [
            {
              kind: 'file',
              location: cfg.podManifestPath,
              ...(podConfig.sourceErrors.get(cfg.podManifestPath) ? { error: podConfig.sourceErrors.get(cfg.podManifestPath) } : {}),
            },
          ]
        : []),
      ...(cfg.manifestURL
        ? [
            {
              kind: 'http',
              location: cfg.manifestURL,
              ...(podConfig.sourceErrors.get(cfg.manifestURL) ? { error: podConfig.sourceErrors.get(cfg.manifestURL) } : {}),
            },
          ]
        : []),
    ],
    manifests: podConfig.states(),
  }));

  let code = 0;
  try {
    // Every source is read before any pod starts, so that what the runtime still runs is taken over
    // (the kubelet's restart) and only what no source has any more is ended.
    const restored = await store.load((file, err) => log.error('Skipping an unreadable persisted pod', { file, err }));
    let gathering: Array<{ kind: 'file' | 'http'; u: ManifestUpdate }> | undefined = [];
    const sourceOpts = (kind: 'file' | 'http', location: string) => ({
      nodeName: cfg.nodeName,
      podRules: runtimePodRules(capabilitiesByRuntimeClass(agent.runtime, (name) => agent.backend.objects.runtimeClass(name)?.handler)),
      recheckMs: (kind === 'file' ? cfg.fileCheckMs : cfg.httpCheckMs) ?? 20_000,
      onUpdate: (u: ManifestUpdate) => (gathering ? gathering.push({ kind, u }) : podConfig.apply(kind, u)),
      onSourceError: (e: string | undefined) => {
        const had = podConfig.sourceErrors.get(location);
        if (e === undefined) podConfig.sourceErrors.delete(location);
        else {
          podConfig.sourceErrors.set(location, e);
          if (had !== e) log.error('Pod source unavailable; its pods keep running', { source: location, err: e });
        }
      },
    });
    if (cfg.podManifestPath) {
      const s = new StaticPodDirSource(cfg.podManifestPath, sourceOpts('file', cfg.podManifestPath));
      sources.push(s);
      await s.start();
    }
    if (cfg.manifestURL) {
      const s = new ManifestURLSource(cfg.manifestURL, sourceOpts('http', cfg.manifestURL));
      sources.push(s);
      await s.start();
    }
    const initial = gathering;
    const given: Pod[] = [...restored];
    const unreadable = new Set<string>();
    for (const { kind, u } of initial) {
      if (u.kind === 'pods') given.push(...u.pods);
      else if (u.kind === 'error') unreadable.add(kind);
    }
    if (cfg.podManifestPath && podConfig.sourceErrors.has(cfg.podManifestPath)) unreadable.add('file');
    if (cfg.manifestURL && !initial.some((g) => g.kind === 'http' && g.u.kind === 'pods')) unreadable.add('http');
    // A manifest that cannot be read now keeps the pods it had (see PodConfig): their sandboxes stay.
    const keep = (sb: PodSandboxStatus) => unreadable.has(sb.annotations?.[configSourceAnnotation] ?? '');
    const recovered = await agent.kubelet.recover(given, { keep });
    if (recovered.adopted || recovered.terminated) log.info('Took over the pods the runtime still runs', recovered);

    for (const pod of restored) {
      try {
        agent.registry.restore(pod);
      } catch (err) {
        log.error('Failed to restore pod', { pod: pod.metadata?.name, err: (err as Error).message });
      }
    }
    if (restored.length) {
      log.info('Restored pods applied through the API', { count: restored.length });
      // Controllers and clients see the restored pods with a status (as an API server keeps the
      // last one): a pod shown Pending without its IP would leave its Services' Endpoints meanwhile.
      const { waiting } = await agent.registry.firstStatuses(
        restored.map((p) => p.metadata?.uid ?? ''),
        restoredStatusWaitMs,
      );
      if (waiting > 0) log.warn('Restored pods without a status yet; starting all the same', { count: waiting });
    }
    gathering = undefined;
    for (const { kind, u } of initial) podConfig.apply(kind, u);
    agent.startHousekeeping();
    // The Node is registered before controllers and clients come (a DaemonSet counts it, kubectl gets it).
    await agent.schedulingStarted;
    // The agent's own CA and serving certificate, which also names the kubernetes Service (its
    // ClusterIP and DNS names): pods verify the API with that CA (kube-root-ca.crt).
    const inClusterNames = { ips: [agent.serviceAllocator.kubernetesServiceIP()], dns: kubernetesServiceNames };
    const own = await servingCert(cfg.rootDir, {}, cfg.address, cfg.nodeName, inClusterNames);
    agent.startControllers({ rootCA: await readFile(own.caFile!, 'utf8') });

    const token = await ensureToken(cfg.rootDir);
    const authenticate = (t: string) => agent.authenticateToken(t);
    let tcp: Parameters<typeof listen>[0]['tcp'];
    let caFile: string | undefined;
    if (cfg.port !== undefined) {
      const served = cfg.tlsCertFile && cfg.tlsPrivateKeyFile ? await servingCert(cfg.rootDir, cfg, cfg.address, cfg.nodeName) : own;
      caFile = served.caFile;
      tcp = { address: cfg.address, port: cfg.port, cert: served.cert, key: served.key, token, anonymous: cfg.anonymousAuth, authenticate };
    }
    listening = await listen({
      router: agent.router,
      socketPath: join(cfg.rootDir, SOCKET_NAME),
      ...(tcp ? { tcp } : {}),
      // The API for clients in pods, on the loopback: the kubernetes Service's endpoint (kubernetes-service.ts).
      inCluster: { address: '127.0.0.1', port: 0, cert: own.cert, key: own.key, token, authenticate },
      ...(cfg.readOnlyPort > 0 ? { readOnly: { address: cfg.address, port: cfg.readOnlyPort } } : {}),
    });
    listenInfo.inCluster = `https://127.0.0.1:${listening.inClusterPort}`;
    await agent.publishKubernetesService(listening.inClusterPort!);
    if (listening.tcpPort !== undefined) {
      const host = cfg.address === '0.0.0.0' || cfg.address === '::' ? '127.0.0.1' : cfg.address.includes(':') ? `[${cfg.address}]` : cfg.address;
      listenInfo.https = `https://${host}:${listening.tcpPort}`;
      if (caFile) {
        listenInfo.kubeconfig = await writeKubeconfig(cfg.rootDir, listenInfo.https as string, caFile, tcp!.token);
      }
    }
    if (listening.readOnlyPort !== undefined) listenInfo.readOnly = `http://${cfg.address}:${listening.readOnlyPort}`;
    log.info('podvisor agent started', {
      pid: process.pid,
      version: cfg.version,
      rootDir: cfg.rootDir,
      nodeName: cfg.nodeName,
      runtime: agent.runtime.name,
      ...listenInfo,
    });
    // Under a Type=notify unit: READY=1 once the pods gathered at start are Ready.
    stopNotifier = startReadinessNotifier({ socket: process.env.NOTIFY_SOCKET, given: agent.pods(), pods: () => agent.pods(), clock, logger: log });

    await serveUntilAborted(stopAsked.signal, log);
  } catch (err) {
    code = reportFailure(err, 'Agent failed', io.stderr, log);
  } finally {
    await stopNotifier();
    for (const s of sources) s.stop();
    await listening?.close().catch(() => {});
    // A runtime service left with no running sandbox has nothing to keep: it goes with the agent.
    const idle = connected.stopService
      ? await agent.runtime.listPodSandbox().then(
          (all) => !all.some((s) => s.state === 'SANDBOX_READY'),
          () => false,
        )
      : false;
    // Pods not being deleted: a sandbox of another is what is left of a deletion the stop cut short.
    const live = new Set(
      agent
        .pods()
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata?.uid ?? ''),
    );
    await agent.stop().catch((err: Error) => log.error('Stopping the agent failed', { err: err.message }));
    const idleStopped = (idle && connected.stopService!()) || (await connected.stopWhenIdle?.(live).catch(() => false)) === true;
    await connected.releaseNetwork?.();
    lock.release();
    if (idleStopped) log.info('podvisor agent stopped, and with no pod left its runtime service', { runtime: agent.runtime.name });
    else log.info('podvisor agent stopped; its containers keep running with the runtime', { runtime: agent.runtime.name });
  }
  return code;
}
