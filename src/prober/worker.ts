// One probe worker per (pod, container, probe type), after the kubelet's worker.go: the run loop of
// §4.2 on the shared scheduler, and doProbe, one iteration of §4.3, step by step.
//
// Timing is the kubelet's ticker: first iteration at worker start (+ jitter in [0, period) when the
// manager started less than a period ago), then every period; a manual trigger runs at once and
// re-bases the ticker; an iteration that outlasts its period is followed by one buffered tick.
// Phase spreading (default on), so that workers created together do not tick in lockstep for ever:
// each worker has a stable phase from a hash of its key, and after an iteration that executed no
// probe (gated: no status, not running, on hold, initial delay, not started) its next tick moves to
// that phase, never more than a period away. Executed probes stay exactly a period apart and triggers
// re-base exactly, so what a user can observe keeps §4.2's rules; only when a gated worker notices
// that it may probe is spread. Manual triggers re-base the ticker (§3.4), and a mass start triggers
// every readiness worker within a few hundred milliseconds, which would leave them in lockstep: so
// after an ordinary (untriggered) periodic probe the ticker slews toward the worker's phase, only ever
// earlier and by at most a tenth of the period: it converges within ten periods, no interval leaves
// [0.9 P, P] (so a failure is never detected later than the kubelet would), and the period right
// after a trigger stays exact.

import type { Container, ContainerStatus, Pod, Probe, ProbeType } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { probeNames, truncateOutput, type ProbeEffect, type ProbeHistory } from './history.js';
import type { ProbeSeries } from './metrics.js';
import type { ResultsCache } from './results.js';
import type { PodStatusProvider, ProbeOutcome, ProbeResult, Prober } from './types.js';
import type { ProbeScheduler, ScheduledEntry } from './scheduler.js';

/** Containers that started more than this before the manager are treated as running across a restart (§3.5). */
export const KUBELET_RESTART_GRACE_MS = 10_000;

/** The probe fields the worker uses, with v1 defaulting applied (0 or unset → default). */
export interface ProbeSettings {
  initialDelaySeconds: number;
  timeoutSeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export function probeSettings(spec: Probe): ProbeSettings {
  return {
    initialDelaySeconds: spec.initialDelaySeconds ?? 0,
    timeoutSeconds: spec.timeoutSeconds || 1,
    periodSeconds: spec.periodSeconds || 10,
    successThreshold: spec.successThreshold || 1,
    failureThreshold: spec.failureThreshold || 3,
  };
}

/** What a worker needs from its manager. */
export interface WorkerContext {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly prober: Prober;
  readonly statusProvider: PodStatusProvider;
  readonly scheduler: ProbeScheduler;
  /** When the probe manager started (ms): drives jitter and the kubelet-restart rule. */
  readonly startMs: number;
  readonly random: () => number;
  readonly spreadPhases: boolean;
  readonly onProbeStart?: (dueMs: number, actualMs: number) => void;
  cacheFor(probeType: ProbeType): ResultsCache;
  seriesFor(probeType: ProbeType, pod: Pod, container: Container): ProbeSeries;
  /** Where results are kept for `podvisor probes`; none kept when unset. */
  readonly history?: ProbeHistory;
  /** Called once when the worker loop has exited and cleaned up. */
  workerExited(worker: ProbeWorker): void;
}

const initialValues: Record<ProbeType, ProbeResult> = {
  Readiness: 'Failure',
  Liveness: 'Success',
  Startup: 'Unknown',
};

export function probeOf(container: Container, probeType: ProbeType): Probe | undefined {
  switch (probeType) {
    case 'Readiness':
      return container.readinessProbe;
    case 'Liveness':
      return container.livenessProbe;
    case 'Startup':
      return container.startupProbe;
  }
}

export function workerKey(podUid: string, containerName: string, probeType: ProbeType): string {
  return `${podUid}/${containerName}/${probeType}`;
}

type LoopState = 'new' | 'idle' | 'probing' | 'exited';

export class ProbeWorker implements ScheduledEntry {
  readonly key: string;
  readonly podUid: string;
  readonly spec: Probe;
  readonly settings: ProbeSettings;
  readonly initialValue: ProbeResult;
  /** True for a restartable init container (sidecar). */
  readonly isSidecar: boolean;

