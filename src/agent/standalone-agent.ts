// The standalone agent (`podvisor agent` without --kubeconfig), its parts: on the runtime it is given
// (the CRI client of a runtime service), the kubelet (assemble.ts), the pod registry and its
// Kubernetes API backend, the router (kubelet routes, the Kubernetes API and its streaming upgrades,
// the agent's status) and the housekeeping loop behind /healthz/syncloop.

import { createSystemPriorityClasses } from './system-priority-classes.js';
import type { Pod } from '../api/types.js';
import type { NodeAllocatable } from '../kubelet/admission.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import type { DiskThresholds } from '../kubelet/disk-pressure.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import { Registry } from 'prom-client';
import { mountKubeApi } from '../kubeapi/mount.js';
import { ensureBootstrapPolicy } from '../kubeapi/rbac/bootstrap.js';
import { authorizationFilter } from '../kubeapi/rbac/filter.js';
import { kubeletPathAttributes } from './kubelet-path-attributes.js';
import { registerKubeletRoutes, type ContainerLogQuery, type KubeletView } from '../server/kubelet-routes.js';
import { Router } from '../http/router.js';
import { rawStatusResponse, sendJSON, statusBody, statusOf } from '../http/status.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { OrphanedPodDirs } from '../kuberuntime/orphaned-pod-dirs.js';
import { startWorkloadControllers, type ControllerOptions, type WorkloadControllers } from '../controllers/workload-controllers.js';
import { defaultServiceAccountName } from '../api/service-account.js';
import { agentTokens } from './service-account-tokens.js';
import { KubernetesService } from './kubernetes-service.js';
import { assembleKubelet } from './assemble.js';
import { AgentBackend } from './backend.js';
import { ObjectStore, objectStoreDir } from './object-store.js';
import { objectStrategies, serviceStrategy } from '../kubeapi/strategies.js';
import { ingressStrategy } from '../kubeapi/ingress-strategy.js';
import { defaultServiceNetwork, parseIpv4, ServiceAllocator, type Ipv4Range, type ServiceNetwork } from '../kubeapi/service-allocator.js';
import { EndpointsController } from '../controllers/endpoints/controller.js';
import { ServiceProxy, type ProxyMode } from '../proxy/service-proxy.js';
import { NetworkPolicyEnforcer, unisolatedWarning } from '../proxy/network-policy-enforcer.js';
import { networkPolicyChain } from '../proxy/network-policy-rules.js';
import type { NetworkPolicy } from '../api/validation/network-policy.js';
import { ClusterDNS, resolvConfNameservers } from '../dns/server.js';
import { routeServiceRange, type ServiceRoute } from '../proxy/service-route.js';
import { ServiceURLWatch } from '../proxy/service-urls.js';
import type { ClusterDNSSettings } from '../kuberuntime/cluster-dns.js';
import { readFileSync } from 'node:fs';
import type { UpgradeHandler, UserInfo } from '../http/router.js';
import { createAgentMetrics, statsSummary, type AgentMetrics } from './node-metrics.js';
import { containersByState, kubeletMetrics, podProbeHistory, runningPods } from './node-view.js';
import { agentStatusDocument } from './status-document.js';
import { PodRegistry, type PodStore } from './pod-registry.js';
import { PodStreams } from './pod-streams.js';
import { UsageCollector, type ProcessAwareRuntime } from './usage.js';
import type { Node, Taint } from '../api/types.js';
import { AgentNode } from './agent-node.js';
import { AgentNodeLease } from './agent-node-lease.js';
import { BUILTIN_RUNTIME_CLASSES, capabilitiesByRuntimeClass } from '../runtime/pod-rules.js';
import { Scheduler } from '../scheduler/schedule-one.js';
import { TaintEvictionController } from '../scheduler/taint-eviction.js';
import { holdsNode } from '../scheduler/framework.js';
import { defaultFilters } from '../scheduler/plugins/registry.js';
import type { KubeObject, Watch } from '../kubeapi/backend.js';
import { IngressProxy } from '../proxy/ingress-proxy.js';
import type { ServiceLike } from '../api/validation/service.js';
import { portsHeldAt } from '../util/host-sockets.js';
import { bindPodVolumes, storeVolumeListers } from './pod-volume-binder.js';

