// The agent core behind the CLI: admission, one PodWorker per pod, and the wiring the kubelet's sync
// loop does — runtime container events and probe result changes (§7.1) become pod syncs, readiness
// and startup changes go to the status manager first.

import { cpus, totalmem } from 'node:os';
import type { Registry } from 'prom-client';
import type { Pod, PodStatus } from '../api/types.js';
import { EventStore } from '../events/store.js';
import { ProberManager } from '../prober/manager.js';
import type { ProbeManager } from '../prober/types.js';
import type { PodSandboxStatus, RuntimeService } from '../runtime/cri.js';
import { getPodQOS } from '../status/qos.js';
import { isTerminalPhase } from '../status/phase.js';
import { PodStatusManager } from '../status/status-manager.js';
import type { StatusManager } from '../status/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { admitPod, type NodeAllocatable } from './admission.js';
import { EVICTED_REASON, evictionAdmit, isCriticalPod, type DiskPressureObserver } from './disk-pressure.js';
import { deleteAllUnusedContainers } from './container-gc.js';
import { EvictionManager } from './eviction-manager.js';
import type { PodResourceStats } from './eviction-ranking.js';
import type { ResourcePressureObserver } from './resource-pressure.js';
import { measurePodDiskUsage } from './pod-disk-usage.js';
import { HostPortClaims } from './host-ports.js';
import { newCrashLoopBackoff, type Backoff } from '../kuberuntime/backoff.js';
import { formatPod, podRef } from '../kuberuntime/format.js';
import { LABEL_POD_UID } from '../kuberuntime/container-config.js';
import { DEFAULT_RESYNC_INTERVAL_MS, PodWorker } from './pod-worker.js';
import { Relister } from './pleg.js';
import { PodReadsCache } from './pod-reads-cache.js';
import { RuntimeClassManager } from './runtime-class.js';
import { newPodRuntimeSupport, type PodRuntimeSupport } from '../kuberuntime/runtime-support.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { ClusterDNSSettings } from '../kuberuntime/cluster-dns.js';
import type { AdmitResult, Kubelet, TerminateOptions } from './types.js';

export interface PodKubeletOptions {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  rootDir: string;
  nodeName: string;
  /** 127.0.0.1 when unset. */
  hostIP?: string;
  /** The ConfigMaps and Secrets that env references resolve against. */
  lookup: ObjectLookup;
  /** crashLoopBackOff.maxContainerRestartPeriod in seconds (1..300); 300 when unset. */
  crashLoopBackOffMaxSeconds?: number;
  /** Periodic resync of each pod (plus up to 50 % jitter); the kubelet's 1 min when unset. */
  resyncIntervalMs?: number;
  /** The host's CPUs and memory when unset. */
  nodeAllocatable?: NodeAllocatable;
  /** The root dir's file system for the eviction manager (DiskPressure, evictions); none observed when unset. */
  diskPressure?: DiskPressureObserver;
  /** The node's memory.available and pid.available for the eviction manager (MemoryPressure, PIDPressure); none observed when unset. */
  resourcePressure?: ResourcePressureObserver;
  /** What a pod uses of memory and processes, for the eviction manager's ranking under MemoryPressure and PIDPressure. */
  podResourceStats?: (pod: Pod) => Promise<PodResourceStats | undefined>;
  /** The eviction manager's housekeeping period; the kubelet's 10 s when unset. */
  evictionMonitoringIntervalMs?: number;
  /** Registry for the probe metrics (served at /metrics/probes). */
  registry?: Registry;
  /** Keep probe metrics without a registry given (true when unset); see ProberManagerOptions.metrics. */
  probeMetrics?: boolean;
  /** Replace the parts built inside (tests, embedding). */
  statusManager?: StatusManager;
  events?: EventStore;
  probeManager?: ProbeManager;
  /** The resolv.conf pods on a runtime with images get their DNS from; /etc/resolv.conf when unset. */
  resolvConf?: string;
  /** The cluster DNS (the kubelet's --cluster-dns and --cluster-domain), asked at each pod's sandbox. */
  clusterDNS?: () => ClusterDNSSettings | undefined;
  /** The image pull back-off (10 s doubling to 300 s when unset). */
  imageBackoff?: Backoff;
  /** [0, 1), for timer jitter; Math.random when unset. */
  random?: () => number;
  /** Told when each probe starts, with the time it was due (schedule lateness, for measurement). */
  onProbeStart?: (dueMs: number, actualMs: number) => void;
  /** Where probes dial a pod's address when pod IPs are out of the agent's reach (rootless containerd). */
  podAddress?: (host: string, port: number) => Promise<{ host: string; port: number }>;
}

