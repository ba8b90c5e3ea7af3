// One pod's worker, after the kubelet's podWorkers + SyncPod/SyncTerminatingPod: serialises the
// pod's syncs (a trigger during a sync coalesces into one follow-up sync), applies the computed
// actions through the runtime, publishes the generated status, and runs termination (§11.5).
//
// Syncs are driven by events: runtime container events, probe result changes, the back-off expiry
// (requeue at the earliest expiry, as v1.35 does), errors (10 s, +50 % jitter, the kubelet's
// backOffPeriod) and a periodic resync (resyncIntervalMs, +50 % jitter as the kubelet's
// workerResyncIntervalJitterFactor). Each worker holds at most one timer.

import type { Pod, PodStatus } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { ProbeManager } from '../prober/types.js';
import type { HandlerRuntime, PodSandboxStatus, ContainerStatus as RuntimeContainerStatus, RuntimeService } from '../runtime/cri.js';
import { grpcCodeName } from '../util/grpc-codes.js';
import { removeUnder, sandboxDir } from '../runtime/root-dir.js';
import { generateAPIPodStatus } from '../status/generate.js';
import type { StartFailure } from '../status/reason-cache.js';
import { needToReconcilePodReadiness } from '../status/conditions.js';
import { isTerminalPhase } from '../status/phase.js';
import { jsonEqual } from '../util/json-equal.js';
import { toRFC3339 } from '../status/time.js';
import type { StatusManager } from '../status/types.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Backoff } from '../kuberuntime/backoff.js';
import { hashContainer } from '../kuberuntime/container-config.js';
import { formatPod, hasSidecars, podRef } from '../kuberuntime/format.js';
import { abortable } from '../kuberuntime/hooks.js';
import { killContainer } from '../kuberuntime/kill.js';
import { computePodActions, RuntimePod, type PodActions } from '../kuberuntime/pod-actions.js';
import { podSandboxConfig } from '../kuberuntime/sandbox.js';
import { startContainer, type ObjectLookup, type SandboxInfo, type StartDeps, type StartResult } from '../kuberuntime/start.js';
import type { PodRuntimeSupport } from '../kuberuntime/runtime-support.js';
import { TerminationOrdering } from '../kuberuntime/termination-order.js';
import { HostPortInUseReason, portConflictMessage, type HostPortClaims } from './host-ports.js';
import type { TerminateOptions } from './types.js';
import type { RuntimeClassManager } from './runtime-class.js';

/** The kubelet's default syncFrequency. */
export const DEFAULT_RESYNC_INTERVAL_MS = 60_000;
/** The pod worker's requeue delay after a failed sync (backOffPeriod). */
export const SYNC_ERROR_BACKOFF_MS = 10_000;
/** Exited instances kept per container name: what status needs (state and lastState). */
export const EXITED_INSTANCES_KEPT = 2;

export const DeadlineExceededReason = 'DeadlineExceeded';
export const DeadlineExceededMessage = 'Pod was active on the node longer than the specified deadline';

export interface PodWorkerDeps {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  statusManager: StatusManager;
  probeManager: ProbeManager;
  backoff: Backoff;
  lookup: ObjectLookup;
  rootDir: string;
  hostIP: string;
  nodeAllocatable?: StartDeps['nodeAllocatable'];
  resyncIntervalMs: number;
  /** [0, 1), for timer jitter. */
  random: () => number;
  /** Images, volumes and Linux config, for a runtime that has them. */
  podRuntime?: PodRuntimeSupport;
  /** The pod's runtime handler (its RuntimeClass) and the runtime behind it. */
  runtimeClasses?: RuntimeClassManager;
  /** Told once the pod's sandbox exists, so runtime events can be routed to this worker. */
  onSandbox?: (sandboxId: string) => void;
  /** On a runtime whose pods share the host's network: the ports pods hold, which this pod waits for. */
  hostPorts?: HostPortClaims;
}

interface Termination {
  /** Aborted to kill everything at once (a zero-grace request). */
  force: AbortController;
  /** Resolves once every container stopped and the final status is stored. */
  done: Promise<void>;
  resolve: () => void;
}