  /** Last container ID seen (status form); empty until one is seen. */
  containerId = '';
  /** The last probe result, for run-length counting; the zero value is Success, as in the kubelet. */
  lastResult: ProbeResult = 'Success';
  resultRun = 0;
  /** Set after a published liveness Failure or any published startup result, until a new container ID. */
  onHold = false;

  // ScheduledEntry bookkeeping.
  heapIndex = -1;
  dueMs = 0;
  seq = 0;

  private state: LoopState = 'new';
  private stopRequested = false;
  private triggerPending = false;
  private tickBaseMs = 0;
  private readonly periodMs: number;
  private readonly phaseMs: number;
  private readonly cache: ResultsCache;
  private readonly series: ProbeSeries;
  /** Whether the current iteration reached the prober (decides whether the phase may move). */
  private probedThisIteration = false;
  /** Whether the current iteration ran on a manual trigger (its following period stays exact). */
  private triggeredThisIteration = false;

  constructor(
    private readonly ctx: WorkerContext,
    readonly probeType: ProbeType,
    readonly pod: Pod,
    readonly container: Container,
  ) {
    const spec = probeOf(container, probeType);
    if (!spec) throw new Error(`container ${container.name} has no ${probeType} probe`);
    this.spec = spec;
    this.settings = probeSettings(spec);
    this.podUid = pod.metadata?.uid ?? '';
    this.key = workerKey(this.podUid, container.name, probeType);
    this.initialValue = initialValues[probeType];
    this.isSidecar = container.restartPolicy === 'Always' && (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
    this.cache = ctx.cacheFor(probeType);
    this.series = ctx.seriesFor(probeType, pod, container);
    this.periodMs = this.settings.periodSeconds * 1000;
    this.phaseMs = fnv1a(this.key) % this.periodMs;
  }

  /** Starts the loop: the first iteration runs now, or after a jitter when the manager is young (§4.2). */
  start(): void {
    if (this.state !== 'new') return;
    this.state = 'idle';
    const now = this.ctx.clock.now();
    let due = now;
    if (now - this.ctx.startMs < this.periodMs) due = now + Math.floor(this.ctx.random() * this.periodMs);
    this.tickBaseMs = due;
    this.ctx.scheduler.schedule(this, due);
  }

  /** Asks the loop to end; harmless to repeat. An idle worker exits at once, a probing one when its probe returns. */
  stop(): void {
    this.stopRequested = true;
    if (this.state === 'idle' || this.state === 'new') this.exit();
  }

  /**
   * Manual trigger (§3.4): probe at once and restart the period from now. Like the kubelet's 1-slot
   * channel, a trigger while one is pending is dropped; returns whether it was accepted.
   */
  trigger(): boolean {
    if (this.state === 'exited' || this.stopRequested) return false;
    if (this.triggerPending) return false;
    this.triggerPending = true;
    if (this.state === 'idle') this.ctx.scheduler.schedule(this, this.ctx.clock.now());
    return true;
  }

  /** True once the loop has ended and cleaned up. */
  get exited(): boolean {
    return this.state === 'exited';
  }

  /** Scheduler callback. */
  fire(dueMs: number): void {
    if (this.state !== 'idle') return;
    if (this.stopRequested) {
      this.exit();
      return;
    }
    const now = this.ctx.clock.now();
    this.triggeredThisIteration = this.triggerPending;
    if (this.triggerPending) {
      this.triggerPending = false;
      this.tickBaseMs = now;
    }
    this.ctx.onProbeStart?.(dueMs, now);
    // 'probing' for the whole iteration, so a trigger or stop from a result listener is deferred.
    this.state = 'probing';
    const keepGoing = this.doProbe();
    if (typeof keepGoing === 'boolean') {
      this.afterIteration(keepGoing, now);
      return;
    }
    keepGoing.then(
      (k) => this.afterIteration(k, now),
      () => this.afterIteration(true, now),
    );
  }

  private afterIteration(keepGoing: boolean, iterationStartMs: number): void {
    if (this.state === 'exited') return;
    this.state = 'idle';
    if (!keepGoing || this.stopRequested) {
      this.exit();
      return;
    }
    const now = this.ctx.clock.now();
    if (this.triggerPending) {
      this.ctx.scheduler.schedule(this, now);
      return;
    }
    const P = this.periodMs;
    let next: number;
    if (this.ctx.spreadPhases && !this.probedThisIteration) {
      next = this.phaseMs + (Math.floor((iterationStartMs - this.phaseMs) / P) + 1) * P;
      this.tickBaseMs = next;
    } else {
      next = this.tickBaseMs + (Math.floor((iterationStartMs - this.tickBaseMs) / P) + 1) * P;
      if (this.ctx.spreadPhases && !this.triggeredThisIteration) {
        const shift = this.slewTowardPhase();
        next += shift;
        this.tickBaseMs += shift;
      }
    }
    // A tick that passed while the probe ran was buffered: run it now (Go's ticker keeps one).
    this.ctx.scheduler.schedule(this, Math.max(next, now));
  }

  /**
   * The shift toward the worker's own phase: only ever earlier, by at most P/10, so no interval
   * between probes grows beyond the period and failure detection keeps the kubelet's bound.
   */
  private slewTowardPhase(): number {
    const P = this.periodMs;
    const behind = (((this.tickBaseMs - this.phaseMs) % P) + P) % P;
    return -Math.min(Math.floor(P / 10), behind);
  }

  private exit(): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.ctx.scheduler.cancel(this);
    if (this.containerId) this.cache.remove(this.containerId);
    this.series.remove();
    this.ctx.workerExited(this);
  }

