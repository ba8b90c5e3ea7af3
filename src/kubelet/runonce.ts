// Run-once mode (§12, the kubelet's runonce.go): admit the pods in order, start the admitted ones
// together, and wait for each until it runs (or is ready, or has completed), re-checking on the
// kubelet's retry schedule (1 s doubling, 10 retries), bounded by an optional overall timeout. Beyond
// the kubelet's rule: `auto` waits for what each pod means, a pod that cannot succeed fails at once
// under every mode (the wait engine's cannotSucceed), and a progress report names the pods still
// awaited and why.

import { getMaxListeners, setMaxListeners } from 'node:events';
import type { ContainerStatus, Pod, PodStatus } from '../api/types.js';
import type { Clock, Timer } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { formatPod } from '../kuberuntime/format.js';
import type { Kubelet } from './types.js';
import { allContainersRunning, cannotSucceed, containerExit, containerExitCode, explainsWait, resolvePodMode, type WaitEvent } from './wait-engine.js';

export { allContainersRunning, cannotSucceed };

// runonce.go's constants.
export const runOnceMaxRetries = 10;
export const runOnceRetryDelayMs = 1000;
export const runOnceRetryDelayBackoff = 2;

/**
 * What each pod is waited for: its regular containers Running, its Ready condition, or a terminal
 * phase; `auto` picks one per pod (see resolveWait).
 */
export type WaitFor = 'auto' | PodWait;
export type PodWait = 'running' | 'ready' | 'completed';

/**
 * What `auto` waits for in a pod: a pod that is meant to finish (restartPolicy Never or OnFailure)
 * to completion; a pod with a readiness probe to Ready; any other to Running.
 */
export function resolveWait(pod: Pod, wait: WaitFor): PodWait {
  return resolvePodMode(pod, wait);
}

/** The pod events run-once watches for sync failures (the kubelet's event recorder). */
export interface PodEventSource {
  onEvent(
    listener: (ev: { involvedObject: { uid?: string; kind?: string; fieldPath?: string }; reason?: string; message?: string; type?: string }) => void,
  ): () => void;
}

/** Warning events of a pod-level sync failure; the same failure twice in a row fails the pod. */
const syncFailureReasons = new Set(['FailedCreatePodSandBox', 'FailedSync']);

function containerLabel(cs: ContainerStatus, init: boolean): string {
  return `${init ? 'init container' : 'container'} ${cs.name}`;
}

/** A short account of what a pod still lacks for its condition, for progress lines. */
export function pendingReason(pod: Pod, status: PodStatus | undefined, wait: PodWait): string {
  if (!status) return 'not started yet';
  const inits = status.initContainerStatuses ?? [];
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  for (const cs of inits) {
    if (sidecars.has(cs.name) ? cs.started : cs.state?.terminated?.exitCode === 0) continue;
    return `${containerLabel(cs, true)} ${describeContainer(cs)}`;
  }
  for (const cs of status.containerStatuses ?? []) {
    if (wait === 'completed' && cs.state?.terminated?.exitCode === 0) continue;
    if (wait !== 'completed' && cs.state?.running && (wait === 'running' || cs.ready)) continue;
    return `${containerLabel(cs, false)} ${describeContainer(cs)}`;
  }
  if (wait === 'ready') return `${status.phase ?? 'Pending'}, not ready`;
  return status.phase ?? 'Pending';
}

function describeContainer(cs: ContainerStatus): string {
  const st = cs.state ?? {};
  if (st.waiting) return `waiting${st.waiting.reason ? `: ${st.waiting.reason}` : ''}${st.waiting.message ? ` (${st.waiting.message})` : ''}`;
  if (st.terminated) return `terminated: exit code ${st.terminated.exitCode}`;
  if (st.running) return cs.started === false ? 'running, not started' : cs.ready ? 'running' : 'running, not ready';
  return 'not created yet';
}

