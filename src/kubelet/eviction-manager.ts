// The kubelet's eviction manager (pkg/kubelet/eviction/eviction_manager.go synchronize): each
// housekeeping pass observes the root dir's file system (nodefs) and the node's memory and PIDs,
// keeps DiskPressure, MemoryPressure and PIDPressure on for the pressure transition period after the
// signals recover, and under a met hard threshold — memory.available first (byEvictionPriority) —
// reclaims node-level resources where the signal has any (unused containers and their logs, for
// nodefs), then evicts one pod ranked for that resource by eviction-ranking.ts and waits for it to be
// cleaned up before the next pass.

import type { Pod } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { formatPod } from '../kuberuntime/format.js';
import { crossedSignals, thresholdMetInfo, type DiskPressureObserver } from './disk-pressure.js';
import { conditionOfSignal, crossedResourceSignals, resourceThresholdMet, type ResourcePressureObserver } from './resource-pressure.js';
import { evictionMessage, rankForEviction, resourceOfSignal, type EvictionCandidate, type PodResourceStats, type ThresholdMet } from './eviction-ranking.js';
import type { PodDiskUsage } from './pod-disk-usage.js';

/** The kubelet's evictionMonitoringPeriod. */
export const MONITORING_INTERVAL_MS = 10_000;
/** --eviction-pressure-transition-period's default. */
export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;
/** immediateEvictionGracePeriodSeconds: a hard threshold's evictions give a pod this long. */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
/** waitForPodsCleanup's podCleanupTimeout and podCleanupPollFreq. */
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
export const POD_CLEANUP_POLL_MS = 1_000;

export interface EvictionManagerOptions {
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  nodeName: string;
  /** The root dir's file system and its thresholds. */
  disk: DiskPressureObserver;
  /** The node's memory.available and pid.available signals and their thresholds (none observed when unset). */
  resources?: ResourcePressureObserver;
  /** The pods that may be evicted: admitted and not terminating. */
  activePods: () => Pod[];
  /** What a pod uses of the file system. */
  measure: (pod: Pod) => Promise<PodDiskUsage>;
  /** What a pod's containers use of memory and how many processes it runs (none measured when unset). */
  podStats?: (pod: Pod) => Promise<PodResourceStats | undefined>;
  /** Node-level reclaim tried before any eviction (unused containers and their logs). */
  reclaim: () => Promise<unknown>;
  /** killPodFunc: kills the pod with the grace period and marks it Failed, Evicted, with the message. */
  evictPod: (pod: Pod, gracePeriodSeconds: number, message: string) => Promise<void>;
  /** podCleanedUpFunc: whether an evicted pod's containers are gone and its worker finished. */
  podCleanedUp: (pod: Pod) => boolean;
  /** Whether a pod is one the eviction manager never evicts (kubelettypes.IsCriticalPod). */
  isCritical: (pod: Pod) => boolean;
  monitoringIntervalMs?: number;
}

export class EvictionManager {
  /** When each node condition was last observed (nodeConditionsLastObservedAt). */
  private readonly lastObservedAt = new Map<string, number>();
  private readonly transitionPeriodMs: number;
  private stopped = true;
  private timer?: Timer;
  private wake?: () => void;
  private running?: Promise<void>;

  constructor(private readonly opts: EvictionManagerOptions) {
    this.transitionPeriodMs = opts.disk.thresholds.pressureTransitionPeriodMs ?? DEFAULT_PRESSURE_TRANSITION_PERIOD_MS;
  }

  /**
   * The node conditions now: the signals are observed afresh (a statfs, the node's memory and tasks),
   * and each condition (MemoryPressure, DiskPressure, PIDPressure) holds while it was observed within
   * the pressure transition period (nodeConditionsObservedSince).
   */
  conditions(): string[] {
    const now = this.opts.clock.now();
    this.observed([...this.opts.disk.crossed(), ...(this.opts.resources?.crossed() ?? [])]);
    return ['MemoryPressure', 'DiskPressure', 'PIDPressure'].filter((c) => {
      const at = this.lastObservedAt.get(c);
      return at !== undefined && now - at < this.transitionPeriodMs;
    });
  }

  /** Notes the conditions of the signals crossed now. */
  private observed(signals: readonly string[]): void {
    const now = this.opts.clock.now();
    for (const s of signals) {
      const condition = conditionOfSignal[s];
      if (condition) this.lastObservedAt.set(condition, now);
    }
  }