/** The kubelet's minimumGracePeriodInSeconds, used for a pod whose spec is no longer known. */
const ORPHAN_GRACE_SECONDS = 2;

export class PodKubelet implements Kubelet {
  readonly events: EventStore;
  /** Where the agent dials a pod's address (its probes, the service proxy) when pod IPs are out of its reach. */
  readonly podAddress: PodKubeletOptions['podAddress'];
  readonly statusManager: StatusManager;
  readonly probeManager: ProbeManager;
  readonly backoff: Backoff;
  readonly nodeAllocatable: NodeAllocatable;

  private readonly opts: PodKubeletOptions;
  /** Images, volumes, Linux config and termination messages, as the runtime's capabilities allow. */
  private readonly podRuntime: PodRuntimeSupport;
  /** Each pod's runtime handler, from its RuntimeClass. */
  private readonly runtimeClasses: RuntimeClassManager;
  private readonly hostIP: string;
  private readonly order: string[] = [];
  private readonly given = new Map<string, Pod>();
  private readonly workers = new Map<string, PodWorker>();
  private readonly workerBySandbox = new Map<string, PodWorker>();
  private readonly unsubscribe: Array<() => void> = [];
  /** Sandboxes found in the runtime at recovery, by pod UID, for startPod to adopt. */
  private readonly adoptable = new Map<string, PodSandboxStatus>();
  /** The host ports pods bind, when the runtime's pods share the host's network. */
  private readonly hostPorts?: HostPortClaims;
  /** The eviction manager, when the root dir's file system is observed. */
  private readonly eviction?: EvictionManager;
  private closed = false;
  /** What the pod workers read of the runtime, kept between changes the runtime pushes. */
  private readonly podReads: PodReadsCache;

  constructor(opts: PodKubeletOptions) {
    this.opts = opts;
    this.podReads = new PodReadsCache(opts.runtime);
    this.hostIP = opts.hostIP ?? '127.0.0.1';
    this.nodeAllocatable = opts.nodeAllocatable ?? { cpuMilli: cpus().length * 1000, memoryBytes: totalmem() };
    this.backoff = newCrashLoopBackoff(opts.clock, opts.crashLoopBackOffMaxSeconds);
    if (opts.runtime.capabilities.network === 'host') this.hostPorts = new HostPortClaims();
    this.statusManager =
      opts.statusManager ??
      new PodStatusManager({
        clock: opts.clock,
        logger: opts.logger,
        couldHaveRunningContainers: (uid) => this.workers.get(uid)?.couldHaveRunningContainers === true,
      });
    this.events = opts.events ?? new EventStore({ clock: opts.clock, host: opts.nodeName });
    this.podAddress = opts.podAddress;
    this.probeManager =
      opts.probeManager ??
      new ProberManager({
        clock: opts.clock,
        logger: opts.logger,
        runtime: opts.runtime,
        recorder: this.events,
        statusProvider: this.statusManager,
        registry: opts.registry,
        ...(opts.probeMetrics !== undefined ? { metrics: opts.probeMetrics } : {}),
        random: opts.random,
        onProbeStart: opts.onProbeStart,
        ...(opts.podAddress ? { podAddress: opts.podAddress } : {}),
      });

    this.runtimeClasses = new RuntimeClassManager(opts.runtime, opts.lookup);
    this.podRuntime = newPodRuntimeSupport({
      images: opts.runtime.images,
      runtimeOf: (pod) => this.runtimeClasses.runtimeOf(pod),
      clock: opts.clock,
      logger: opts.logger,
      recorder: this.events,
      rootDir: opts.rootDir,
      lookup: opts.lookup,
      hostIP: this.hostIP,
      nodeAllocatable: this.nodeAllocatable,
      resolvConf: opts.resolvConf,
      ...(opts.clusterDNS ? { clusterDNS: opts.clusterDNS } : {}),
      imageBackoff: opts.imageBackoff,
    });
    if (opts.diskPressure) {
      this.eviction = this.newEvictionManager(opts.diskPressure);
      this.eviction.start();
      const eviction = this.eviction;
      this.unsubscribe.push(() => void eviction.stop());
    }
    // A CRI runtime need not push container events: relisting finds every change within a period.
    const relister = new Relister(opts.runtime, opts.clock, opts.logger, (id) => {
      this.podReads.invalidate(id);
      this.workerBySandbox.get(id)?.trigger();
    });
    relister.start();
    this.unsubscribe.push(
      () => relister.stop(),
      () => this.podReads.close(),
    );

    // §7.1: runtime changes and probe results become syncs of the pod concerned.
    this.unsubscribe.push(
      opts.runtime.onContainerEvent((ev) => {
        // Removals are our own garbage collection; they change nothing worth a sync.
        if (ev.type === 'CONTAINER_DELETED_EVENT') return;
        this.workerBySandbox.get(ev.podSandboxId)?.trigger();
      }),
      this.probeManager.liveness.onUpdate((u) => {
        if (u.result === 'Failure') this.workers.get(u.podUid)?.trigger();
      }),
      this.probeManager.readiness.onUpdate((u) => {
        if (!this.workers.has(u.podUid)) return;
        this.statusManager.setContainerReadiness(u.podUid, u.containerId, u.result === 'Success');
        this.workers.get(u.podUid)?.trigger();
      }),
      this.probeManager.startup.onUpdate((u) => {
        if (!this.workers.has(u.podUid)) return;
        this.statusManager.setContainerStartup(u.podUid, u.containerId, u.result === 'Success');
        this.workers.get(u.podUid)?.trigger();
      }),
    );
  }