/**
 * While the runtime pushes container events, how often housekeeping still asks it for its version:
 * the kubelet's runtime status check, for a runtime that hangs with its event stream open.
 */
export const RUNTIME_CHECK_MS = 30_000;

export interface StandaloneAgentOptions {
  rootDir: string;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  version: string;
  nodeAllocatable: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** How often the HPA controller reconciles each HPA (15 s). */
  hpaSyncPeriodMs?: number;
  /** --eviction-hard: the root dir's DiskPressure thresholds. */
  evictionHard?: DiskThresholds;
  /** The containerd podvisor runs for the root dir, when it does (KubeletSettings.managedContainerd). */
  managedContainerd?: unknown;
  /** API pods kept across restarts. */
  store?: PodStore;
  /** ConfigMaps and Secrets env references resolve against (none by default). */
  lookup?: ObjectLookup;
  /** Shown by /configz and `agent status`. */
  config?: Record<string, unknown>;
  /** The runtime: the CRI client of a runtime service (or, in tests, a runtime in process). */
  runtime: ProcessAwareRuntime;
  /** The kubelet's syncFrequency (1 min when unset): /healthz/syncloop fails after twice this without housekeeping. */
  syncFrequencyMs?: number;
  /** Housekeeping period (the kubelet's 2 s when unset). */
  housekeepingMs?: number;
  /** Called by housekeeping when the runtime does not answer: starts its service again, if the agent can. */
  restartRuntime?: () => Promise<void>;
  /** Where Services' ClusterIPs and NodePorts come from (default: 127.99.0.0/16, 30000-32767). */
  serviceNetwork?: ServiceNetwork;
  /** Where NodePort Services listen (default 127.0.0.1). */
  nodePortAddresses?: string[];
  /** The service proxy's mode (default userspace). */
  proxyMode?: ProxyMode;
  /**
   * The ingress proxy's HTTP and HTTPS ports, each a list tried in order (0: a free port); default a free
   * port each (the command line gives 80 then a free port, 443 then a free port, as root).
   */
  ingressPorts?: { http: readonly number[]; https: readonly number[] };
  /** --node-labels: labels the Node is registered with, beside the kubelet's own. */
  nodeLabels?: Record<string, string>;
  /** --register-with-taints: the Node's taints when it is first registered. */
  registerWithTaints?: Taint[];
  /** The kubelet port the Node advertises (daemonEndpoints), 0 when none. */
  kubeletPort?: number;
  /** The PEM private key service-account tokens are signed with; without it the agent issues none. */
  serviceAccountKey?: string;
}

/** An address another process holds (EADDRINUSE) or the host does not have (EADDRNOTAVAIL). */
function addressTaken(code: string): boolean {
  return code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL';
}

function inRange(ip: string, range: Ipv4Range): boolean {
  const n = parseIpv4(ip);
  return n !== undefined && n >= range.base && n < range.base + range.size;
}