  /**
   * One iteration (§4.3); returns whether the worker keeps going. Synchronous when no probe is run,
   * a promise when the prober is called. An error thrown inside is logged and counts as keep going.
   */
  doProbe(): boolean | Promise<boolean> {
    this.probedThisIteration = false;
    try {
      return this.doProbeSteps();
    } catch (err) {
      this.ctx.logger.error('probe iteration failed', { worker: this.key, err });
      return true;
    }
  }

  private doProbeSteps(): boolean | Promise<boolean> {
    const { clock, statusProvider } = this.ctx;
    const startMs = clock.now();
    const status = statusProvider.getPodStatus(this.podUid);
    if (!status) return true; // not synced yet, or already gone

    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;

    let c = findStatus(status.containerStatuses, this.container.name);
    if (!c || !c.containerID) {
      c = findStatus(status.initContainerStatuses, this.container.name);
      if (!c || !c.containerID) return true; // container not created yet, or deleted
    }
    const cache = this.cache;

    if (this.containerId !== c.containerID) {
      if (this.containerId) cache.remove(this.containerId);
      this.containerId = c.containerID;
      // §3.5: a container that was running well before the manager started keeps its state.
      const startedAt = parseTime(c.state?.running?.startedAt);
      const isRestart = startedAt !== undefined && startedAt < this.ctx.startMs - KUBELET_RESTART_GRACE_MS;
      if (this.isSidecar && this.probeType === 'Startup' && c.started === true) {
        cache.set(this.containerId, 'Success', this.podUid);
      }
      if (!isRestart) cache.set(this.containerId, this.initialValue, this.podUid);
      this.onHold = false; // a new container: resume probing
    }

    if (this.onHold) return true;

    const running = c.state?.running;
    if (!running) {
      cache.set(this.containerId, 'Failure', this.podUid);
      if (!c.state?.terminated) return true;
      // Stop if the container will not be restarted.
      return (this.pod.spec?.restartPolicy ?? 'Always') !== 'Never' || this.isSidecar;
    }

    // Graceful deletion, read from the current pod object: a quiet shutdown for liveness and startup.
    const current = statusProvider.getPod(this.podUid) ?? this.pod;
    if (current.metadata?.deletionTimestamp && (this.probeType === 'Liveness' || this.probeType === 'Startup')) {
      cache.set(this.containerId, 'Success', this.podUid);
      return false;
    }

    const startedAtMs = parseTime(running.startedAt);
    if (startedAtMs !== undefined && Math.trunc((clock.now() - startedAtMs) / 1000) < this.settings.initialDelaySeconds) {
      return true;
    }

    if (c.started === true) {
      // A startup worker stays alive but idle, so it works again for the next container instance.
      if (this.probeType === 'Startup') return true;
    } else if (this.probeType !== 'Startup') {
      return true; // liveness and readiness wait for the container to have started
    }

    this.probedThisIteration = true;
    const containerId = this.containerId;
    return this.ctx.prober.probe(this.probeType, this.pod, status, this.container, containerId).then(
      (outcome) => this.recordOutcome(outcome, containerId, startMs),
      (err: unknown) => {
        this.ctx.logger.error('probe iteration failed', { worker: this.key, err });
        return true;
      },
    );
  }

