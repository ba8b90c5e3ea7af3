// The scheduling queue (pkg/scheduler/internal/queue/scheduling_queue.go): pending pods wait in
// activeQ (highest priority first, then the longest waiting), a pod that did not fit waits in
// unschedulablePods until something that could make it fit happens (MoveAllToActiveOrBackoffQueue: a
// pod ends, the node changes), then goes back to activeQ, or to the backoff queue while its back-off
// (1 s doubled per attempt, at most 10 s) has not expired. A move asked during a pod's own scheduling
// cycle sends it to the back-off queue at once, and pods left unschedulable for 5 minutes are retried.
// Nothing is polled: timers on the injected clock end each back-off.

import type { Pod } from '../api/types.js';
import type { Clock, Timer } from '../util/clock.js';

export const DefaultPodInitialBackoffMs = 1000;
export const DefaultPodMaxBackoffMs = 10_000;
export const DefaultPodMaxInUnschedulablePodsDurationMs = 5 * 60_000;
const unschedulableFlushPeriodMs = 30_000;

/** A pod in the queue (framework.QueuedPodInfo). */
export interface QueuedPodInfo {
  pod: Pod;
  /** When it was added or last tried. */
  timestamp: number;
  /** Scheduling attempts so far. */
  attempts: number;
  initialAttemptTimestamp?: number;
  /** The scheduling cycle it was popped in. */
  cycle: number;
  /** The plugins that rejected it in its last attempt (what events it waits for). */
  unschedulablePlugins?: ReadonlySet<string>;
}

export interface SchedulingQueueOptions {
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  podMaxInUnschedulablePodsDurationMs?: number;
}

const uidOf = (p: Pod) => p.metadata?.uid ?? '';
const priorityOf = (p: Pod) => p.spec?.priority ?? 0;