export class StandaloneAgent implements KubeletView {
  readonly nodeName: string;
  readonly runtime: ProcessAwareRuntime;
  readonly kubelet: PodKubelet;
  readonly registry: PodRegistry;
  readonly backend: AgentBackend;
  readonly router = new Router();
  readonly usage: UsageCollector;
  readonly startedAt: number;
  readonly serviceAllocator: ServiceAllocator;
  /** Keeps Services' Endpoints and EndpointSlices from the pods' readiness. */
  readonly endpointsController: EndpointsController;
  /** Forwards Services' ports to Ready endpoints once started (startServiceProxy). */
  readonly serviceProxy: ServiceProxy;
  /** Keeps the NetworkPolicies' filters in the kernel for the pods on the pod network. */
  readonly networkPolicies: NetworkPolicyEnforcer;
  /** Serves the Ingresses of the class `podvisor` once started (startServiceNetwork). */
  readonly ingressProxy: IngressProxy;
  /** Answers <svc>.<ns>.svc.cluster.local once started (startServiceNetwork). */
  readonly clusterDNS: ClusterDNS;
  private readonly metricsSet: AgentMetrics;
  private readonly probeRegistry = new Registry();
  private readonly opts: StandaloneAgentOptions;
  /** Extra fields of `agent status` (sources, listeners), filled in by whoever wires them. */
  readonly statusProviders: Array<() => Record<string, unknown>> = [];
  /** When housekeeping last completed with the runtime answering (the kubelet's syncLoopMonitor). */
  private lastHousekeeping: number;
  private housekeepingTimer?: NodeJS.Timeout;
  private runtimeDown = false;
  /** Housekeeping's sweep of the directories of pods that are gone. */
  private orphanedPodDirs?: OrphanedPodDirs;
  /** When the runtime last answered housekeeping's version call. */
  private lastRuntimeAnswer = -Infinity;
  /** Logs each Service's URLs once it has Ready endpoints (startServiceNetwork). */
  private readonly serviceURLs: ServiceURLWatch;
  /** How ClusterIPs are reached (startServiceNetwork). */
  private serviceRoute?: ServiceRoute;
  /** The cluster DNS pods in their own network namespace are given, once it answers them. */
  private podClusterDNS?: ClusterDNSSettings;
  /** The workload controllers, once started (startControllers). */
  controllers?: WorkloadControllers;
  /** Keeps the `kubernetes` Service once published (publishKubernetesService). */
  private kubernetesService?: KubernetesService;
  /** The agent's own v1 Node, in the object store. */
  readonly node: AgentNode;
  /** The node's heartbeat Lease in kube-node-lease, renewed every 10 s once the Node is registered. */
  readonly nodeLease: AgentNodeLease;
  /** Binds the API's pending pods to the node, by the scheduler's filters. */
  readonly scheduler: Scheduler;
  /** Deletes the pods that do not tolerate the node's NoExecute taints (after their tolerationSeconds). */
  readonly taintEviction: TaintEvictionController;
  /** Resolves once the Node is registered and the scheduler watches the pods. */
  readonly schedulingStarted: Promise<void>;
  private readonly schedulingWatches: Watch[] = [];
  /** The pods as the scheduler's watch last saw them, by UID (the scheduler's cache). */
  private readonly schedulerCache = new Map<string, Pod>();

