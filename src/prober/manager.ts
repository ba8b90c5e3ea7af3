// The probe manager, after the kubelet's prober_manager.go: one worker per (pod, container, probe
// type) for regular containers and sidecars, the three result caches, and UpdatePodStatus, which
// fills in `started` and `ready` on every generated status (§3).

import type { Registry } from 'prom-client';
import type { Container, ContainerStatus, Pod, PodStatus, ProbeType } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RuntimeService } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { createProberMetrics, noSeries, promClient, WorkerSeries, type ProberMetrics } from './metrics.js';
import { ProbeHistory } from './history.js';
import { ContainerProber, type ContainerProberOptions } from './prober.js';
import { ResultsCache } from './results.js';
import { ProbeScheduler } from './scheduler.js';
import type { PodStatusProvider, ProbeManager, Prober } from './types.js';
import { KUBELET_RESTART_GRACE_MS, ProbeWorker, probeOf, workerKey, type WorkerContext } from './worker.js';

export interface ProberManagerOptions {
  clock: Clock;
  logger: Logger;
  /** Runs exec probes (ExecSync). */
  runtime: RuntimeService;
  /** Receives Unhealthy and ProbeWarning events. */
  recorder: EventRecorder;
  /** Where workers read pod statuses and the current pod object. */
  statusProvider: PodStatusProvider;
  /** Registry for the probe metrics (the agent serves it at /metrics/probes); a new one when unset. */
  registry?: Registry;
  /**
   * Keep probe metrics (true when unset). False, with no registry given, records none and never
   * loads prom-client, for agents that serve no metrics.
   */
  metrics?: boolean;
  /** Uniform [0, 1) source for the start-up jitter; Math.random when unset. */
  random?: () => number;
  /** Kubernetes version mirrored in User-Agent `kube-probe/<major>.<minor>`; `1.35` when unset. */
  kubeVersion?: string;
  /** Replaces the built-in prober (tests fake the prober boundary, as the kubelet's own tests do). */
  prober?: Prober;
  /** Spread the tick phases of gated workers (see worker.ts); true when unset. */
  spreadPhases?: boolean;
  /** Called as each worker iteration starts, with its due and actual times (ms), to measure lateness. */
  onProbeStart?: (dueMs: number, actualMs: number) => void;
  /** Keep each worker's recent results for `podvisor probes` (true when unset). */
  keepHistory?: boolean;
  /** Where probes dial a pod's address (ContainerProberOptions.podAddress). */
  podAddress?: ContainerProberOptions['podAddress'];
}

const probeOrder: ProbeType[] = ['Startup', 'Readiness', 'Liveness'];

export class ProberManager implements ProbeManager {
  readonly liveness: ResultsCache;
  readonly readiness: ResultsCache;
  readonly startup: ResultsCache;
  /** Every worker's recent results; undefined when keepHistory is false. */
  readonly history: ProbeHistory | undefined;
  private probeMetrics: ProberMetrics | undefined;
  /** When the manager started (ms); the kubelet-restart grace point is 10 s before it. */
  readonly startMs: number;

  private readonly workers = new Map<string, ProbeWorker>();
  private readonly scheduler: ProbeScheduler;
  private readonly logger: Logger;
  private readonly statusProvider: PodStatusProvider;
  private readonly context: WorkerContext;
  private closed = false;

  constructor(opts: ProberManagerOptions) {
    this.logger = opts.logger;
    this.statusProvider = opts.statusProvider;
    this.startMs = opts.clock.now();
    this.liveness = new ResultsCache(opts.logger);
    this.readiness = new ResultsCache(opts.logger);
    this.startup = new ResultsCache(opts.logger);
    const keepMetrics = opts.registry !== undefined || opts.metrics !== false;
    if (keepMetrics) this.probeMetrics = createProberMetrics(opts.registry ?? new (promClient().Registry)());
    this.scheduler = new ProbeScheduler(opts.clock);
    this.history = opts.keepHistory === false ? undefined : new ProbeHistory();
    const prober =
      opts.prober ??
      new ContainerProber({
        runtime: opts.runtime,
        recorder: opts.recorder,
        logger: opts.logger,
        clock: opts.clock,
        kubeVersion: opts.kubeVersion ?? '1.35',
        ...(opts.podAddress ? { podAddress: opts.podAddress } : {}),
      });
    const caches: Record<ProbeType, ResultsCache> = {
      Liveness: this.liveness,
      Readiness: this.readiness,
      Startup: this.startup,
    };
    this.context = {
      clock: opts.clock,
      logger: opts.logger,
      prober,
      statusProvider: opts.statusProvider,
      scheduler: this.scheduler,
      startMs: this.startMs,
      random: opts.random ?? Math.random,
      spreadPhases: opts.spreadPhases ?? true,
      onProbeStart: opts.onProbeStart,
      ...(this.history ? { history: this.history } : {}),
      cacheFor: (t) => caches[t],
      seriesFor: (t, pod, c) =>
        !this.probeMetrics
          ? noSeries
          : new WorkerSeries(this.probeMetrics, {
              probeType: t,
              container: c.name,
              pod: pod.metadata?.name ?? '',
              namespace: pod.metadata?.namespace ?? '',
              podUid: pod.metadata?.uid ?? '',
            }),
      workerExited: (w) => {
        // Only the registered worker for the key is removed (a newer one may have replaced it).
        if (this.workers.get(w.key) === w) this.workers.delete(w.key);
      },
    };
  }

