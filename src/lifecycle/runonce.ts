// Run-once mode (§12, the kubelet's runonce.go): admit the pods in order, start the admitted ones
// together, and wait for each until it runs (or is ready, or has completed), re-checking on the
// kubelet's retry schedule (1 s doubling, 10 retries), bounded by an optional overall timeout.

import type { Pod, PodStatus } from '../api/types.js';
import type { Clock, Timer } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { formatPod } from './format.js';
import type { Kubelet } from './types.js';

// runonce.go's constants.
export const runOnceMaxRetries = 10;
export const runOnceRetryDelayMs = 1000;
export const runOnceRetryDelayBackoff = 2;

/** What each pod is waited for: its regular containers Running, its Ready condition, or a terminal phase. */
export type WaitFor = 'running' | 'ready' | 'completed';

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
}

export interface PodRunResult {
  pod: Pod;
  /** True when the pod reached the wait condition (or, as the kubelet counts it, finished Succeeded). */
  ok: boolean;
  /** Set when admission turned the pod away. */
  rejected?: { reason: string; message: string };
  /** Why the pod failed; absent when ok. */
  error?: string;
}

export interface RunOnceReport {
  /** One result per input pod, in input order. */
  results: PodRunResult[];
  /** `error running pods: [<pod1> <pod2>]` when any pod failed or was rejected. */
  error?: string;
}

const notReachedText: Record<WaitFor, string> = {
  running: 'containers not running',
  ready: 'not ready',
  completed: 'not completed',
};

const conditionText: Record<WaitFor, string> = {
  running: 'running',
  ready: 'ready',
  completed: 'completed',
};

/** True when every regular container (init containers aside) is currently Running. */
export function allContainersRunning(pod: Pod, status: PodStatus): boolean {
  const statuses = new Map((status.containerStatuses ?? []).map((s) => [s.name, s]));
  return (pod.spec?.containers ?? []).every((c) => !!statuses.get(c.name)?.state?.running);
}

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
export function conditionKey(pod: Pod, status: PodStatus | undefined, wait: WaitFor): string | undefined {
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
function waitForPod(kubelet: Kubelet, pod: Pod, uid: string, opts: RunOnceOptions): Promise<PodRunResult> {
  const clock = opts.clock;
  const maxRetries = opts.maxRetries ?? runOnceMaxRetries;
  const settleMs = opts.retryDelayMs ?? runOnceRetryDelayMs;
  let delay = settleMs;
  let retries = 0;
  let retriesExhausted = false;
  let retryTimer: Timer | undefined;
  let deadlineTimer: Timer | undefined;
  let settleTimer: Timer | undefined;
  let settleKey: string | undefined;
  let settled = false;
  const timeoutError = () => `timeout error: pod "${formatPod(pod)}" ${notReachedText[opts.wait]} after ${retries} retries`;

  return new Promise<PodRunResult>((resolve) => {
    const onAbort = () => {
      observe(kubelet.getPodStatus(uid));
      finish({ ok: false, error: `interrupted while waiting for pod "${formatPod(pod)}" to be ${conditionText[opts.wait]}` });
    };
    const finish = (r: { ok: boolean; error?: string }) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      unsubscribe();
      retryTimer?.cancel();
      deadlineTimer?.cancel();
      settleTimer?.cancel();
      resolve({ pod, ...r });
    };
    const settle = () => {
      settleTimer = undefined;
      const key = conditionKey(pod, kubelet.getPodStatus(uid), opts.wait);
      if (key !== undefined && key === settleKey) return finish({ ok: true });
      settleKey = undefined;
      if (retriesExhausted) return finish({ ok: false, error: timeoutError() });
      observe(kubelet.getPodStatus(uid));
    };
    /** Looks at one status; returns true while a settle check is pending. */
    const observe = (status: PodStatus | undefined): boolean => {
      const terminal = decideTerminal(pod, status);
      if (terminal) {
        finish(terminal);
        return false;
      }
      const key = conditionKey(pod, status, opts.wait);
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
        finish({ ok: false, error: `timed out after ${shown} waiting for pod "${formatPod(pod)}" to be ${conditionText[opts.wait]}` });
      });
    }
    if (opts.signal?.aborted) queueMicrotask(onAbort);
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    retry();
  });
}

/** §12 runOnce over the Kubelet facade; never rejects for a pod's failure (that is in the report). */
export async function runOnce(kubelet: Kubelet, pods: readonly Pod[], opts: RunOnceOptions): Promise<RunOnceReport> {
  const logger = opts.logger ?? silentLogger;
  const pending: Promise<PodRunResult>[] = [];
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
    pending.push(waitForPod(kubelet, pod, uid, opts));
  }
  const results = await Promise.all(pending);
  const failed = results.filter((r) => !r.ok).map((r) => formatPod(r.pod));
  for (const r of results) {
    if (!r.ok) logger.info('pod failed', { pod: formatPod(r.pod), error: r.error });
  }
  return failed.length ? { results, error: `error running pods: [${failed.join(' ')}]` } : { results };
}