  private recordOutcome(outcome: ProbeOutcome, containerId: string, startMs: number): boolean {
    if (outcome.error) {
      // Prober error: the result is thrown away; the history notes it as Unknown, changing nothing.
      this.remember(outcome, 'Unknown', startMs, 0, '');
      return true;
    }
    if (this.state === 'exited') return false;
    const result = outcome.result;
    this.series.record(result, (this.ctx.clock.now() - startMs) / 1000);

    if (this.lastResult === result) {
      this.resultRun++;
    } else {
      this.lastResult = result;
      this.resultRun = 1;
    }

    if (
      (result === 'Failure' && this.resultRun < this.settings.failureThreshold) ||
      (result === 'Success' && this.resultRun < this.settings.successThreshold)
    ) {
      this.remember(outcome, result, startMs, this.resultRun, '');
      return true; // below threshold: leave the published state unchanged
    }

    if (this.ctx.history) this.remember(outcome, result, startMs, this.resultRun, this.effectOf(result, this.cache.get(containerId) !== result));
    this.cache.set(containerId, result, this.podUid);

    if ((this.probeType === 'Liveness' && result === 'Failure') || this.probeType === 'Startup') {
      // The container will be restarted (or has started): stop probing until a new container ID.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }

  /** What publishing result does: a readiness change, a start-up, a restart (liveness or start-up failure), or nothing. */
  private effectOf(result: ProbeResult, changes: boolean): ProbeEffect {
    switch (this.probeType) {
      case 'Readiness':
        if (!changes) return '';
        return result === 'Success' ? 'Ready' : 'NotReady';
      case 'Startup':
        return result === 'Success' ? 'Started' : 'Restart';
      case 'Liveness':
        return result === 'Failure' ? 'Restart' : '';
    }
  }

  /** Adds one result to the history (when one is kept). */
  private remember(outcome: ProbeOutcome, result: ProbeResult, startMs: number, streak: number, effect: ProbeEffect): void {
    const history = this.ctx.history;
    if (!history) return;
    const now = this.ctx.clock.now();
    const output = outcome.error ? outcome.error.message : (outcome.output ?? '');
    history.record(this.podUid, {
      container: this.container.name,
      probe: probeNames[this.probeType],
      time: new Date(startMs).toISOString(),
      result,
      latencyMs: Math.max(0, Math.round(now - startMs)),
      output: truncateOutput(output),
      streak,
      threshold: result === 'Success' ? this.settings.successThreshold : this.settings.failureThreshold,
      effect,
    });
  }
}

function findStatus(statuses: ContainerStatus[] | undefined, name: string): ContainerStatus | undefined {
  if (!statuses) return undefined;
  for (const s of statuses) if (s.name === name) return s;
  return undefined;
}

/** RFC 3339 time → ms, or undefined when unset/unparsable (Go's zero time). */
function parseTime(t: string | undefined): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** FNV-1a over the key: a stable, well-spread phase per worker. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
