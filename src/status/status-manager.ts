// The status manager (after the kubelet's status_manager.go): holds each pod object and its latest
// v1 PodStatus, keeps condition transition times and start time stable, never leaves a terminal
// phase, reaches one only once no container can run (mergePodStatus), and applies the prober's
// readiness/startup changes between full status generations (§7.1).

import type { ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { jsonEqual } from '../util/json-equal.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { StatusManager } from './types.js';
import { assignTransitionTimes, generateContainersReadyCondition, generatePodReadyCondition } from './conditions.js';
import { isRestartableInitContainer, isTerminalPhase } from './phase.js';
import { toRFC3339 } from './time.js';

export interface PodStatusManagerOptions {
  clock: Clock;
  logger?: Logger;
  /**
   * The kubelet's podDeletionSafety: whether the pod's worker may still have containers running
   * (it has not finished stopping the pod). A terminal phase waits until it has not. Without it,
   * every status is stored as it comes.
   */
  couldHaveRunningContainers?: (podUid: string) => boolean;
}

type Listener = (podUid: string, status: PodStatus) => void;

/**
 * checkContainerStateTransition: unless the pod restarts always, a terminated container may not
 * become non-terminated (OnFailure lets failed ones restart); sidecars always may.
 */
export function checkContainerStateTransition(old: PodStatus, next: PodStatus, pod: Pod): string | undefined {
  const spec = pod.spec!;
  const policy = spec.restartPolicy ?? 'Always';
  if (policy === 'Always') return undefined;
  const mayRestart = (s: ContainerStatus) => s.state?.terminated?.exitCode !== 0 && policy === 'OnFailure';
  for (const o of old.containerStatuses ?? []) {
    if (!o.state?.terminated || mayRestart(o)) continue;
    const n = next.containerStatuses?.find((x) => x.name === o.name);
    if (n && !n.state?.terminated) return `terminated container ${o.name} attempted illegal transition to non-terminated state`;
  }
  const init = spec.initContainers ?? [];
  for (let i = 0; i < (old.initContainerStatuses ?? []).length; i++) {
    const o = old.initContainerStatuses![i]!;
    const c = init[i];
    if (!c || c.name !== o.name) return `found mismatch between pod spec and status, container: ${o.name}`;
    if (isRestartableInitContainer(c)) continue;
    if (!o.state?.terminated || mayRestart(o)) continue;
    const n = next.initContainerStatuses?.find((x) => x.name === o.name);
    if (n && !n.state?.terminated) return `terminated init container ${o.name} attempted illegal transition to non-terminated state`;
  }
  return undefined;
}

function findByContainerID(status: PodStatus, containerId: string): { list: 'containerStatuses' | 'initContainerStatuses'; index: number } | undefined {
  const i = status.containerStatuses?.findIndex((s) => s.containerID === containerId) ?? -1;
  if (i >= 0) return { list: 'containerStatuses', index: i };
  const j = status.initContainerStatuses?.findIndex((s) => s.containerID === containerId) ?? -1;
  if (j >= 0) return { list: 'initContainerStatuses', index: j };
  return undefined;
}

/**
 * mergePodStatus's delay: a pod is never reported Succeeded or Failed (an active deadline, an
 * eviction, its containers' exits) while its containers could still run; until the pod worker has
 * stopped them the previous phase, reason and message stay.
 */
function delayTerminalPhase(before: PodStatus | undefined, next: PodStatus, couldHaveRunningContainers: boolean): void {
  if (!couldHaveRunningContainers || isTerminalPhase(before?.phase) || !isTerminalPhase(next.phase)) return;
  next.phase = before?.phase ?? 'Pending';
  if (before?.reason) next.reason = before.reason;
  else delete next.reason;
  if (before?.message) next.message = before.message;
  else delete next.message;
}

export class PodStatusManager implements StatusManager {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly couldHaveRunningContainers: (podUid: string) => boolean;
  private readonly pods = new Map<string, Pod>();
  private readonly statuses = new Map<string, PodStatus>();
  private readonly listeners = new Set<Listener>();

  constructor(opts: PodStatusManagerOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger ?? silentLogger;
    this.couldHaveRunningContainers = opts.couldHaveRunningContainers ?? (() => false);
  }

  setPod(pod: Pod): void {
    this.pods.set(pod.metadata!.uid!, pod);
  }

  /** The stored pod object itself (no copy, for speed: probes read it every tick). Do not modify it. */
  getPod(podUid: string): Pod | undefined {
    return this.pods.get(podUid);
  }

  /**
   * The stored status itself (no copy, for speed: probes read it every tick). Treat it as read-only:
   * the manager never mutates a status once stored, it replaces it.
   */
  getPodStatus(podUid: string): PodStatus | undefined {
    return this.statuses.get(podUid);
  }

  /** Stores a freshly generated status; the manager keeps a shallow copy, the caller's object is untouched. */
  setPodStatus(pod: Pod, status: PodStatus): void {
    this.setPod(pod);
    const next: PodStatus = { ...status, conditions: (status.conditions ?? []).map((c) => ({ ...c })) };
    this.updateStatusInternal(pod, next);
  }

  setContainerReadiness(podUid: string, containerId: string, ready: boolean): void {
    const pod = this.pods.get(podUid);
    const old = this.statuses.get(podUid);
    if (!pod || !old) return;
    const at = findByContainerID(old, containerId);
    if (!at) return;
    if (old[at.list]![at.index]!.ready === ready) return;

    const next = this.copyWithContainer(old, at, { ready });
    const replaceOrAppend = (c: PodCondition) => {
      const i = next.conditions!.findIndex((x) => x.type === c.type);
      if (i >= 0) next.conditions![i] = c;
      else next.conditions!.push(c);
    };
    const phase = next.phase ?? 'Pending';
    replaceOrAppend(generatePodReadyCondition(pod, next.conditions!, next.initContainerStatuses ?? [], next.containerStatuses ?? [], phase));
    replaceOrAppend(generateContainersReadyCondition(pod, next.initContainerStatuses ?? [], next.containerStatuses ?? [], phase));
    this.updateStatusInternal(pod, next);
  }

  setContainerStartup(podUid: string, containerId: string, started: boolean): void {
    const pod = this.pods.get(podUid);
    const old = this.statuses.get(podUid);
    if (!pod || !old) return;
    const at = findByContainerID(old, containerId);
    if (!at) return;
    if (old[at.list]![at.index]!.started === started) return;
    this.updateStatusInternal(pod, this.copyWithContainer(old, at, { started }));
  }

  removePod(podUid: string): void {
    this.pods.delete(podUid);
    this.statuses.delete(podUid);
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** A copy of status sharing everything but the changed container status and the conditions. */
  private copyWithContainer(
    status: PodStatus,
    at: { list: 'containerStatuses' | 'initContainerStatuses'; index: number },
    change: Partial<Pick<ContainerStatus, 'ready' | 'started'>>,
  ): PodStatus {
    const next: PodStatus = { ...status, conditions: (status.conditions ?? []).map((c) => ({ ...c })) };
    const list = [...status[at.list]!];
    list[at.index] = { ...list[at.index]!, ...change };
    next[at.list] = list;
    return next;
  }

  private updateStatusInternal(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const old = this.statuses.get(uid);
    if (old) {
      const illegal = checkContainerStateTransition(old, status, pod);
      if (illegal) {
        this.logger.error('Status update on pod aborted', { pod: pod.metadata?.name, err: illegal });
        return;
      }
      if (isTerminalPhase(old.phase) && !isTerminalPhase(status.phase)) {
        this.logger.error('Cannot transition pod from terminal phase', { pod: pod.metadata?.name, phase: old.phase, newPhase: status.phase });
        status.phase = old.phase;
      }
    }
    delayTerminalPhase(old ?? pod.status, status, this.couldHaveRunningContainers(uid));
    assignTransitionTimes(status.conditions ?? [], old?.conditions, toRFC3339(this.clock.now()));
    // The start time never changes once set.
    if (old?.startTime) status.startTime = old.startTime;
    else if (!status.startTime) status.startTime = toRFC3339(this.clock.now());

    if (old && jsonEqual(old, status)) return;
    this.statuses.set(uid, status);
    for (const l of [...this.listeners]) l(uid, status);
  }
}