  admit(pod: Pod): AdmitResult {
    // The eviction manager's admit handler comes first, as the kubelet adds it first.
    const evicted = evictionAdmit(pod, this.nodeConditions());
    if (!evicted.admit) return evicted;
    const active = [...this.workers.values()].filter((w) => !w.isTerminal).map((w) => w.currentPod);
    return admitPod(pod, active, this.nodeAllocatable);
  }

  /** The eviction manager's node conditions now (MemoryPressure, DiskPressure, PIDPressure, each kept for the pressure transition period). */
  nodeConditions(): string[] {
    return this.eviction?.conditions() ?? [];
  }

  private newEvictionManager(disk: DiskPressureObserver): EvictionManager {
    const { clock, logger, rootDir, runtime } = this.opts;
    return new EvictionManager({
      clock,
      logger,
      recorder: this.events,
      nodeName: this.opts.nodeName,
      disk,
      ...(this.opts.resourcePressure ? { resources: this.opts.resourcePressure } : {}),
      ...(this.opts.evictionMonitoringIntervalMs !== undefined ? { monitoringIntervalMs: this.opts.evictionMonitoringIntervalMs } : {}),
      // As filterOutInactivePods: neither terminating nor in a terminal phase.
      activePods: () =>
        [...this.workers.values()]
          .filter((w) => !w.isTerminal && !w.isTerminating && !isTerminalPhase(this.statusManager.getPodStatus(w.currentPod.metadata?.uid ?? '')?.phase))
          .map((w) => w.currentPod),
      measure: (pod) => measurePodDiskUsage(rootDir, pod),
      ...(this.opts.podResourceStats ? { podStats: this.opts.podResourceStats } : {}),
      reclaim: () => {
        const known = new Set(this.workerBySandbox.keys());
        const finished = new Set([...this.workers.values()].filter((w) => w.isTerminal && w.sandboxId).map((w) => w.sandboxId!));
        return deleteAllUnusedContainers({ runtime, rootDir, logger, knownSandboxes: known, finishedSandboxes: finished });
      },
      evictPod: async (pod, grace, message) => {
        const w = this.workers.get(pod.metadata?.uid ?? '');
        if (!w) return;
        this.events.event(podRef(pod), 'Warning', EVICTED_REASON, message);
        await w.evict(EVICTED_REASON, message, grace);
      },
      podCleanedUp: (pod) => this.workers.get(pod.metadata?.uid ?? '')?.isTerminal !== false,
      isCritical: isCriticalPod,
    });
  }