export interface RunOnceOptions {
  wait: WaitFor;
  clock: Clock;
  /**
   * First delay between checks, doubling after each retry (the kubelet's runOnceRetryDelay); also
   * how long a reached condition must hold before it counts (see waitForPod).
   */
  retryDelayMs?: number;
  maxRetries?: number;
  /** Overall bound on the wait in ms; unset or 0 leaves only the retry schedule. */
  timeoutMs?: number;
  /** How the timeout is shown in messages (e.g. `30s`); defaults to milliseconds. */
  timeoutText?: string;
  logger?: Logger;
  /** Aborting it ends every wait still undecided (the pod fails with `interrupted`). */
  signal?: AbortSignal;
  /**
   * How long, under `auto`, a pod waited for running must keep the same containers running before it
   * counts (default runOnceAutoStableFactor retry delays, 5 s).
   */
  stableMs?: number;
  /** Pod events, to fail a pod whose sync keeps failing (e.g. its sandbox cannot be created). */
  events?: PodEventSource;
  /** Called every progressEveryMs while pods are awaited, with a line per awaited pod. */
  onProgress?: (lines: string[]) => void;
  progressEveryMs?: number;
  /**
   * `run --exit-code-from`: the pod whose end ends the run, waited for until it has finished (with a
   * container named, until that container has: see containerExit) whatever `wait` says; its result
   * carries the container's exit code (the first container's unless named). When its wait ends, the
   * waits of the other pods end too, each judged by what it has reached at that moment.
   */
  exitFrom?: ExitFrom;
}

export interface ExitFrom {
  pod: (pod: Pod) => boolean;
  container?: string;
}

/** `auto`'s stability window for running pods, in initial retry delays. */
export const runOnceAutoStableFactor = 5;

/** How often the progress lines come, unless told otherwise. */
export const runOnceProgressEveryMs = 5000;

export interface PodRunResult {
  pod: Pod;
  /** True when the pod reached the wait condition (or, as the kubelet counts it, finished Succeeded). */
  ok: boolean;
  /** The condition the pod was waited for (auto resolved). */
  waitedFor?: PodWait;
  /** Set when admission turned the pod away. */
  rejected?: { reason: string; message: string };
  /** Why the pod failed; absent when ok. */
  error?: string;
  /** The exit pod's (RunOnceOptions.exitFrom) container exit code, when it has one. */
  exitCode?: number;
  /**
   * The exit pod's status when its named container's end was seen: under restartPolicy Always the
   * kubelet has restarted it since, and this is the run that counted.
   */
  endStatus?: PodStatus;
}

export interface RunOnceReport {
  /** One result per input pod, in input order. */
  results: PodRunResult[];
  /** `error running pods: [<pod1> <pod2>]` when any pod failed or was rejected. */
  error?: string;
}

const notReachedText: Record<PodWait, string> = {
  running: 'containers not running',
  ready: 'not ready',
  completed: 'not completed',
};

const conditionText: Record<PodWait, string> = {
  running: 'running',
  ready: 'ready',
  completed: 'completed',
};