/** The metadata a sync depends on: all but what every write of the object changes. */
function comparableMetadata(pod: Pod): unknown {
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...rest } = (pod.metadata ?? {}) as Record<string, unknown>;
  return rest;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A runtime's error as the kubelet's messages give a gRPC status (`rpc error: code = Unknown desc = …`). */
function runtimeErrorText(e: unknown): string {
  const status = e as { name?: string; code?: unknown; details?: unknown };
  if (e instanceof Error && status.name === 'CriError' && typeof status.code === 'number' && typeof status.details === 'string')
    return `rpc error: code = ${grpcCodeName(status.code)} desc = ${status.details}`;
  return messageOf(e);
}

function startsWithPostStart(pod: Pod, actions: PodActions): boolean {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  return (
    actions.initContainersToStart.some((i) => inits[i]?.lifecycle?.postStart) || actions.containersToStart.some((i) => containers[i]?.lifecycle?.postStart)
  );
}

/**
 * Whether pruneExitedInstances can find anything after a sync started one more instance of some
 * containers: only a name that already had EXITED_INSTANCES_KEPT instances can then exceed it.
 */
function mayHaveInstancesToPrune(snapshot: RuntimePod): boolean {
  return snapshot.names().some((n) => snapshot.instances(n).length >= EXITED_INSTANCES_KEPT);
}