  constructor(opts: StandaloneAgentOptions) {
    this.opts = opts;
    this.nodeName = opts.nodeName;
    this.startedAt = opts.clock.now();
    this.lastHousekeeping = this.startedAt;
    this.runtime = opts.runtime;
    // ConfigMaps, Secrets and Services applied through the API; pods' env and volumes resolve against them.
    // NodePorts are chosen among those no other process of the host holds where they listen.
    this.serviceAllocator = new ServiceAllocator(opts.serviceNetwork ?? defaultServiceNetwork(), {
      hostPorts: portsHeldAt(opts.nodePortAddresses ?? ['127.0.0.1']),
    });
    const objects: ObjectStore = new ObjectStore({
      dir: objectStoreDir(opts.rootDir),
      now: () => opts.clock.now(),
      kinds: [...objectStrategies, serviceStrategy(this.serviceAllocator), ingressStrategy((): readonly KubeObject[] => objects.list('IngressClass').items)],
    });
    // Bound service-account tokens: issued by TokenRequest and for pods' projected volumes, checked on the TCP listeners.
    const identity = opts.serviceAccountKey
      ? agentTokens({ key: opts.serviceAccountKey, clock: opts.clock, objects, base: opts.lookup ?? objects, pod: (ns, n) => this.registry.get(ns, n) })
      : undefined;
    this.kubelet = assembleKubelet({
      settings: {
        rootDir: opts.rootDir,
        node: opts.nodeAllocatable,
        ...(opts.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: opts.crashLoopBackOffMaxSeconds } : {}),
        ...(opts.evictionHard ? { evictionHard: opts.evictionHard } : {}),
        ...(opts.managedContainerd ? { managedContainerd: opts.managedContainerd } : {}),
      },
      runtime: this.runtime,
      clock: opts.clock,
      logger: opts.logger,
      nodeName: opts.nodeName,
      lookup: identity?.lookup ?? opts.lookup ?? objects,
      probeMetrics: this.probeRegistry,
      clusterDNS: () => this.podClusterDNS,
    });
    this.metricsSet = createAgentMetrics({
      nodeName: opts.nodeName,
      pods: () => this.registry.list().items,
      containersByState: () => containersByState(this.runtime),
    });
    this.registry = new PodRegistry({
      kubelet: this.kubelet,
      clock: opts.clock,
      logger: opts.logger,
      ...(opts.store ? { store: opts.store } : {}),
      onPodStarted: (s) => this.metricsSet.podStartDuration.observe(s),
    });
    this.usage = new UsageCollector(this.runtime, opts.clock);
    this.backend = new AgentBackend({
      nodeName: opts.nodeName,
      runtimeCapabilities: capabilitiesByRuntimeClass(this.runtime, (name) => objects.runtimeClass(name)?.handler),
      registry: this.registry,
      streams: new PodStreams(this.runtime, opts.rootDir, opts.clock),
      usage: this.usage,
      objects,
      ...(identity ? { serviceAccountTokens: identity.tokens } : {}),
      sleep: (ms) => opts.clock.sleep(ms),
      objectWarnings: (o) => {
        if (o.kind === 'Service') return this.serviceAllocator.nodePortWarnings(o as ServiceLike);
        if (o.kind === 'NetworkPolicy') {
          const w = unisolatedWarning(o as NetworkPolicy, this.registry.list().items, this.runtime.capabilities.network === 'pod');
          return w ? [w] : [];
        }
        return [];
      },
    });
    this.networkPolicies = new NetworkPolicyEnforcer({
      objects,
      pods: this.backend,
      podNetwork: this.runtime.capabilities.network === 'pod',
      chain: networkPolicyChain(opts.rootDir),
      logger: opts.logger,
      recorder: this.kubelet.events.recorderFor('network-policy'),
    });
    this.endpointsController = new EndpointsController({ pods: this.backend, objects, logger: opts.logger });
    this.serviceProxy = new ServiceProxy({
      objects,
      clock: opts.clock,
      logger: opts.logger,
      ...(opts.nodePortAddresses ? { nodePortAddresses: opts.nodePortAddresses } : {}),
      ...(opts.proxyMode ? { mode: opts.proxyMode } : {}),
      ...(this.kubelet.podAddress ? { podAddress: this.kubelet.podAddress } : {}),
      recorder: this.kubelet.events.recorderFor('kube-proxy'),
    });
    this.ingressProxy = new IngressProxy({
      objects,
      clock: opts.clock,
      logger: opts.logger,
      ...(opts.ingressPorts ? { httpPorts: opts.ingressPorts.http, httpsPorts: opts.ingressPorts.https } : {}),
      recorder: this.kubelet.events.recorderFor('podvisor-ingress-controller'),
    });
    this.statusProviders.push(() => {
      const w = this.ingressProxy.listening();
      return w ? { ingress: w } : {};
    });
    this.serviceURLs = new ServiceURLWatch(objects, opts.nodePortAddresses ?? ['127.0.0.1'], (namespace, name, urls) =>
      opts.logger.info('Service reachable', { service: `${namespace}/${name}`, urls: urls.join(' ') }),
    );
    let hostResolvConf = '';
    try {
      hostResolvConf = readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      // no host resolvers: names outside the cluster domain are answered SERVFAIL
    }
    this.clusterDNS = new ClusterDNS({ objects, logger: opts.logger, clock: opts.clock, upstreams: resolvConfNameservers(hostResolvConf) });
    this.node = new AgentNode({
      spec: {
        nodeName: opts.nodeName,
        internalIP: '127.0.0.1',
        kubeletPort: opts.kubeletPort ?? 0,
        capacity: { cpuMilli: opts.nodeAllocatable.cpuMilli, memoryBytes: opts.nodeAllocatable.memoryBytes, pods: opts.nodeAllocatable.pods ?? 110 },
        ...(opts.nodeLabels ? { labels: opts.nodeLabels } : {}),
        ...(opts.registerWithTaints ? { taints: opts.registerWithTaints } : {}),
        kubeletVersion: `podvisor/${opts.version}`,
        containerRuntimeVersion: `${this.runtime.name}://${opts.version}`,
      },
      storage: objects.storage('Node')!,
      clock: opts.clock,
      logger: opts.logger,
      readiness: () => ({ ready: !this.runtimeDown, pressure: this.kubelet.nodeConditions() }),
    });
    this.nodeLease = new AgentNodeLease({
      nodeName: opts.nodeName,
      storage: objects.storage('Lease')!,
      nodeUid: () => this.node.current()?.metadata?.uid,
      clock: opts.clock,
      logger: opts.logger,
    });
    this.scheduler = new Scheduler({
      clock: opts.clock,
      logger: opts.logger,
      recorder: this.kubelet.events.recorderFor('default-scheduler'),
      filters: defaultFilters({
        network: this.runtime.capabilities.network === 'host' ? 'host' : 'pod',
        namespaceLabels: (ns) => objects.get('Namespace', '', ns)?.metadata?.labels ?? { 'kubernetes.io/metadata.name': ns },
        volumes: storeVolumeListers(objects),
      }),
      host: {
        node: () => this.node.current(),
        assignedPods: () => [...this.schedulerCache.values()].filter((p) => !!p.spec?.nodeName && holdsNode(p)),
        bind: async (pod, nodeName) => {
          await this.registry.bind(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '', pod.metadata?.uid ?? '', nodeName);
        },
        bindVolumes: (pod, node) => bindPodVolumes(objects, opts.clock, pod, node),
        setUnschedulable: (pod, reason, message, nominated) => this.registry.setSchedulingStatus(pod.metadata?.uid ?? '', reason, message, nominated),
        preemptVictim: async (victim, message) => {
          this.registry.markDisruptionTarget(victim.metadata?.uid ?? '', 'PreemptionByScheduler', message);
          await this.registry.delete(victim.metadata?.namespace ?? 'default', victim.metadata?.name ?? '', {}, true);
        },
      },
    });
    this.taintEviction = new TaintEvictionController({
      clock: opts.clock,
      logger: opts.logger,
      recorder: this.kubelet.events.recorderFor('taint-eviction-controller'),
      node: () => this.node.current(),
      pods: () => this.registry.list().items,
      evict: async (pod) => {
        this.registry.markDisruptionTarget(pod.metadata?.uid ?? '', 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint');
        await this.registry.delete(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '', {}, true);
      },
    });
    this.schedulingStarted = this.startScheduling().catch((err: Error) => opts.logger.error('The scheduler did not start', { err: err.message }));
    // Impersonation and authorization before any route acts: RBAC for every user outside system:masters.
    const authz = authorizationFilter({
      objects,
      otherPath: (user, method, path) => kubeletPathAttributes(user, method, path, opts.nodeName),
    });
    this.router.use(authz.request);
    this.router.useUpgrade(authz.upgrade);
    registerKubeletRoutes(this.router, this);
    this.router.route('GET', '/podvisor/v1/status', (_req, res) => sendJSON(res, 200, this.status()));
    mountKubeApi(this.router, this.backend, { now: () => opts.clock.now() });
    this.router.useUpgrade(lazyStreaming(this.backend));
  }