  /** One housekeeping pass; resolves with the pod evicted, if one was. */
  async synchronize(): Promise<Pod | undefined> {
    const { disk, logger, recorder, resources } = this.opts;
    const observed = disk.observe();
    const diskCrossed = observed ? crossedSignals(observed, disk.thresholds) : [];
    const node = resources?.observe();
    const resourceCrossed = node && resources ? crossedResourceSignals(node, resources.thresholds) : [];
    this.observed([...diskCrossed, ...resourceCrossed]);
    // byEvictionPriority: memory first, then the signals with node-level reclaim (nodefs), then the others.
    const crossed = [...resourceCrossed.filter((s) => s === 'memory.available'), ...diskCrossed, ...resourceCrossed.filter((s) => s !== 'memory.available')];
    if (crossed.length === 0) return undefined;
    const signal = crossed[0]!;
    const resource = resourceOfSignal(signal);
    const onDisk = diskCrossed.includes(signal);
    logger.info('Eviction manager: attempting to reclaim', { resourceName: resource });
    recorder.event(
      { kind: 'Node', namespace: 'default', name: this.opts.nodeName, uid: this.opts.nodeName },
      'Warning',
      'EvictionThresholdMet',
      `Attempting to reclaim ${resource}`,
    );

    let met: ThresholdMet | undefined;
    if (onDisk) {
      await this.opts.reclaim().catch((e: unknown) => {
        logger.info('Eviction manager: unexpected error when attempting to reduce resource pressure', { resourceName: resource, err: String(e) });
      });
      const after = disk.observe();
      if (after && crossedSignals(after, disk.thresholds).length === 0) {
        logger.info('Eviction manager: able to reduce resource pressure without evicting pods.', { resourceName: resource });
        return undefined;
      }
      met = thresholdMetInfo((after ?? observed)!, disk.thresholds, signal);
    } else {
      // Memory and PIDs have no node-level reclaim: straight to eviction.
      met = resourceThresholdMet(node!, resources!.thresholds, signal);
    }
    logger.info('Eviction manager: must evict pod(s) to reclaim', { resourceName: resource });

    const active = this.opts.activePods();
    if (active.length === 0) {
      logger.error('Eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return undefined;
    }
    const candidates: EvictionCandidate[] = await Promise.all(
      active.map(async (pod) =>
        onDisk
          ? { pod, usage: await this.opts.measure(pod).catch(() => undefined) }
          : { pod, stats: await (this.opts.podStats?.(pod) ?? Promise.resolve(undefined)).catch(() => undefined) },
      ),
    );
    const ranked = rankForEviction(candidates, resource);
    logger.info('Eviction manager: pods ranked for eviction', { pods: ranked.map((c) => formatPod(c.pod)).join(', ') });
    // At most one pod per pass.
    for (const candidate of ranked) {
      const pod = candidate.pod;
      if (this.opts.isCritical(pod)) {
        logger.error('Eviction manager: cannot evict a critical pod', { pod: formatPod(pod) });
        continue;
      }
      const message = evictionMessage(resource, candidate, met);
      logger.info('Evicting pod', { pod: formatPod(pod), message });
      try {
        await this.opts.evictPod(pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message);
        logger.info('Eviction manager: pod is evicted successfully', { pod: formatPod(pod) });
      } catch (e) {
        logger.error('Eviction manager: pod failed to evict', { pod: formatPod(pod), err: String(e) });
      }
      return pod;
    }
    logger.info('Eviction manager: unable to evict any pods from the node');
    return undefined;
  }

  /** Starts the housekeeping passes: one every monitoring interval, or after an evicted pod is cleaned up. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Ends the passes; resolves once the current one is over. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let evicted: Pod | undefined;
      try {
        evicted = await this.synchronize();
      } catch (e) {
        this.opts.logger.error('Eviction manager: failed to synchronize', { err: String(e) });
      }
      if (evicted) await this.waitForPodCleanup(evicted);
      else await this.pause(this.opts.monitoringIntervalMs ?? MONITORING_INTERVAL_MS);
    }
  }

  /** waitForPodsCleanup: polls until the pod is cleaned up, or the timeout. */
  private async waitForPodCleanup(pod: Pod): Promise<void> {
    const deadline = this.opts.clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (!this.stopped && this.opts.clock.now() < deadline) {
      await this.pause(POD_CLEANUP_POLL_MS);
      if (this.opts.podCleanedUp(pod)) {
        this.opts.logger.info('Eviction manager: pods successfully cleaned up', { pods: formatPod(pod) });
        return;
      }
    }
    if (!this.stopped) this.opts.logger.info('Eviction manager: timed out waiting for pods to be cleaned up', { pods: formatPod(pod) });
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = this.opts.clock.setTimer(ms, resolve);
    });
  }
}