  rejectPod(pod: Pod, reason: string, message: string): void {
    this.remember(pod);
    this.events.event(podRef(pod), 'Warning', reason, message);
    this.statusManager.setPodStatus(pod, {
      message: `Pod was rejected: ${message}`,
      phase: 'Failed',
      qosClass: getPodQOS(pod),
      reason,
    });
  }

  startPod(pod: Pod): void {
    if (this.closed) throw new Error('the kubelet is closed');
    const uid = pod.metadata?.uid;
    if (!uid) throw new Error('pod has no metadata.uid');
    if (this.workers.has(uid)) return;
    this.remember(pod);
    this.statusManager.setPod(pod);
    const o = this.opts;
    const worker: PodWorker = new PodWorker(pod, {
      runtime: this.podReads.runtime,
      clock: o.clock,
      logger: o.logger,
      recorder: this.events,
      statusManager: this.statusManager,
      probeManager: this.probeManager,
      backoff: this.backoff,
      lookup: o.lookup,
      rootDir: o.rootDir,
      hostIP: this.hostIP,
      nodeAllocatable: this.nodeAllocatable,
      resyncIntervalMs: o.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS,
      random: o.random ?? Math.random,
      podRuntime: this.podRuntime,
      runtimeClasses: this.runtimeClasses,
      onSandbox: (id) => this.workerBySandbox.set(id, worker),
      hostPorts: this.hostPorts,
    });
    this.workers.set(uid, worker);
    const existing = this.adoptable.get(uid);
    if (existing) {
      this.adoptable.delete(uid);
      worker.adoptSandbox(existing);
    }
    worker.trigger();
  }

  /**
   * After an agent restart: finds the sandboxes the runtime still holds. The ready sandbox of each
   * pod in `pods` (matched by the pod UID label) is kept for startPod to adopt; every other sandbox
   * — of a pod no longer given, or an older or stopped one of a given pod — is terminated: its
   * running containers are stopped (2 s grace, the kubelet's minimum for a pod whose spec it no
   * longer has) and the sandbox removed, in the background. Call before starting the pods. A sandbox
   * `keep` accepts is left running, for a pod of that UID given later to adopt.
   */
  async recover(pods: Pod[], opts: { keep?: (sb: PodSandboxStatus) => boolean } = {}): Promise<{ adopted: number; terminated: number }> {
    const { runtime, logger } = this.opts;
    const wanted = new Set(pods.map((p) => p.metadata?.uid ?? ''));
    const sandboxes = (await runtime.listPodSandbox()).sort((a, b) => b.createdAt - a.createdAt);
    const orphans: PodSandboxStatus[] = [];
    for (const sb of sandboxes) {
      const uid = sb.labels?.[LABEL_POD_UID] ?? sb.metadata.uid;
      // A kept sandbox (its source could not be read) is neither adopted now nor terminated: its pod may still come.
      const kept = !wanted.has(uid) && sb.state === 'SANDBOX_READY' && opts.keep?.(sb) === true;
      if ((wanted.has(uid) || kept) && sb.state === 'SANDBOX_READY' && !this.adoptable.has(uid) && !this.workers.has(uid)) {
        this.adoptable.set(uid, sb);
        if (kept) logger.info('Keeping a running pod whose source could not be read', { pod: `${sb.metadata.namespace}/${sb.metadata.name}` });
      } else orphans.push(sb);
    }
    for (const sb of orphans) {
      void this.removeOrphan(sb).catch((err) =>
        logger.warn('Failed to remove an orphaned pod sandbox', { sandbox: sb.id, pod: `${sb.metadata.namespace}/${sb.metadata.name}`, err: String(err) }),
      );
    }
    for (const p of pods) if (this.adoptable.has(p.metadata?.uid ?? '')) logger.info('Adopting running pod', { pod: formatPod(p) });
    return { adopted: pods.filter((p) => this.adoptable.has(p.metadata?.uid ?? '')).length, terminated: orphans.length };
  }

