// The life of the cluster node (`podvisor agent --kubeconfig`): the agent as a node of a Kubernetes
// cluster. It registers the Node, runs the pods the API server binds to it (and the static pods of
// --pod-manifest-path, mirrored) through the kubelet (assemble.ts) on the runtime it is given, and
// serves the kubelet port (TLS, client certificates and TokenReview, SubjectAccessReview or
// AlwaysAllow) with logs, exec, attach, port-forward, pods, stats and metrics for the API server to
// proxy to.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { Pod } from '../api/types.js';
import type { ManifestUpdate } from '../config/static-source.js';
import { StaticPodDirSource } from '../config/static-source.js';
import type { FieldError } from '../api/field-errors.js';
import { runtimePodRules } from '../runtime/pod-rules.js';
import type { NodeAllocatable } from '../kubelet/admission.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import { startClusterNode } from '../cluster/index.js';
import { SubjectAccessReviewAuthorizer, TokenReviewAuthenticator } from '../server/auth-webhook.js';
import { listenKubeletPort, type KubeletPort } from '../server/kubelet-port.js';
import { registerKubeletRoutes } from '../server/kubelet-routes.js';
import { SOCKET_NAME, listen, type Listening } from '../server/listen.js';
import { Router, requestURL } from '../http/router.js';
import { sendJSON, sendStatus, statusBody } from '../http/status.js';
import { createKubeletStreamingHandler } from '../streaming/kubelet-paths.js';
import { RealClock, type Clock } from '../util/clock.js';
import { klogLogger } from '../util/klog.js';
import type { Logger } from '../util/logger.js';
import { lockAndConnect, reportFailure, serveUntilAborted, servingCert } from './agent-lifecycle.js';
import { assembleKubelet } from './assemble.js';
import { ClusterPods } from './cluster-pods.js';
import { createAgentMetrics } from './node-metrics.js';
import { containersByState } from './node-view.js';
import { PodStreams } from './pod-streams.js';
import type { AgentRuntime } from './runtime-connection.js';
import { agentStatusDocument } from './status-document.js';
import type { DiskThresholds } from '../kubelet/disk-pressure.js';
import { UsageCollector, type ProcessAwareRuntime } from './usage.js';

/** The kubelet port's default in this mode, as the kubelet's. */
export const DEFAULT_CLUSTER_KUBELET_PORT = 10250;

export interface ClusterNodeConfig {
  kubeconfig: string;
  rootDir: string;
  nodeName: string;
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** --eviction-hard: the root dir's DiskPressure thresholds. */
  evictionHard?: DiskThresholds;
  podManifestPath?: string;
  /** --node-labels, --register-with-taints as given (checked before anything starts). */
  nodeLabels?: string;
  registerWithTaints?: string;
  nodeStatusUpdateFrequencyMs?: number;
  /** --node-ip: the InternalIP; the first non-loopback IPv4 address when unset. */
  nodeIP?: string;
  address: string;
  port: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCAFile?: string;
  authenticationTokenWebhook: boolean;
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  anonymousAuth: boolean;
  loggingFormat: 'text' | 'json';
  version: string;
}

export interface ClusterNodeIO {
  stderr: NodeJS.WritableStream;
  /** Aborted on SIGTERM/SIGINT. */
  signal?: AbortSignal;
  clock?: Clock;
  /** Connects to the runtime service the daemon chose, which outlives the agent. */
  connectRuntime(logger: Logger): Promise<AgentRuntime>;
}

/** Reads --pod-manifest-path once: the static pods it holds now (a manifest that fails is logged and skipped). */
async function loadStaticPods(dir: string, nodeName: string, podRules: (pod: Pod) => FieldError[], log: Logger): Promise<Pod[]> {
  const pods: Pod[] = [];
  const src = new StaticPodDirSource(dir, {
    nodeName,
    podRules,
    onUpdate: (u: ManifestUpdate) => {
      if (u.kind === 'pods') pods.push(...u.pods);
      else if (u.kind === 'error') log.error('Could not load a pod manifest', { path: u.origin, err: u.error });
    },
    onSourceError: (e) => {
      if (e) log.error('Static pod directory unavailable', { err: e });
    },
  });
  await src.scan();
  src.stop();
  return pods;
}