  /** The probe metrics; created on first access when the manager was made without them. */
  get metrics(): ProberMetrics {
    return (this.probeMetrics ??= createProberMetrics(new (promClient().Registry)()));
  }

  get registry(): Registry {
    return this.metrics.registry;
  }

  addPod(pod: Pod): void {
    if (this.closed) return;
    const uid = pod.metadata?.uid ?? '';
    for (const c of probedContainers(pod)) {
      for (const t of probeOrder) {
        if (!probeOf(c, t)) continue;
        const key = workerKey(uid, c.name, t);
        if (this.workers.has(key)) continue; // skip only this key (the fixed AddPod)
        const w = new ProbeWorker(this.context, t, pod, c);
        this.workers.set(key, w);
        w.start();
      }
    }
  }

  stopLivenessAndStartup(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    for (const c of pod.spec?.containers ?? []) {
      for (const t of ['Liveness', 'Startup'] as const) this.workers.get(workerKey(uid, c.name, t))?.stop();
    }
  }

  removePod(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    for (const c of probedContainers(pod)) {
      for (const t of ['Readiness', 'Liveness', 'Startup'] as const) this.workers.get(workerKey(uid, c.name, t))?.stop();
    }
    this.history?.podRemoved(uid);
  }

  cleanupPods(desired: Set<string>): void {
    for (const w of [...this.workers.values()]) {
      if (desired.has(w.podUid)) continue;
      w.stop();
      this.history?.podRemoved(w.podUid);
    }
  }

  updatePodStatus(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    const statuses = status.containerStatuses ?? [];
    for (const c of statuses) {
      const started = this.isContainerStarted(uid, c);
      c.started = started;
      if (!started) continue;
      const spec = pod.spec?.containers.find((s) => s.name === c.name);
      c.ready = this.computeReady(pod, c, spec);
    }

    const initStatuses = status.initContainerStatuses ?? [];
    const initSpecs = pod.spec?.initContainers ?? [];
    for (let i = 0; i < initStatuses.length; i++) {
      const c = initStatuses[i]!;
      const started = this.isContainerStarted(uid, c);
      c.started = started;
      const spec = initSpecs[i];
      if (!spec || spec.name !== c.name) {
        this.logger.debug('mismatch between pod spec and status', { pod: pod.metadata?.name, container: c.name });
        continue;
      }
      if (spec.restartPolicy !== 'Always') {
        if (c.state?.terminated && c.state.terminated.exitCode === 0) c.ready = true;
        continue;
      }
      if (!started) continue;
      c.ready = this.computeReady(pod, c, spec);
    }
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.workers.values()]) w.stop();
    this.scheduler.close();
  }

  /** Number of live workers. */
  workerCount(): number {
    return this.workers.size;
  }

  /** The live worker for a key, if any. */
  getWorker(podUid: string, containerName: string, probeType: ProbeType): ProbeWorker | undefined {
    return this.workers.get(workerKey(podUid, containerName, probeType));
  }

  /**
   * A worker bound to this manager but neither registered nor started, so a test can drive
   * doProbe by hand as the kubelet's worker tests do.
   */
  newWorker(probeType: ProbeType, pod: Pod, container: Container): ProbeWorker {
    return new ProbeWorker(this.context, probeType, pod, container);
  }

  private isContainerStarted(uid: string, c: ContainerStatus): boolean {
    if (!c.state?.running) return false;
    const result = c.containerID ? this.startup.get(c.containerID) : undefined;
    if (result !== undefined) return result === 'Success';
    if (c.started === true) return true;
    // A startup probe that has not published yet: not started. No startup probe: started.
    return !this.workers.has(workerKey(uid, c.name, 'Startup'));
  }

  private computeReady(pod: Pod, c: ContainerStatus, spec: Container | undefined): boolean {
    if (!c.state?.running) return false;
    if (c.containerID && this.readiness.get(c.containerID) === 'Success') return true;
    const uid = pod.metadata?.uid ?? '';
    const w = this.workers.get(workerKey(uid, c.name, 'Readiness'));
    let ready = !w; // no readiness probe: ready
    if (w && !w.trigger()) this.logger.debug('Failed to trigger a manual run', { probe: 'Readiness', pod: pod.metadata?.name, container: c.name });
    if (spec) ready = this.readyOnKubeletRestart(ready, pod, c, spec);
    return ready;
  }

  /** §3.5: no readiness flap for containers that were running before the manager started. */
  private readyOnKubeletRestart(ready: boolean, pod: Pod, c: ContainerStatus, spec: Container): boolean {
    const startedAt = c.state?.running?.startedAt ? Date.parse(c.state.running.startedAt) : NaN;
    if (Number.isNaN(startedAt) || startedAt >= this.startMs - KUBELET_RESTART_GRACE_MS) return ready;
    if (!ready && (!c.containerID || this.readiness.get(c.containerID) === undefined)) ready = true;
    if (spec.readinessProbe) {
      // The pod's current Ready condition: the pod object's status, else the stored status.
      const conditions = pod.status?.conditions ?? this.statusProvider.getPodStatus(pod.metadata?.uid ?? '')?.conditions ?? [];
      if (!conditions.some((cond) => cond.type === 'Ready' && cond.status === 'True')) ready = false;
    }
    return ready;
  }
}

/** Regular containers, then sidecars (restartable init containers), in spec order. */
function probedContainers(pod: Pod): Container[] {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  return [...(pod.spec?.containers ?? []), ...sidecars];
}