function readyConditionTrue(status: PodStatus): boolean {
  return (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * A terminal pod decides at once: Succeeded counts as done whatever is waited for, as the kubelet's
 * runPod ends its loop on a terminal pod; Failed is a failure.
 */
export function decideTerminal(pod: Pod, status: PodStatus | undefined): { ok: boolean; error?: string } | undefined {
  if (status?.phase === 'Failed') {
    const why = [status.reason, status.message].filter(Boolean).join(': ');
    return { ok: false, error: `pod "${formatPod(pod)}" failed${why ? `: ${why}` : ''}` };
  }
  if (status?.phase === 'Succeeded') return { ok: true };
  return undefined;
}

/**
 * When the wait condition (running or ready) holds in this status, the identity of the container
 * instances it holds for; undefined otherwise. Comparing identities tells a pod that stayed up from
 * one whose containers crashed and came back in between.
 */
export function conditionKey(pod: Pod, status: PodStatus | undefined, wait: PodWait): string | undefined {
  if (!status) return undefined;
  if (wait === 'running' && !allContainersRunning(pod, status)) return undefined;
  if (wait === 'ready' && !readyConditionTrue(status)) return undefined;
  if (wait === 'completed') return undefined;
  return [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]
    .map((c) => `${c.name}=${c.containerID ?? ''}/${c.restartCount ?? 0}`)
    .join(',');
}

function uidOf(kubelet: Kubelet, pod: Pod): string {
  const uid = pod.metadata?.uid;
  if (uid) return uid;
  const known = kubelet
    .pods()
    .find((p) => p.metadata?.name === pod.metadata?.name && (p.metadata?.namespace ?? 'default') === (pod.metadata?.namespace ?? 'default'));
  return known?.metadata?.uid ?? '';
}

/** How one pod's wait may end besides its condition: as the exit pod, or cut short when the exit pod's ends. */
interface PodWaitEnds {
  /** This is the exit pod: the container whose exit code its result carries (named: whose end ends the wait). */
  exitContainer?: { name: string; named: boolean };
  /** Aborted when the exit pod's wait has ended; `by` names it in the result. */
  cut?: { signal: AbortSignal; by: string };
}

/**
 * Waits for one started pod.
 *
 * The kubelet only looks at its retry points (0, d, 3d, 7d, … after maxRetries retries it gives
 * up), so a container must be up when it looks, at least d after the start. Here status updates are
 * followed too, to answer as soon as possible: once the condition holds, it must still hold for the
 * same container instances one initial retry delay d later (the "settle" check), so a crash-looping
 * container caught in one of its short runs is not taken for a running one. The retry schedule still
 * bounds the wait where the kubelet would give up, and --timeout bounds it overall. Terminal phases
 * decide at once.
 */
function waitForPod(kubelet: Kubelet, pod: Pod, uid: string, opts: RunOnceOptions, wait: PodWait, ends: PodWaitEnds = {}): Promise<PodRunResult> {
  const clock = opts.clock;
  // Under `auto`, a pod judged by its containers running must keep them up for a while (a crash
  // after a second or two is the commonest failure); the explicit modes keep the kubelet's one delay.
  const settleMs =
    opts.wait === 'auto' && wait === 'running'
      ? (opts.stableMs ?? runOnceAutoStableFactor * (opts.retryDelayMs ?? runOnceRetryDelayMs))
      : (opts.retryDelayMs ?? runOnceRetryDelayMs);
  const maxRetries = opts.wait === 'auto' && wait === 'completed' && opts.timeoutMs ? Infinity : (opts.maxRetries ?? runOnceMaxRetries);
  let lastSyncFailure: string | undefined;
  const pullFailures: WaitEvent[] = [];
  let delay = opts.retryDelayMs ?? runOnceRetryDelayMs;
  let retries = 0;
  let retriesExhausted = false;
  let retryTimer: Timer | undefined;
  let deadlineTimer: Timer | undefined;
  let settleTimer: Timer | undefined;
  let settleKey: string | undefined;
  let settled = false;
  let exitSeen: { code: number; status: PodStatus } | undefined;
  const timeoutError = () => `timeout error: pod "${formatPod(pod)}" ${notReachedText[wait]} after ${retries} retries`;

  return new Promise<PodRunResult>((resolve) => {
    const onAbort = () => {
      observe(kubelet.getPodStatus(uid));
      finish({ ok: false, error: `interrupted while waiting for pod "${formatPod(pod)}" to be ${conditionText[wait]}` });
    };
    // The exit pod ended the run: what this pod has reached is its result.
    const onCut = () => {
      const status = kubelet.getPodStatus(uid);
      // Holding its condition (in the settle check) counts; a status observe decides on is its result.
      if (observe(status)) finish({ ok: true });
      else finish({ ok: false, error: `${pendingReason(pod, status, wait)} when ${ends.cut?.by ?? 'the run'} ended` });
    };
    // Every mode fails a pod that cannot succeed at once, as the wait engine decides for every other
    // command (`up -d --wait`, `apply --wait`, `podvisor wait`); a pod meant to finish is awaited until the timeout.
    const unwatchEvents = opts.events?.onEvent((ev) => {
      if (settled || ev.involvedObject.uid !== uid || ev.type !== 'Warning') return;
      // Pull failures tell cannotSucceed why an image is in back-off.
      if (ev.reason === 'Failed' && pullFailures.push(ev) > 5) pullFailures.shift();
      if (!syncFailureReasons.has(ev.reason ?? '')) return;
      const text = `${ev.reason}: ${ev.message ?? ''}`;
      if (text === lastSyncFailure) finish({ ok: false, error: `pod "${formatPod(pod)}" cannot start: ${ev.message ?? ev.reason}` });
      lastSyncFailure = text;
    });
    const finish = (r: { ok: boolean; error?: string }) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      ends.cut?.signal.removeEventListener('abort', onCut);
      unsubscribe();
      unwatchEvents?.();
      retryTimer?.cancel();
      deadlineTimer?.cancel();
      settleTimer?.cancel();
      const exitCode = ends.exitContainer ? (exitSeen?.code ?? containerExitCode(kubelet.getPodStatus(uid), ends.exitContainer.name)) : undefined;
      resolve({ pod, waitedFor: wait, ...r, ...(exitCode !== undefined ? { exitCode } : {}), ...(exitSeen ? { endStatus: exitSeen.status } : {}) });
    };
    const settle = () => {
      settleTimer = undefined;
      const key = conditionKey(pod, kubelet.getPodStatus(uid), wait);
      if (key !== undefined && key === settleKey) return finish({ ok: true });
      settleKey = undefined;
      if (retriesExhausted) return finish({ ok: false, error: timeoutError() });
      observe(kubelet.getPodStatus(uid));
    };
    /** Looks at one status; returns true while a settle check is pending. */
    const observe = (status: PodStatus | undefined): boolean => {
      const named = ends.exitContainer?.named ? ends.exitContainer.name : undefined;
      const exited = named ? containerExit(pod, status, named) : undefined;
      if (named && exited !== undefined) {
        exitSeen = { code: exited, status: status! };
        finish(exited === 0 ? { ok: true } : { ok: false, error: `container ${named} exited with code ${exited}` });
        return false;
      }
      const terminal = decideTerminal(pod, status);
      if (terminal) {
        finish(terminal);
        return false;
      }
      const hopeless = cannotSucceed(status, pullFailures);
      if (hopeless) {
        finish({ ok: false, error: `pod "${formatPod(pod)}" cannot become ${conditionText[wait]}: ${hopeless}` });
        return false;
      }
      const key = conditionKey(pod, status, wait);
      if (key === undefined) {
        settleTimer?.cancel();
        settleTimer = undefined;
        settleKey = undefined;
        return false;
      }
      if (key !== settleKey) {
        settleTimer?.cancel();
        settleKey = key;
        settleTimer = clock.setTimer(settleMs, settle);
      }
      return true;
    };
    const unsubscribe = kubelet.onPodStatus((p, status) => {
      if (!settled && p.metadata?.uid === uid) observe(status);
    });
    const retry = () => {
      if (settled) return;
      const settling = observe(kubelet.getPodStatus(uid));
      if (settled) return;
      if (retries >= maxRetries) {
        // The condition held at the last look: its settle check has the final word.
        if (settling) retriesExhausted = true;
        else finish({ ok: false, error: timeoutError() });
        return;
      }
      retryTimer = clock.setTimer(delay, () => {
        retries++;
        delay *= runOnceRetryDelayBackoff;
        retry();
      });
    };
    if (opts.timeoutMs && opts.timeoutMs > 0) {
      deadlineTimer = clock.setTimer(opts.timeoutMs, () => {
        const shown = opts.timeoutText ?? `${opts.timeoutMs}ms`;
        finish({ ok: false, error: `timed out after ${shown} waiting for pod "${formatPod(pod)}" to be ${conditionText[wait]}` });
      });
    }
    if (opts.signal?.aborted) queueMicrotask(onAbort);
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    ends.cut?.signal.addEventListener('abort', onCut, { once: true });
    retry();
  });
}

/** §12 runOnce over the Kubelet facade; never rejects for a pod's failure (that is in the report). */
export async function runOnce(kubelet: Kubelet, pods: readonly Pod[], opts: RunOnceOptions): Promise<RunOnceReport> {
  const logger = opts.logger ?? silentLogger;
  const pending: Promise<PodRunResult>[] = [];
  const awaited = new Map<string, Awaited>();
  // Each awaited pod listens on the signal once, by design: not a leak however many pods there are.
  if (opts.signal) setMaxListeners(getMaxListeners(opts.signal) + pods.length, opts.signal);
  const exitPod = opts.exitFrom ? pods.find((p) => opts.exitFrom!.pod(p)) : undefined;
  const exitName = opts.exitFrom?.container ?? exitPod?.spec?.containers[0]?.name ?? '';
  const exitEnded = new AbortController();
  setMaxListeners(pods.length + 1, exitEnded.signal);
  const cut = {
    signal: exitEnded.signal,
    by: opts.exitFrom?.container ? `container ${exitName} of pod/${exitPod?.metadata?.name ?? ''}` : `pod/${exitPod?.metadata?.name ?? ''}`,
  };
  for (const pod of pods) {
    const admit = kubelet.admit(pod);
    if (!admit.admit) {
      const reason = admit.reason ?? 'UnknownReason';
      const message = admit.message ?? '';
      logger.warn('pod rejected', { pod: formatPod(pod), reason, message });
      kubelet.rejectPod(pod, reason, message);
      pending.push(Promise.resolve({ pod, ok: false, rejected: { reason, message }, error: `rejected: ${reason}: ${message}` }));
      continue;
    }
    // Started right away so the next pod's admission counts this one as admitted.
    kubelet.startPod(pod);
    const uid = uidOf(kubelet, pod);
    logger.info('pod started', { pod: formatPod(pod) });
    const isExitPod = pod === exitPod;
    const wait = isExitPod ? 'completed' : resolveWait(pod, opts.wait);
    awaited.set(uid, { pod, wait, ...(isExitPod && opts.exitFrom?.container ? { container: exitName } : {}) });
    const ends: PodWaitEnds = isExitPod ? { exitContainer: { name: exitName, named: !!opts.exitFrom?.container } } : exitPod ? { cut } : {};
    pending.push(
      waitForPod(kubelet, pod, uid, opts, wait, ends).then((r) => {
        awaited.delete(uid);
        if (isExitPod) exitEnded.abort();
        return r;
      }),
    );
  }
  const progress = opts.onProgress ? startProgress(kubelet, awaited, opts) : undefined;
  const results = await Promise.all(pending).finally(() => progress?.cancel());
  const failed = results.filter((r) => !r.ok).map((r) => formatPod(r.pod));
  for (const r of results) {
    if (!r.ok) logger.info('pod failed', { pod: formatPod(r.pod), error: r.error });
  }
  return failed.length ? { results, error: `error running pods: [${failed.join(' ')}]` } : { results };
}

/** A pod still awaited: its condition, and for the exit pod the container whose end it waits for. */
interface Awaited {
  pod: Pod;
  wait: PodWait;
  container?: string;
}

/** Where the container --exit-code-from names stands, for progress lines. */
function exitPendingReason(status: PodStatus | undefined, container: string): string {
  const cs = status?.containerStatuses?.find((c) => c.name === container);
  if (!cs) return status ? (status.phase ?? 'Pending') : 'not started yet';
  const t = cs.state?.terminated;
  return t ? `exited with code ${t.exitCode}, to be restarted` : describeContainer(cs);
}

/** The periodic progress report: one line per pod still awaited (at most 10, then a count). */
function startProgress(kubelet: Kubelet, awaited: Map<string, Awaited>, opts: RunOnceOptions): Timer {
  const every = opts.progressEveryMs ?? runOnceProgressEveryMs;
  const shown = 10;
  let timer: Timer;
  // The latest Warning event of each pod says why it is not there yet better than its status can.
  const lastWarning = new Map<string, string>();
  const unwatch = opts.events?.onEvent((ev) => {
    if (explainsWait(ev) && ev.involvedObject.uid) lastWarning.set(ev.involvedObject.uid, `${ev.reason ?? ''}: ${(ev.message ?? '').trim().split('\n')[0]}`);
  });
  const tick = () => {
    if (awaited.size > 0) {
      const lines = [...awaited.entries()].slice(0, shown).map(([uid, { pod, wait, container }]) => {
        const warning = lastWarning.get(uid);
        const status = kubelet.getPodStatus(uid);
        const what = container
          ? `container ${container} of pod/${pod.metadata?.name ?? ''} to finish: ${exitPendingReason(status, container)}`
          : `pod/${pod.metadata?.name ?? ''} to be ${conditionText[wait]}: ${pendingReason(pod, status, wait)}`;
        return `waiting for ${what}${warning ? ` (last warning: ${warning})` : ''}`;
      });
      if (awaited.size > shown) lines.push(`… and ${awaited.size - shown} more pods`);
      opts.onProgress!(lines);
    }
    timer = opts.clock.setTimer(every, tick);
  };
  timer = opts.clock.setTimer(every, tick);
  return {
    cancel: () => {
      timer.cancel();
      unwatch?.();
    },
  };
}