export class PodWorker {
  private pod: Pod;
  private readonly uid: string;
  private sandbox?: SandboxInfo;
  private readonly reasonCache = new Map<string, StartFailure>();
  private startTime?: number;
  /** Pod-level failure forced on every later status (activeDeadlineSeconds). */
  private failure?: { reason: string; message: string };
  /** The grace period an eviction gives every container, whatever the pod asks. */
  private gracePeriodOverride?: number;
  private terminal = false;
  /** Set once stopPod found every container stopped, just before the final status. */
  private containersStopped = false;
  private termination?: Termination;
  private pending = false;
  private running?: Promise<void>;
  private currentSync?: AbortController;
  private wakeTimer?: Timer;
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    pod: Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.pod = pod;
    this.uid = pod.metadata!.uid!;
  }

  /** The pod object, with deletionTimestamp once termination began. */
  get currentPod(): Pod {
    return this.pod;
  }

  get sandboxId(): string | undefined {
    return this.sandbox?.id;
  }

  /** True once every container stopped for good and the final status is published. */
  get isTerminal(): boolean {
    return this.terminal;
  }

  /**
   * podWorkers.CouldHaveRunningContainers: true until the pod is stopped for good; the status
   * manager keeps a terminal phase back until then.
   */
  get couldHaveRunningContainers(): boolean {
    return !this.containersStopped && !this.closed;
  }

  /** Asks for a sync; coalesced with any other request made before the next sync begins. */
  trigger(): void {
    if (this.closed || this.terminal) return;
    this.pending = true;
    if (!this.running) this.running = this.loop();
  }

  /** Resolves once no sync is running or queued. */
  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Begins (or shortens) termination; resolves once every container stopped and the final status is
   * stored. gracePeriodSeconds 0 cuts a running graceful termination short.
   */
  terminate(opts: TerminateOptions = {}): Promise<void> {
    if (this.terminal || this.closed) return Promise.resolve();
    const grace = opts.gracePeriodSeconds;
    if (this.termination) {
      if (grace !== undefined) {
        const current = this.pod.metadata?.deletionGracePeriodSeconds;
        if (current === undefined || current === null || grace < current) this.markDeleted(grace);
        if (grace <= 0) this.termination.force.abort();
      }
      return this.termination.done;
    }
    this.markDeleted(grace);
    const t = this.beginTermination();
    if (grace !== undefined && grace <= 0) t.force.abort();
    return t.done;
  }

  /**
   * Evicts the pod (the eviction manager's killPodFunc): marked Failed with reason and message and a
   * DisruptionTarget condition (TerminationByKubelet), its containers killed with the grace period,
   * the pod object left undeleted. Resolves once every container stopped and the final status is stored.
   */
  evict(reason: string, message: string, gracePeriodSeconds: number): Promise<void> {
    if (this.terminal || this.closed) return Promise.resolve();
    this.failure = { reason, message };
    this.gracePeriodOverride = gracePeriodSeconds;
    const status = this.deps.statusManager.getPodStatus(this.uid);
    if (status) {
      const now = toRFC3339(this.deps.clock.now());
      const condition = { type: 'DisruptionTarget', status: 'True', lastTransitionTime: now, reason: 'TerminationByKubelet', message };
      const conditions = [...(status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'), condition];
      this.deps.statusManager.setPodStatus(this.pod, { ...status, phase: 'Failed', reason, message, conditions });
    }
    const t = this.termination ?? this.beginTermination();
    if (gracePeriodSeconds <= 0) t.force.abort();
    return t.done;
  }

  /** Whether termination began (a deletion, an active deadline, an eviction). */
  get isTerminating(): boolean {
    return this.termination !== undefined;
  }

  /**
   * Takes over the pod's existing sandbox (an agent restarted while the runtime kept the pod), before
   * the first sync: its containers are then seen as this worker's, so running ones whose spec hash
   * still matches are kept as they are, and restart counts and lastState come from the runtime's
   * instances as for any sync. The pod's start time is the sandbox's creation.
   */
  adoptSandbox(sandbox: PodSandboxStatus): void {
    if (this.sandbox) return;
    const config = podSandboxConfig(this.pod, this.deps.rootDir);
    this.sandbox = { id: sandbox.id, config, dir: sandboxDir(this.deps.rootDir, this.uid), podIP: this.podIPOf(sandbox) };
    if (sandbox.createdAt > 0) this.startTime = sandbox.createdAt;
    this.deps.onSandbox?.(sandbox.id);
  }

  /**
   * Takes an updated pod object (same UID; the API server allowed the change): metadata, images,
   * activeDeadlineSeconds. The next sync restarts a container whose definition changed.
   */
  update(pod: Pod): void {
    if (this.closed || this.terminal) return;
    const deletion = this.pod.metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number } | undefined;
    const metadata = { ...pod.metadata } as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number };
    if (deletion?.deletionTimestamp) metadata.deletionTimestamp = deletion.deletionTimestamp;
    if (deletion?.deletionGracePeriodSeconds !== undefined) metadata.deletionGracePeriodSeconds = deletion.deletionGracePeriodSeconds;
    const before = this.pod;
    this.pod = { ...pod, metadata };
    this.deps.statusManager.setPod(this.pod);
    // As HandlePodUpdates and HandlePodReconcile: a change of the spec or metadata is synced; a
    // change of the status alone (another client's write, or our own coming back) only when the
    // readiness gates it carries change what Ready says.
    const statusOnly = jsonEqual(before.spec, this.pod.spec) && jsonEqual(comparableMetadata(before), comparableMetadata(this.pod));
    if (statusOnly && !needToReconcilePodReadiness(this.pod, this.deps.statusManager.getPodStatus(this.uid))) return;
    this.trigger();
  }

  /** Stops at once: no more syncs or timers; pending terminations resolve. */
  close(): void {
    this.closed = true;
    this.currentSync?.abort();
    this.termination?.force.abort();
    this.wakeTimer?.cancel();
    this.termination?.resolve();
    this.deps.hostPorts?.release(this.uid);
  }

  // --- the loop ---

  private async loop(): Promise<void> {
    try {
      while (this.pending && !this.closed && !this.terminal) {
        this.pending = false;
        try {
          await this.syncOnce();
        } catch (e) {
          // A sync cut short by the kubelet's close (its runtime connection going with it) is no error.
          if (this.closed) break;
          this.deps.logger.error('Error syncing pod, skipping', { pod: formatPod(this.pod), err: messageOf(e) });
          if (!this.terminal && !this.closed) this.scheduleWake(this.jitter(SYNC_ERROR_BACKOFF_MS));
        }
      }
    } finally {
      this.running = undefined;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async syncOnce(): Promise<void> {
    if (this.termination) {
      await this.syncTerminatingPod();
      return;
    }
    const abort = new AbortController();
    this.currentSync = abort;
    try {
      await this.syncPod(abort.signal);
    } finally {
      this.currentSync = undefined;
    }
  }

  private beginTermination(): Termination {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const t: Termination = { force: new AbortController(), done, resolve };
    this.termination = t;
    this.wakeTimer?.cancel();
    this.currentSync?.abort();
    this.trigger();
    return t;
  }

  private markDeleted(gracePeriodSeconds?: number): void {
    const metadata = { ...this.pod.metadata };
    const m = metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number };
    m.deletionTimestamp ??= toRFC3339(this.deps.clock.now());
    if (gracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = Math.max(0, gracePeriodSeconds);
    this.pod = { ...this.pod, metadata };
    this.deps.statusManager.setPod(this.pod);
  }

  // --- SyncPod ---

  private async syncPod(signal: AbortSignal): Promise<void> {
    const { runtime, clock } = this.deps;
    const pod = this.pod;
    const now = clock.now();
    this.startTime ??= now;

    const deadlineMs = this.activeDeadlineMs();
    if (deadlineMs !== undefined && now >= deadlineMs) {
      // activeDeadlineHandler: the pod is killed and reported Failed.
      this.deps.recorder.event(podRef(pod), 'Normal', DeadlineExceededReason, DeadlineExceededMessage);
      this.failure = { reason: DeadlineExceededReason, message: DeadlineExceededMessage };
      this.beginTermination();
      return;
    }

    if (!this.sandbox && this.waitsForHostPorts()) {
      await this.publishStatus(false);
      if (deadlineMs !== undefined) this.scheduleWake(Math.max(1, deadlineMs - clock.now()));
      return;
    }

    const { sandbox, created } = await this.ensureSandbox();
    if (signal.aborted) return;
    // As WaitForAttachAndMount on each sync: configMap, secret and downward API files follow their sources.
    if (!created) await this.deps.podRuntime?.refreshVolumes(pod);
    // Probe workers exist before any container of this sync runs, so the first status that shows a
    // container Running already sees its startup probe (as SyncPod calls AddPod first).
    this.deps.probeManager.addPod(pod);
    // A sandbox this sync just created holds no container yet: nothing to list.
    const snapshot = new RuntimePod(created ? [] : await runtime.listContainers({ podSandboxId: sandbox.id }));
    const actions = computePodActions({
      pod,
      runtimePod: snapshot,
      runtimeName: this.podRuntimeOf().name,
      liveness: this.deps.probeManager.liveness,
      startup: this.deps.probeManager.startup,
      specHash: hashContainer,
    });

    // Status as of before this sync's actions when they may take long (a postStart hook runs inside
    // the sync) or nothing was published yet: while the hook runs the container shows as Waiting.
    if (!this.deps.statusManager.getPodStatus(this.uid) || startsWithPostStart(pod, actions)) {
      await this.publishStatus(false, [...snapshot.containers], created);
    }

    const outcome = await this.applyActions(actions, snapshot, sandbox, signal);
    if (signal.aborted) return;

    // Nothing done: the snapshot is still what the runtime holds, so one listing per sync suffices.
    const acted = actions.killPod || actions.containersToKill.length + actions.initContainersToStart.length + actions.containersToStart.length > 0;
    if (acted && mayHaveInstancesToPrune(snapshot)) await this.pruneExitedInstances(sandbox.id);
    const status = await this.publishStatus(false, acted ? undefined : [...snapshot.containers]);
    if (signal.aborted) return;

    if (isTerminalPhase(status.phase)) {
      await this.stopPod(undefined);
      return;
    }

    let delay = this.jitter(this.deps.resyncIntervalMs);
    if (outcome.retryAt !== undefined) delay = Math.min(delay, Math.max(1, outcome.retryAt - clock.now()));
    if (outcome.failed) delay = Math.min(delay, this.jitter(SYNC_ERROR_BACKOFF_MS));
    if (deadlineMs !== undefined) delay = Math.min(delay, Math.max(1, deadlineMs - clock.now()));
    this.scheduleWake(delay);
  }

  /**
   * Whether another pod holds one of this pod's host ports: its containers then wait (reason
   * HostPortInUse, with the port and the pod holding it) and a Warning event says so once; the
   * worker is triggered again when the ports are released.
   */
  private waitsForHostPorts(): boolean {
    const claims = this.deps.hostPorts;
    if (!claims) return false;
    const conflict = claims.claim(this.pod, () => this.trigger());
    const containers = [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])];
    if (!conflict) {
      for (const c of containers) if (this.reasonCache.get(c.name)?.reason === HostPortInUseReason) this.reasonCache.delete(c.name);
      return false;
    }
    const message = portConflictMessage(conflict);
    const first = containers[0] && this.reasonCache.get(containers[0].name)?.message !== message;
    for (const c of containers) this.reasonCache.set(c.name, { reason: HostPortInUseReason, message });
    if (first) this.deps.recorder.event(podRef(this.pod), 'Warning', HostPortInUseReason, message);
    return true;
  }

  private async applyActions(
    actions: PodActions,
    snapshot: RuntimePod,
    sandbox: SandboxInfo,
    signal: AbortSignal,
  ): Promise<{ retryAt?: number; failed: boolean }> {
    const pod = this.pod;
    const deps = this.deps;
    if (actions.killPod) {
      await this.waitOrAbandon(this.killRunning(snapshot, undefined), signal);
      return { failed: false };
    }
    for (const k of actions.containersToKill) {
      if (signal.aborted) return { failed: false };
      await this.waitOrAbandon(
        killContainer(deps, { pod, id: k.id, name: k.name, container: k.container, message: k.message, reason: k.reason, podIP: sandbox.podIP }),
        signal,
      );
    }

    let retryAt: number | undefined;
    let failed = false;
    const record = (name: string, r: StartResult) => {
      if (r.ok) {
        this.reasonCache.delete(name);
        return;
      }
      this.reasonCache.set(name, { reason: r.reason, message: r.message });
      if (r.retryAt !== undefined) retryAt = Math.min(retryAt ?? Infinity, r.retryAt);
      else failed = true;
    };
    const start = (c: NonNullable<Pod['spec']>['containers'][number]) => startContainer(this.startDeps(), sandbox, pod, c, snapshot, signal);

    const inits = pod.spec?.initContainers ?? [];
    for (const idx of actions.initContainersToStart) {
      if (signal.aborted) return { retryAt, failed };
      const c = inits[idx]!;
      const r = await start(c);
      record(c.name, r);
      // A plain init container that did not start holds back the rest of the pod.
      if (!r.ok && c.restartPolicy !== 'Always') return { retryAt, failed };
    }
    const containers = pod.spec?.containers ?? [];
    for (const idx of actions.containersToStart) {
      if (signal.aborted) return { retryAt, failed };
      const c = containers[idx]!;
      record(c.name, await start(c));
    }
    return { retryAt, failed };
  }

  // Waits for a kill unless the sync is abandoned (termination takes over the container).
  private async waitOrAbandon(p: Promise<void>, signal: AbortSignal): Promise<void> {
    try {
      await abortable(p, signal);
    } catch (e) {
      p.catch(() => {});
      if (!signal.aborted) throw e;
    }
  }

  private startDeps(): StartDeps {
    const d = this.deps;
    return {
      runtime: d.runtime,
      clock: d.clock,
      logger: d.logger,
      recorder: d.recorder,
      backoff: d.backoff,
      lookup: d.lookup,
      hostIP: d.hostIP,
      nodeAllocatable: d.nodeAllocatable,
      podRuntime: d.podRuntime,
    };
  }

  /** The pod's sandbox; `created` (with its status) when this call created it. */
  private async ensureSandbox(): Promise<{ sandbox: SandboxInfo; created?: PodSandboxStatus }> {
    if (this.sandbox && !this.sandbox.podIP) {
      // Adopted from a listing, which carries no network: ask once.
      const st = await this.deps.runtime.podSandboxStatus(this.sandbox.id);
      this.sandbox.podIP = this.podIPOf(st);
    }
    if (this.sandbox) return { sandbox: this.sandbox };
    const { runtime, rootDir } = this.deps;
    let config = podSandboxConfig(this.pod, rootDir);
    // A worker is created for a newly added pod. Whatever an earlier pod with the same UID left on
    // disk (its logs, its working directory) belongs to a pod that has since been removed, which the
    // kubelet's garbage collector would have deleted: without this, restart counts would continue
    // from the old log files.
    let id: string;
    try {
      await Promise.all([removeUnder(rootDir, config.logDirectory), removeUnder(rootDir, sandboxDir(rootDir, this.uid))]);
      if (this.deps.podRuntime) config = await this.deps.podRuntime.prepareSandbox(this.pod, config);
      const handler = this.deps.runtimeClasses?.lookupRuntimeHandler(this.pod) ?? '';
      if (handler) this.deps.logger.debug('Running pod with runtime handler', { pod: formatPod(this.pod), runtimeHandler: handler });
      id = await runtime.runPodSandbox(config, handler);
    } catch (e) {
      this.deps.recorder.event(podRef(this.pod), 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${runtimeErrorText(e)}`);
      // As the kubelet sets the status before SyncPod: Pending, each container waiting (ContainerCreating).
      await this.publishStatus(false).catch(() => undefined);
      throw e;
    }
    const status = await runtime.podSandboxStatus(id);
    this.sandbox = { id, config, dir: sandboxDir(rootDir, this.uid), podIP: this.podIPOf(status) };
    this.deps.onSandbox?.(id);
    return { sandbox: this.sandbox, created: status };
  }

  /** Removes exited instances beyond the newest two per container name. */
  private async pruneExitedInstances(sandboxId: string): Promise<void> {
    const view = new RuntimePod(await this.deps.runtime.listContainers({ podSandboxId: sandboxId }));
    for (const name of view.names()) {
      const old = view
        .instances(name)
        .slice(EXITED_INSTANCES_KEPT)
        .filter((c) => c.state === 'CONTAINER_EXITED');
      for (const c of old) {
        await this.deps.runtime.removeContainer(c.id).catch((e) => {
          this.deps.logger.warn('Failed to remove an old container instance', { pod: formatPod(this.pod), container: name, err: messageOf(e) });
        });
      }
    }
  }

  /**
   * Whether the pod shares the host's network: spec.hostNetwork, or a runtime whose pods all do (the
   * process runtime without a pod network).
   */
  private onHostNetwork(): boolean {
    return !!this.pod.spec?.hostNetwork || this.podRuntimeOf().capabilities.network === 'host';
  }

  /**
   * The pod's IP: the node's (hostIP) for a pod on the host's network, as the kubelet gives a
   * host-network pod the node's IPs; the sandbox's own otherwise.
   */
  private podIPOf(sandbox: PodSandboxStatus): string {
    return this.onHostNetwork() ? this.deps.hostIP : sandbox.network.ip;
  }

  /** The runtime the pod runs on (its RuntimeClass handler's). */
  private podRuntimeOf(): HandlerRuntime {
    return this.deps.runtimeClasses?.runtimeOf(this.pod) ?? { name: this.deps.runtime.name, capabilities: this.deps.runtime.capabilities };
  }

  private activeDeadlineMs(): number | undefined {
    const ads = this.pod.spec?.activeDeadlineSeconds;
    if (ads === undefined || ads === null || this.startTime === undefined) return undefined;
    return this.startTime + ads * 1000;
  }

  // --- status ---

  /**
   * Generates and stores the pod's status from the runtime (GetPodStatus): the sandbox's status and
   * its containers, asked for together; `listed` and `sandboxStatus` are used instead when the
   * caller has them fresh.
   */
  private async publishStatus(podIsTerminal: boolean, listed?: RuntimeContainerStatus[], sandboxStatus?: PodSandboxStatus): Promise<PodStatus> {
    const { runtime, statusManager, probeManager, clock } = this.deps;
    const id = this.sandbox?.id;
    const [listing, sandbox] = await Promise.all([
      listed ?? (id ? runtime.listContainers({ podSandboxId: id }) : []),
      sandboxStatus ?? (id ? runtime.podSandboxStatus(id).catch(() => undefined) : undefined),
    ]);
    let containers = listing;
    if (this.deps.podRuntime) containers = await this.deps.podRuntime.containerStatuses(this.pod, containers);
    const status = generateAPIPodStatus({
      pod: this.pod,
      sandbox,
      containers,
      runtimeName: this.podRuntimeOf().name,
      reasonCache: this.reasonCache,
      previous: statusManager.getPodStatus(this.uid),
      podIsTerminal,
      startTime: this.startTime !== undefined ? toRFC3339(this.startTime) : undefined,
      hostIP: this.deps.hostIP,
      onHostNetwork: this.onHostNetwork(),
      failure: this.failure,
      probeManager,
      now: clock.now(),
    });
    statusManager.setPodStatus(this.pod, status);
    return status;
  }

  // --- termination ---

  /** SyncTerminatingPod (§11.5), for a deleted pod or one past its active deadline. */
  private async syncTerminatingPod(): Promise<void> {
    const t = this.termination!;
    if (this.closed) return t.resolve();
    // A failure here is retried by the loop (as the kubelet retries SyncTerminatingPod); the
    // termination resolves only once the pod is stopped.
    await this.publishStatus(false);
    await this.stopPod(t.force.signal);
    t.resolve();
  }

  /**
   * Stops what still runs and marks the pod terminal: liveness/startup workers first, every running
   * container (sidecars after the app containers, in reverse order), the remaining workers, the
   * sandbox; then the final status with podIsTerminal.
   */
  private async stopPod(force: AbortSignal | undefined): Promise<void> {
    const { runtime, probeManager } = this.deps;
    this.wakeTimer?.cancel();
    probeManager.stopLivenessAndStartup(this.pod);
    if (this.sandbox) {
      // Verify nothing is left running; a container that ignored the first stop is stopped again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const view = new RuntimePod(await runtime.listContainers({ podSandboxId: this.sandbox.id }));
        if (view.running().length === 0) break;
        try {
          await this.killRunning(view, force);
        } catch (e) {
          this.deps.recorder.event(podRef(this.pod), 'Warning', 'FailedKillPod', `error killing pod: ${messageOf(e)}`);
        }
      }
    }
    probeManager.removePod(this.pod);
    if (this.sandbox) await runtime.stopPodSandbox(this.sandbox.id);
    this.containersStopped = true;
    await this.publishStatus(true);
    await this.deps.podRuntime?.releasePod(this.pod);
    this.terminal = true;
    this.deps.hostPorts?.release(this.uid);
    // A terminate() that arrived while the pod was finishing on its own waits on this termination.
    this.termination?.resolve();
  }

  /** killContainersWithSyncResult: every running container in parallel, sidecars ordered. */
  private async killRunning(view: RuntimePod, force: AbortSignal | undefined): Promise<void> {
    const running = view.running();
    if (running.length === 0) return;
    const pod = this.pod;
    const ordering = hasSidecars(pod)
      ? new TerminationOrdering(
          pod,
          running.map((c) => c.metadata.name),
          this.deps.clock,
        )
      : undefined;
    const results = await Promise.allSettled(
      running.map((c) =>
        killContainer(this.deps, {
          pod,
          id: c.id,
          name: c.metadata.name,
          reason: '',
          ordering,
          force,
          ...(this.gracePeriodOverride !== undefined ? { gracePeriodOverride: this.gracePeriodOverride } : {}),
          podIP: this.sandbox?.podIP ?? '',
        }),
      ),
    );
    const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => messageOf(r.reason));
    if (errors.length > 0) throw new Error(errors.join('; '));
  }

  // --- timers ---

  private scheduleWake(delayMs: number): void {
    this.wakeTimer?.cancel();
    if (this.closed || this.terminal) return;
    this.wakeTimer = this.deps.clock.setTimer(delayMs, () => this.trigger());
  }

  /** d plus up to 50 % (wait.Jitter(d, 0.5)). */
  private jitter(d: number): number {
    return d + this.deps.random() * 0.5 * d;
  }
}