  /**
   * Starts the service proxy and the cluster DNS on the range's tenth address, port 53 (as kubeadm's
   * 10.96.0.10); without the right to port 53 the DNS stays off, which the log says. A range outside
   * the loopback is routed to the host as local first (service-route.ts), so pods with a network of
   * their own reach ClusterIPs and get the cluster DNS in their resolv.conf (ClusterFirst).
   */
  async startServiceNetwork(): Promise<void> {
    // The system namespaces and their default ServiceAccounts (kube-apiserver's bootstrap, the ServiceAccount controller).
    await this.bootstrapObjects();
    // The RBAC bootstrap policy, created or reconciled (kube-apiserver's rbac/bootstrap-roles).
    const store = this.backend.objects;
    await ensureBootstrapPolicy({
      clusterRoles: store.storage('ClusterRole')!,
      clusterRoleBindings: store.storage('ClusterRoleBinding')!,
      roles: store.storage('Role')!,
      roleBindings: store.storage('RoleBinding')!,
    });
    await createSystemPriorityClasses(this.backend.objects);
    await this.backend.objects.createBuiltinRuntimeClasses(BUILTIN_RUNTIME_CLASSES);
    const range = (this.opts.serviceNetwork ?? defaultServiceNetwork()).clusterIPRange;
    const podNetwork = this.runtime.capabilities.network === 'pod';
    this.serviceRoute = await routeServiceRange(range);
    const route = this.serviceRoute.state;
    if (route.mode === 'local-route') this.opts.logger.info('Service range routed to the host', { range: route.cidr });
    else if (route.mode === 'unrouted') this.opts.logger.warn('ClusterIPs are not reachable from pods', { range: route.cidr, reason: route.reason });
    else if (podNetwork)
      this.opts.logger.warn(
        'ClusterIPs are not reachable from pods: the service range is on the loopback (give --service-cluster-ip-range outside 127.0.0.0/8, as root)',
        {
          range: range.cidr,
        },
      );
    this.serviceProxy.start();
    this.networkPolicies.start();
    // A ClusterIP of the range another process holds (an agent of another root dir given the same
    // range) would send this agent's clients to that one: the agent does not start.
    const taken = (await this.serviceProxy.listensSettled()).find((f) => inRange(f.ip, range) && addressTaken(f.code));
    if (taken) {
      throw new Error(
        `the service proxy cannot listen on ${taken.address} for service ${taken.service}: ${taken.code}; ` +
          `another process holds this service range's address: give this agent a service range of its own with --service-cluster-ip-range`,
      );
    }
    this.serviceURLs.start();
    try {
      await this.ingressProxy.start();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new Error(`the ingress proxy cannot listen: ${e.message}; give it free ports with --ingress-http-port and --ingress-https-port (0: a free port)`);
    }
    const ip = this.serviceAllocator.dnsServiceIP();
    try {
      await this.clusterDNS.listen(ip, 53);
      this.opts.logger.info('Cluster DNS listening', { address: `${ip}:53`, domain: this.clusterDNS.domain });
      if (podNetwork && this.serviceRoute.reachableFromPods) this.podClusterDNS = { servers: [ip], domain: this.clusterDNS.domain };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (addressTaken(code)) {
        throw new Error(
          `the cluster DNS cannot listen on ${ip}:53: ${code}; ${code === 'EADDRINUSE' ? 'another process (an agent of another root dir?) holds it' : 'it is not an address of this host'}: ` +
            `give this agent a service range of its own with --service-cluster-ip-range (the DNS takes its tenth address)`,
        );
      }
      // Not an address problem: port 53 needs root or CAP_NET_BIND_SERVICE.
      this.opts.logger.warn('Cluster DNS is off: it cannot listen', { address: `${ip}:53`, err: (err as Error).message });
    }
  }