export async function runClusterNode(cfg: ClusterNodeConfig, io: ClusterNodeIO): Promise<number> {
  const log = klogLogger(io.stderr, { format: cfg.loggingFormat });
  const clock = io.clock ?? new RealClock();
  const taken = await lockAndConnect(cfg.rootDir, io.stderr, log, () => io.connectRuntime(log));
  if (!taken) return 1;
  const { lock, connected } = taken;
  const runtime: ProcessAwareRuntime = connected.runtime;
  const startedAt = clock.now();
  const probeRegistry = new Registry();
  let kubelet: PodKubelet | undefined;
  let stopNode: (() => Promise<void>) | undefined;
  let port: KubeletPort | undefined;
  let socket: Listening | undefined;
  let code = 0;
  try {
    const staticPods = cfg.podManifestPath ? await loadStaticPods(cfg.podManifestPath, cfg.nodeName, runtimePodRules(runtime.capabilities), log) : [];
    const joined = startClusterNode({
      kubeconfig: cfg.kubeconfig,
      nodeName: cfg.nodeName,
      version: cfg.version,
      runtime,
      kubeletPort: cfg.port,
      ...(cfg.nodeIP ? { internalIP: cfg.nodeIP } : {}),
      ...(cfg.nodeLabels ? { nodeLabels: cfg.nodeLabels } : {}),
      ...(cfg.registerWithTaints ? { registerWithTaints: cfg.registerWithTaints } : {}),
      ...(cfg.nodeStatusUpdateFrequencyMs ? { nodeStatusUpdateFrequencyMs: cfg.nodeStatusUpdateFrequencyMs } : {}),
      staticPods,
      adoptRunning: true,
      clock,
      logger: log,
      createKubelet: (lookup, nodeName, hostIP) =>
        assembleKubelet({
          settings: cfg,
          runtime,
          clock,
          logger: log,
          nodeName,
          hostIP,
          lookup,
          probeMetrics: probeRegistry,
        }),
    });
    kubelet = joined.kubelet;
    stopNode = () => joined.node.stop();
    const k = joined.kubelet;
    const metrics = createAgentMetrics({
      nodeName: cfg.nodeName,
      pods: () => pods.pods(),
      containersByState: () => containersByState(runtime),
    });
    const listenInfo: Record<string, unknown> = { socket: join(cfg.rootDir, SOCKET_NAME) };
    const pods: ClusterPods = new ClusterPods({
      nodeName: cfg.nodeName,
      kubelet: k,
      runtime,
      streams: new PodStreams(runtime, cfg.rootDir, clock),
      usage: new UsageCollector(runtime, clock),
      probeRegistry,
      agentRegistry: metrics.registry,
      startedAt,
      configz: () => ({
        nodeName: cfg.nodeName,
        rootDirectory: cfg.rootDir,
        staticPodPath: cfg.podManifestPath ?? '',
        port: cfg.port,
        address: cfg.address,
        authorization: { mode: cfg.authorizationMode },
        authentication: {
          anonymous: { enabled: cfg.anonymousAuth },
          webhook: { enabled: cfg.authenticationTokenWebhook },
          x509: { clientCAFile: cfg.clientCAFile ?? '' },
        },
      }),
    });
    const router = new Router();
    registerKubeletRoutes(router, pods);
    const identity = {
      version: cfg.version,
      nodeName: cfg.nodeName,
      rootDir: cfg.rootDir,
      runtime: runtime.name,
      capabilities: runtime.capabilities,
      startedAt,
    };
    router.route('GET', '/podvisor/v1/status', (_req, res) =>
      sendJSON(res, 200, {
        ...agentStatusDocument(identity, pods.pods(), clock.now(), k.nodeConditions()),
        cluster: { kubeconfig: cfg.kubeconfig, server: joined.client.server.href },
        listen: listenInfo,
      }),
    );
    // The streaming paths answer only upgrades.
    router.use((req, res) => {
      const path = requestURL(req).pathname;
      if (!/^\/(exec|attach|portForward)\//.test(path)) return false;
      req.resume();
      sendStatus(res, statusBody(400, 'BadRequest', 'Upgrade request required'));
      return true;
    });
    router.useUpgrade(createKubeletStreamingHandler(pods));

    const served = await servingCert(cfg.rootDir, cfg, cfg.nodeIP ?? cfg.address, cfg.nodeName);
    const post = (path: string, body: unknown) => joined.client.request('POST', path, { body });
    const tokens = cfg.authenticationTokenWebhook ? new TokenReviewAuthenticator(post, clock) : undefined;
    const sar = cfg.authorizationMode === 'Webhook' ? new SubjectAccessReviewAuthorizer(post, clock) : undefined;
    port = await listenKubeletPort({
      router,
      address: cfg.address,
      port: cfg.port,
      cert: served.cert,
      key: served.key,
      ...(cfg.clientCAFile ? { clientCA: await readFile(cfg.clientCAFile) } : {}),
      auth: {
        nodeName: cfg.nodeName,
        anonymous: cfg.anonymousAuth,
        ...(tokens ? { authenticateToken: (t: string) => tokens.authenticate(t) } : {}),
        ...(sar ? { authorize: (u, a) => sar.authorize(u, a) } : {}),
      },
    });
    listenInfo.kubeletPort = port.port;
    socket = await listen({ router, socketPath: join(cfg.rootDir, SOCKET_NAME) });
    log.info('podvisor agent started as a cluster node', {
      pid: process.pid,
      version: cfg.version,
      rootDir: cfg.rootDir,
      nodeName: cfg.nodeName,
      server: joined.client.server.href,
      runtime: runtime.name,
      runtimeOutlivesAgent: true,
      kubeletPort: port.port,
      authorizationMode: cfg.authorizationMode,
      staticPods: staticPods.length,
    });
    void joined.node.whenRegistered().then(() => log.info('Node registered', { node: cfg.nodeName }));

    await serveUntilAborted(io.signal, log);
  } catch (err) {
    code = reportFailure(err, 'Agent failed', io.stderr, log);
  } finally {
    await port?.close().catch(() => {});
    await socket?.close().catch(() => {});
    // The API server keeps the pods as they were: the node went away, the pods did not finish, and
    // the runtime service keeps running them for the next start to adopt.
    await stopNode?.().catch(() => {});
    await (kubelet ? kubelet.close() : runtime.close()).catch(() => {});
    await connected.releaseNetwork?.();
    lock.release();
    log.info('podvisor agent stopped');
  }
  return code;
}