export class SchedulingQueue {
  private readonly active = new Map<string, QueuedPodInfo>();
  private readonly backoff = new Map<string, { info: QueuedPodInfo; timer: Timer }>();
  private readonly unschedulablePods = new Map<string, QueuedPodInfo>();
  /** Pods popped and being scheduled. */
  private readonly inFlight = new Map<string, QueuedPodInfo>();
  private schedulingCycle = 0;
  private moveRequestCycle = -1;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly maxUnschedulableMs: number;
  private flushTimer?: Timer;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** Told whenever activeQ gains a pod. */
    private readonly onActive: () => void,
    opts: SchedulingQueueOptions = {},
  ) {
    this.initialMs = opts.podInitialBackoffMs ?? DefaultPodInitialBackoffMs;
    this.maxMs = opts.podMaxBackoffMs ?? DefaultPodMaxBackoffMs;
    this.maxUnschedulableMs = opts.podMaxInUnschedulablePodsDurationMs ?? DefaultPodMaxInUnschedulablePodsDurationMs;
  }

  /** A new pending pod: to activeQ. */
  add(pod: Pod): void {
    const uid = uidOf(pod);
    if (this.has(uid)) return this.update(pod);
    this.toActive({ pod, timestamp: this.clock.now(), attempts: 0, cycle: 0 });
  }

  /** A pending pod changed: the queued copy is replaced; an unschedulable one is tried again (its back-off kept). */
  update(pod: Pod): void {
    const uid = uidOf(pod);
    const a = this.active.get(uid) ?? this.backoff.get(uid)?.info ?? this.inFlight.get(uid);
    if (a) {
      a.pod = pod;
      return;
    }
    const u = this.unschedulablePods.get(uid);
    if (u) {
      u.pod = pod;
      this.unschedulablePods.delete(uid);
      this.requeue(u);
      return;
    }
    this.add(pod);
  }

  /** A pod deleted or bound elsewhere: out of every queue. */
  delete(uid: string): void {
    this.active.delete(uid);
    this.unschedulablePods.delete(uid);
    this.inFlight.delete(uid);
    const b = this.backoff.get(uid);
    if (b) {
      b.timer.cancel();
      this.backoff.delete(uid);
    }
  }

  has(uid: string): boolean {
    return this.active.has(uid) || this.backoff.has(uid) || this.unschedulablePods.has(uid) || this.inFlight.has(uid);
  }

  /** The next pod to schedule (PrioritySort: higher priority, then earlier timestamp), or undefined. */
  pop(): QueuedPodInfo | undefined {
    let best: QueuedPodInfo | undefined;
    for (const q of this.active.values()) {
      if (!best || priorityOf(q.pod) > priorityOf(best.pod) || (priorityOf(q.pod) === priorityOf(best.pod) && q.timestamp < best.timestamp)) best = q;
    }
    if (!best) return undefined;
    const uid = uidOf(best.pod);
    this.active.delete(uid);
    this.schedulingCycle++;
    best.attempts++;
    best.cycle = this.schedulingCycle;
    best.initialAttemptTimestamp ??= this.clock.now();
    this.inFlight.set(uid, best);
    return best;
  }

  /** The pod was bound (or dropped): it leaves the queue. */
  done(uid: string): void {
    this.inFlight.delete(uid);
  }

  /**
   * AddUnschedulableIfNotPresent: a pod that did not fit waits for an event, unless one came during
   * its own cycle, when it goes to the back-off queue at once.
   */
  addUnschedulable(info: QueuedPodInfo): void {
    const uid = uidOf(info.pod);
    if (!this.inFlight.has(uid)) return; // deleted meanwhile
    this.inFlight.delete(uid);
    info.timestamp = this.clock.now();
    if (this.moveRequestCycle >= info.cycle) this.toBackoff(info);
    else {
      this.unschedulablePods.set(uid, info);
      this.ensureFlushTimer();
    }
  }

  /**
   * MoveAllToActiveOrBackoffQueue: something that may let unschedulable pods fit happened; with
   * `interested`, only pods one of whose rejecting plugins cares about it move (the queueing hints
   * of the plugins' EventsToRegister).
   */
  moveAllToActiveOrBackoff(interested?: (plugin: string) => boolean): void {
    for (const info of [...this.unschedulablePods.values()]) {
      const plugins = info.unschedulablePlugins;
      if (interested && plugins && plugins.size > 0 && ![...plugins].some(interested)) continue;
      this.unschedulablePods.delete(uidOf(info.pod));
      this.requeue(info);
    }
    this.moveRequestCycle = this.schedulingCycle;
  }

  /** calculateBackoffDuration: the initial back-off doubled per attempt after the first, at most the maximum. */
  backoffDuration(info: QueuedPodInfo): number {
    let d = this.initialMs;
    for (let i = 1; i < info.attempts; i++) {
      d *= 2;
      if (d > this.maxMs) return this.maxMs;
    }
    return d;
  }

  /** When the pod's back-off ends. */
  backoffExpiry(info: QueuedPodInfo): number {
    return info.timestamp + this.backoffDuration(info);
  }

  /** How many pods wait, by queue (for tests and the status document). */
  counts(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulablePods.size };
  }

  close(): void {
    this.closed = true;
    for (const b of this.backoff.values()) b.timer.cancel();
    this.backoff.clear();
    this.flushTimer?.cancel();
  }

  private requeue(info: QueuedPodInfo): void {
    if (info.attempts > 0 && this.backoffExpiry(info) > this.clock.now()) this.toBackoff(info);
    else this.toActive(info);
  }

  private toActive(info: QueuedPodInfo): void {
    if (this.closed) return;
    this.active.set(uidOf(info.pod), info);
    this.onActive();
  }

  private toBackoff(info: QueuedPodInfo): void {
    if (this.closed) return;
    const uid = uidOf(info.pod);
    const wait = Math.max(0, this.backoffExpiry(info) - this.clock.now());
    const timer = this.clock.setTimer(wait, () => {
      if (this.backoff.get(uid)?.info !== info) return;
      this.backoff.delete(uid);
      this.toActive(info);
    });
    this.backoff.set(uid, { info, timer });
  }

  /** flushUnschedulablePodsLeftover: pods unschedulable for longer than the maximum are tried again. */
  private ensureFlushTimer(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = this.clock.setTimer(unschedulableFlushPeriodMs, () => {
      this.flushTimer = undefined;
      const now = this.clock.now();
      for (const info of [...this.unschedulablePods.values()]) {
        if (now - info.timestamp > this.maxUnschedulableMs) {
          this.unschedulablePods.delete(uidOf(info.pod));
          this.requeue(info);
        }
      }
      if (this.unschedulablePods.size > 0) this.ensureFlushTimer();
    });
  }
}