  /**
   * The system namespaces, stored with the time they were made (kube-apiserver's bootstrap), and the
   * `default` ServiceAccount of every stored namespace, before any client may create a pod (the
   * ServiceAccount controller keeps them from then on).
   */
  async bootstrapObjects(): Promise<void> {
    const objects = this.backend.objects;
    await objects.createSystemNamespaces();
    const accounts = objects.storage('ServiceAccount');
    if (!accounts) return;
    for (const ns of objects.list('Namespace').items) {
      const name = ns.metadata?.name ?? '';
      if (ns.metadata?.deletionTimestamp || accounts.get(name, defaultServiceAccountName)) continue;
      await accounts.create!({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: defaultServiceAccountName, namespace: name } }, {});
    }
  }

  /** The user a bearer token other than the agent's own authenticates as on the TCP listeners (a bound service-account token). */
  authenticateToken(token: string): UserInfo | undefined {
    const r = this.backend.serviceAccountTokens?.authenticate(token);
    return r && 'user' in r ? r.user : undefined;
  }

  /** Publishes the `kubernetes` Service in `default` with the in-cluster listener's port as its endpoint, and keeps it. */
  async publishKubernetesService(port: number): Promise<void> {
    this.kubernetesService?.stop();
    this.kubernetesService = new KubernetesService({
      objects: this.backend.objects,
      logger: this.opts.logger,
      clusterIP: this.serviceAllocator.kubernetesServiceIP(),
      endpointIP: '127.0.0.1',
      endpointPort: port,
    });
    await this.kubernetesService.start();
  }

  /**
   * Registers the Node, then has the scheduler watch the pods (pending ones to place, bound ones as
   * cluster events) and the Node (its labels, taints, cordon and allocatable).
   */
  private async startScheduling(): Promise<void> {
    await this.node.register();
    this.nodeLease.start();
    const known = this.schedulerCache;
    this.schedulingWatches.push(
      this.registry.watchPods('', (ev) => {
        const uid = ev.object.metadata?.uid ?? '';
        const old = known.get(uid);
        if (ev.type === 'DELETED') known.delete(uid);
        else known.set(uid, ev.object);
        this.scheduler.podChanged(old, ev.type === 'DELETED' ? undefined : ev.object);
        if (
          ev.type !== 'DELETED' &&
          ev.object.spec?.nodeName &&
          (!old?.spec?.nodeName || JSON.stringify(old.spec.tolerations) !== JSON.stringify(ev.object.spec.tolerations))
        )
          this.taintEviction.sync();
      }),
    );
    // A claim, volume or class added or changed may let a pod VolumeBinding refused fit.
    for (const kind of ['PersistentVolumeClaim', 'PersistentVolume', 'StorageClass']) {
      const storage = this.backend.objects.storage(kind);
      if (storage)
        this.schedulingWatches.push(
          storage.watch!(String(this.backend.objects.list(kind).resourceVersion), () => this.scheduler.clusterChanged('StorageChange')),
        );
    }
    const nodeStorage = this.backend.objects.storage('Node')!;
    let seen = '';
    this.schedulingWatches.push(
      nodeStorage.watch!('', (ev) => {
        if (ev.object.metadata?.name !== this.nodeName) return;
        const n = ev.object as Node;
        const key = JSON.stringify([n.metadata?.labels, n.spec?.taints, n.spec?.unschedulable, n.status?.allocatable]);
        if (key === seen) return;
        seen = key;
        this.scheduler.clusterChanged('NodeChange');
        this.taintEviction.sync();
      }),
    );
  }

  // --- KubeletView ---

  pods(): Pod[] {
    return this.registry.list().items;
  }

  runningPods(): Promise<Pod[]> {
    return runningPods(this.runtime);
  }

  /** As the kubelet's syncloop check: housekeeping ran (with the runtime answering) within 2×syncFrequency. */
  syncLoopHealthy(): boolean {
    return this.opts.clock.now() - this.lastHousekeeping <= 2 * (this.opts.syncFrequencyMs ?? 60_000);
  }

  /**
   * Whether housekeeping asks the runtime for its version: always while its container event stream is
   * not connected (a runtime that stopped ends the stream, so that is noticed at the next period) or
   * it was found down, else once per RUNTIME_CHECK_MS (a runtime that hangs with the stream open).
   */
  private runtimeMayBeDown(): boolean {
    if (this.runtimeDown || this.runtime.containerEventsConnection() === undefined) return true;
    return this.opts.clock.now() - this.lastRuntimeAnswer >= RUNTIME_CHECK_MS;
  }

  /**
   * Starts housekeeping: every period, the runtime is asked for its version (runtimeMayBeDown). An
   * answer, or a connected event stream, marks the sync loop healthy; no answer has the runtime service
   * started again (restartRuntime) and, once it answers, every pod synced, so what changed meanwhile
   * (a container that exited) is found.
   */
  startHousekeeping(): void {
    if (this.housekeepingTimer) return;
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try {
        if (this.runtimeMayBeDown()) {
          await this.runtime.version();
          this.lastRuntimeAnswer = this.opts.clock.now();
        }
        if (this.runtimeDown) {
          this.runtimeDown = false;
          this.opts.logger.info('Container runtime answers again: syncing every pod');
          this.kubelet.resyncAll();
        }
        this.lastHousekeeping = this.opts.clock.now();
        await this.node.refresh();
        await this.collectOrphanedPodDirs();
      } catch (err) {
        if (!this.runtimeDown) this.opts.logger.error('Container runtime not answering', { runtime: this.runtime.name, err: String(err) });
        this.runtimeDown = true;
        if (this.opts.restartRuntime) {
          await this.opts.restartRuntime().catch((e: unknown) => this.opts.logger.error('Could not start the runtime service again', { err: String(e) }));
        }
      } finally {
        busy = false;
      }
    };
    this.housekeepingTimer = setInterval(() => void tick(), this.opts.housekeepingMs ?? 2000);
    this.housekeepingTimer.unref();
  }

  /** The directories of pods that are gone (the kubelet's cleanupOrphanedPodDirs and log GC). */
  private async collectOrphanedPodDirs(): Promise<void> {
    try {
      this.orphanedPodDirs ??= new OrphanedPodDirs({ rootDir: this.opts.rootDir, runtime: this.runtime, knownPodUids: () => this.registry.podUids() }, () =>
        this.opts.clock.now(),
      );
      const removed = await this.orphanedPodDirs.sweep();
      if (removed.length > 0) this.opts.logger.debug('Removed the directories of pods that are gone', { count: removed.length });
    } catch (err) {
      this.opts.logger.warn('Failed to remove the directories of pods that are gone', { err: String(err) });
    }
  }

  /**
   * Starts the endpoints and workload controllers over the agent's API objects and pods, once the
   * restored pods are in the registry: started earlier, they would see Services and ReplicaSets
   * without their pods, write empty Endpoints and create the replicas again.
   */
  startControllers(opts: ControllerOptions = {}): void {
    if (this.controllers) return;
    this.endpointsController.start();
    this.controllers = startWorkloadControllers(this.backend, this.opts.clock, this.opts.logger, this.kubelet.events, {
      ...opts,
      storage: { rootDir: this.opts.rootDir, nodeName: this.nodeName },
      ...(this.opts.hpaSyncPeriodMs !== undefined ? { hpaSyncPeriodMs: this.opts.hpaSyncPeriodMs } : {}),
    });
  }

  metrics(which: 'agent' | 'probes' | 'resource'): Promise<{ contentType: string; text: string }> {
    return kubeletMetrics(which, { usage: this.usage, agentRegistry: this.metricsSet.registry, probeRegistry: this.probeRegistry });
  }

  async statsSummary(): Promise<unknown> {
    return statsSummary(await this.usage.sample(), this.nodeName, this.startedAt);
  }

  containerLog(namespace: string, pod: string, container: string, q: ContainerLogQuery) {
    return this.backend.podLog(namespace, pod, { container, ...q });
  }

  probeHistory(namespace: string, name: string) {
    return podProbeHistory(this.kubelet.probeManager, this.pods(), namespace, name);
  }

  configz(): unknown {
    return { nodeName: this.nodeName, rootDirectory: this.opts.rootDir, ...(this.opts.config ?? {}) };
  }

  // --- the agent itself ---

  status(): Record<string, unknown> {
    const identity = {
      version: this.opts.version,
      nodeName: this.nodeName,
      rootDir: this.opts.rootDir,
      runtime: this.runtime.name,
      capabilities: this.runtime.capabilities,
      startedAt: this.startedAt,
    };
    const out = agentStatusDocument(identity, this.registry.list().items, this.opts.clock.now(), this.kubelet.nodeConditions());
    for (const p of this.statusProviders) Object.assign(out, p());
    return out;
  }

  /**
   * Shuts down the agent: the registry and the kubelet are closed, the runtime connection with them.
   * Containers are left to the runtime (the next agent takes them over); tests running a runtime in
   * process terminate their pods first.
   */
  async stop(): Promise<void> {
    if (this.housekeepingTimer) clearInterval(this.housekeepingTimer);
    this.controllers?.stop();
    this.kubernetesService?.stop();
    for (const w of this.schedulingWatches.splice(0)) w.stop();
    this.nodeLease.stop();
    this.scheduler.close();
    this.taintEviction.close();
    this.endpointsController.stop();
    this.serviceProxy.stop();
    this.networkPolicies.stop();
    this.ingressProxy.stop();
    this.serviceURLs.stop();
    this.clusterDNS.close();
    await this.serviceRoute?.remove();
    this.registry.close();
    await this.kubelet.close();
  }
}

/** Paths of the streaming upgrades (pods/exec, pods/attach, pods/portforward); see streaming/upgrade.ts. */
const streamingPath = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/(exec|attach|portforward)$/;

/**
 * The streaming upgrade handler (WebSocket and SPDY), loaded on the first upgrade request on one of
 * its paths; the socket waits, unread, meanwhile.
 */
function lazyStreaming(backend: AgentBackend): UpgradeHandler {
  let handler: Promise<UpgradeHandler> | undefined;
  return (req, socket, head) => {
    if (!streamingPath.test(new URL(req.url ?? '/', 'http://localhost').pathname)) return false;
    handler ??= import('../streaming/upgrade.js').then((m) => m.createStreamingUpgradeHandler(backend));
    handler
      .then((h) => {
        if (!h(req, socket, head)) socket.end(rawStatusResponse(statusBody(404, 'NotFound', 'the server could not find the requested resource')));
      })
      .catch((err: unknown) => socket.end(rawStatusResponse(statusOf(err))));
    return true;
  };
}