  /** Requests a sync of every pod (after the runtime came back: what changed meanwhile is found). */
  resyncAll(): void {
    for (const w of this.workers.values()) w.trigger();
  }

  /** The sandboxes of this kubelet's pods. */
  sandboxIds(): Set<string> {
    return new Set([...this.workerBySandbox.keys()]);
  }

  /** Removes the sandboxes of pods whose worker finished (their containers stopped for good). */
  async removeFinishedSandboxes(): Promise<void> {
    await Promise.all([...this.workers.values()].filter((w) => w.isTerminal && w.sandboxId).map((w) => this.opts.runtime.removePodSandbox(w.sandboxId!)));
  }

  private async removeOrphan(sb: PodSandboxStatus): Promise<void> {
    const { runtime } = this.opts;
    const running = await runtime.listContainers({ podSandboxId: sb.id, state: 'CONTAINER_RUNNING' });
    await Promise.all(running.map((c) => runtime.stopContainer(c.id, ORPHAN_GRACE_SECONDS)));
    await runtime.stopPodSandbox(sb.id);
    await runtime.removePodSandbox(sb.id);
  }

  pods(): Pod[] {
    return this.order.map((uid) => this.workers.get(uid)?.currentPod ?? this.given.get(uid)!);
  }

  /** The pod object of a UID as the worker holds it now (deletionTimestamp included). */
  getPod(podUid: string): Pod | undefined {
    return this.workers.get(podUid)?.currentPod ?? this.given.get(podUid);
  }

  /** Hands an allowed change of a running pod (same UID) to its worker. */
  updatePod(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (this.given.has(uid)) this.given.set(uid, pod);
    this.workers.get(uid)?.update(pod);
  }

  /**
   * Forgets a pod whose worker finished terminating (or that was rejected): its status, its worker
   * and its sandbox in the runtime, as the kubelet's housekeeping removes them. A pod given again
   * with the same UID afterwards starts afresh.
   */
  async forgetPod(podUid: string): Promise<void> {
    const w = this.workers.get(podUid);
    if (w && !w.isTerminal) return;
    this.workers.delete(podUid);
    this.runtimeClasses.forget(podUid);
    this.given.delete(podUid);
    const at = this.order.indexOf(podUid);
    if (at >= 0) this.order.splice(at, 1);
    this.statusManager.removePod(podUid);
    const sandboxId = w?.sandboxId;
    if (sandboxId) {
      this.workerBySandbox.delete(sandboxId);
      w.close();
      await this.opts.runtime.removePodSandbox(sandboxId).catch((e: unknown) => {
        this.opts.logger.warn('Failed to remove a pod sandbox', { podUid, err: e instanceof Error ? e.message : String(e) });
      });
    }
  }

  getPodStatus(podUid: string): PodStatus | undefined {
    return this.statusManager.getPodStatus(podUid);
  }

  /** Requests a sync of the pod and resolves once the worker is idle again (run-once's re-sync). */
  async syncPod(podUid: string): Promise<{ terminal: boolean }> {
    const w = this.workers.get(podUid);
    if (!w) return { terminal: true };
    w.trigger();
    await w.whenIdle();
    return { terminal: w.isTerminal };
  }

  terminatePod(podUid: string, opts?: TerminateOptions): Promise<void> {
    return this.workers.get(podUid)?.terminate(opts) ?? Promise.resolve();
  }

  async terminateAll(opts?: TerminateOptions): Promise<void> {
    await Promise.all([...this.workers.keys()].map((uid) => this.terminatePod(uid, opts)));
  }

  onPodStatus(listener: (pod: Pod, status: PodStatus) => void): () => void {
    return this.statusManager.onChange((uid, status) => {
      const pod = this.workers.get(uid)?.currentPod ?? this.given.get(uid);
      if (pod) listener(pod, status);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const u of this.unsubscribe.splice(0)) u();
    await this.eviction?.stop();
    for (const w of this.workers.values()) w.close();
    this.probeManager.close();
    await this.opts.runtime.close();
  }

  private remember(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (!this.given.has(uid)) this.order.push(uid);
    this.given.set(uid, pod);
  }
}
