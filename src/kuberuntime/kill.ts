// Killing one container (§11.3, kuberuntime killContainer): Killing event, preStop within the grace
// period, the sidecar ordering wait, the 2 s floor, then the runtime's StopContainer. A force signal
// (a second, zero-grace termination) cuts every wait short and SIGKILLs at once.

import type { Container, Pod } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import { NotFoundError, type RuntimeService } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { containerRef, findContainer, formatPod } from './format.js';
import { MINIMUM_GRACE_PERIOD_SECONDS, terminationGracePeriodSeconds, type KillReason } from './grace.js';
import { abortable, runLifecycleHandler } from './hooks.js';
import type { TerminationOrdering } from './termination-order.js';

export interface KillDeps {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
}

export interface KillRequest {
  pod: Pod;
  /** Runtime-local container id. */
  id: string;
  name: string;
  /** The spec (looked up by name when omitted). */
  container?: Container;
  /** Killing event message; `Stopping container <name>` when empty. */
  message?: string;
  reason: KillReason;
  /** Replaces the selected grace period (before preStop), as the kubelet's gracePeriodOverride. */
  gracePeriodOverride?: number;
  ordering?: TerminationOrdering;
  /** Aborted to kill at once (SIGKILL, no more waiting for hooks or ordering). */
  force?: AbortSignal;
  podIP: string;
}

function whenAborted(signal?: AbortSignal): Promise<void> | undefined {
  if (!signal) return undefined;
  if (signal.aborted) return Promise.resolve();
  return new Promise((r) => signal.addEventListener('abort', () => r(), { once: true }));
}

/** Kills the container; "not found" counts as already stopped. Rejects only on other runtime errors. */
export async function killContainer(deps: KillDeps, req: KillRequest): Promise<void> {
  const { pod, name } = req;
  const container = req.container ?? findContainer(pod, name)?.container;
  let grace = terminationGracePeriodSeconds(pod, container, req.reason);
  deps.recorder.event(containerRef(pod, name), 'Normal', 'Killing', req.message || `Stopping container ${name}`);
  if (req.gracePeriodOverride !== undefined) grace = req.gracePeriodOverride;
  const forced = whenAborted(req.force);
  const isForced = () => req.force?.aborted === true;
  const hookAbort = new AbortController();
  const stopHook = () => hookAbort.abort();
  req.force?.addEventListener('abort', stopHook, { once: true });

  try {
    const preStop = container?.lifecycle?.preStop;
    if (preStop && grace > 0 && !isForced()) {
      const start = deps.clock.now();
      const hook = runLifecycleHandler(
        {
          runtime: deps.runtime,
          clock: deps.clock,
          recorder: deps.recorder,
          pod,
          container: container!,
          containerId: req.id,
          podIP: req.podIP,
          signal: hookAbort.signal,
        },
        preStop,
      ).then((failure) => {
        if (failure !== undefined) {
          deps.logger.warn('PreStop hook failed', { pod: formatPod(pod), container: name, error: failure });
          // The details stay out of the event so that secrets cannot leak through it.
          deps.recorder.event(containerRef(pod, name), 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
        }
      });
      let timer: { cancel(): void } | undefined;
      const expired = new Promise<void>((r) => {
        timer = deps.clock.setTimer(grace * 1000, r);
      });
      await Promise.race([hook, expired, ...(forced ? [forced] : [])]);
      timer?.cancel();
      grace -= Math.floor((deps.clock.now() - start) / 1000);
    }

    if (req.ordering && grace > 0 && !isForced()) {
      grace -= Math.floor(await req.ordering.waitForTurn(name, grace, forced));
    }

    if (grace < MINIMUM_GRACE_PERIOD_SECONDS) grace = MINIMUM_GRACE_PERIOD_SECONDS;
    if (isForced()) grace = 0;
    deps.logger.debug('Killing container with a grace period', { pod: formatPod(pod), container: name, gracePeriod: grace });
    await stopContainer(deps, req.id, grace, req.force);
  } finally {
    stopHook();
    req.force?.removeEventListener('abort', stopHook);
    req.ordering?.containerTerminated(name);
  }
}

// StopContainer(G), re-issued with 0 when a force arrives while the graceful stop is in flight.
async function stopContainer(deps: KillDeps, id: string, grace: number, force?: AbortSignal): Promise<void> {
  const ignoreNotFound = (e: unknown) => {
    if (!(e instanceof NotFoundError)) throw e;
  };
  const graceful = deps.runtime.stopContainer(id, grace).catch(ignoreNotFound);
  if (grace === 0 || !force) return graceful;
  try {
    await abortable(graceful, force);
  } catch (e) {
    if (!force.aborted) throw e;
    graceful.catch(() => {});
    await deps.runtime.stopContainer(id, 0).catch(ignoreNotFound);
  }
}
