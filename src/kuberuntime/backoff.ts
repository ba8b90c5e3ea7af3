// CrashLoopBackOff (§8.2): the kubelet's per-container flowcontrol.Backoff (no jitter) and the
// kuberuntime doBackOff check made before every container start, driven by an injected Clock.

import type { Container, Pod } from '../api/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import { formatGoDuration } from '../util/go-format.js';
import { formatPod } from './format.js';

/** initialCrashLoopBackOff */
export const INITIAL_CRASH_LOOP_BACKOFF_MS = 10_000;
/** MaxCrashLoopBackOff */
export const MAX_CRASH_LOOP_BACKOFF_MS = 300_000;

interface BackoffEntry {
  backoffMs: number;
  lastUpdate: number;
}

/**
 * Per-key exponential back-off, as client-go's flowcontrol.Backoff: an entry is "expired" when the
 * event happened more than 2×max after its last update, which resets the sequence to the initial value.
 */
export class Backoff {
  private readonly entries = new Map<string, BackoffEntry>();
  private lastGC: number;

  constructor(
    private readonly clock: Clock,
    readonly initialMs: number,
    readonly maxMs: number,
  ) {
    this.lastGC = clock.now();
  }

  /** The current back-off of key, 0 when there is none. */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Advances key: initial when absent or expired relative to eventTime, else doubled up to max. */
  next(key: string, eventTime: number): void {
    const entry = this.entries.get(key);
    if (!entry || this.hasExpired(eventTime, entry.lastUpdate)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: this.clock.now() });
    } else {
      entry.backoffMs = Math.min(entry.backoffMs * 2, this.maxMs);
      entry.lastUpdate = this.clock.now();
    }
    this.maybeGC();
  }

  /** True while now − eventTime is below key's back-off (and the entry has not expired). */
  isInBackOffSince(key: string, eventTime: number): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (this.hasExpired(eventTime, entry.lastUpdate)) return false;
    return this.clock.now() - eventTime < entry.backoffMs;
  }

  /** True while now − the key's last update is below its back-off (IsInBackOffSinceUpdate). */
  isInBackOffSinceUpdate(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    const now = this.clock.now();
    if (this.hasExpired(now, entry.lastUpdate)) return false;
    return now - entry.lastUpdate < entry.backoffMs;
  }

  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Drops entries not updated for 2×max. */
  gc(): void {
    const now = this.clock.now();
    this.lastGC = now;
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUpdate > this.maxMs * 2) this.entries.delete(key);
    }
  }

  /** Number of entries held (for tests and diagnostics). */
  size(): number {
    return this.entries.size;
  }

  private hasExpired(eventTime: number, lastUpdate: number): boolean {
    return eventTime - lastUpdate > this.maxMs * 2;
  }

  // The kubelet collects from its housekeeping loop; collecting on use at most once per max keeps
  // the map bounded without a timer of its own.
  private maybeGC(): void {
    if (this.clock.now() - this.lastGC >= this.maxMs) this.gc();
  }
}

/**
 * The kubelet's crash-loop back-off for a configured maxContainerRestartPeriod (1 s..300 s): the
 * initial value is lowered to the max when the max is below it.
 */
export function newCrashLoopBackoff(clock: Clock, maxContainerRestartPeriodSeconds?: number): Backoff {
  let maxMs = MAX_CRASH_LOOP_BACKOFF_MS;
  if (maxContainerRestartPeriodSeconds !== undefined) {
    if (!(maxContainerRestartPeriodSeconds >= 1 && maxContainerRestartPeriodSeconds <= 300)) {
      throw new RangeError(`crashLoopBackOff.maxContainerRestartPeriod must be between 1s and 300s, got ${maxContainerRestartPeriodSeconds}s`);
    }
    maxMs = maxContainerRestartPeriodSeconds * 1000;
  }
  return new Backoff(clock, Math.min(INITIAL_CRASH_LOOP_BACKOFF_MS, maxMs), maxMs);
}

/** `<podName>_<namespace>_<podUID>_<containerName>_<hex hash of container spec>` */
export function backOffKey(pod: Pod, container: Container, specHash: string): string {
  const m = pod.metadata ?? {};
  return `${m.name ?? ''}_${m.namespace ?? ''}_${m.uid ?? ''}_${container.name}_${specHash}`;
}

export interface BackOffDecision {
  inBackOff: boolean;
  /** `back-off 10s restarting failed container=<c> pod=<pod>` when in back-off. */
  message?: string;
  /** ms since epoch when the back-off ends (FinishedAt + back-off), when in back-off. */
  expiresAt?: number;
}

/**
 * kuberuntime doBackOff: checks the newest Exited instance of the container (instances are given
 * newest first); in back-off → the caller skips the start; otherwise advances the entry (only when
 * there was an exited instance) and the caller starts the container.
 */
export function doBackOff(
  pod: Pod,
  container: Container,
  instancesNewestFirst: readonly RuntimeContainerStatus[],
  backoff: Backoff,
  specHash: string,
): BackOffDecision {
  const exited = instancesNewestFirst.find((c) => c.metadata.name === container.name && c.state === 'CONTAINER_EXITED');
  if (!exited) return { inBackOff: false };
  const ts = exited.finishedAt;
  const key = backOffKey(pod, container, specHash);
  if (backoff.isInBackOffSince(key, ts)) {
    const d = backoff.get(key);
    return {
      inBackOff: true,
      message: `back-off ${formatGoDuration(d)} restarting failed container=${container.name} pod=${formatPod(pod)}`,
      expiresAt: ts + d,
    };
  }
  backoff.next(key, ts);
  return { inBackOff: false };
}
