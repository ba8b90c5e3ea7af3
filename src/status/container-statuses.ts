// convertToAPIContainerStatuses (§8.3): the runtime's instances of each container, the previous
// status and the reason cache turned into v1 ContainerStatuses, as kubelet_pods.go assembles them;
// plus ShouldContainerBeRestarted (§8.1), which decides both restarts and which waiting reason shows.

import type { Container, ContainerState, ContainerStatus, Pod } from '../api/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../runtime/cri.js';
import type { StartFailure } from './reason-cache.js';
import { isRestartableInitContainer } from './phase.js';
import { toAPITime } from './time.js';

export const ContainerCreating = 'ContainerCreating';
export const PodInitializing = 'PodInitializing';
export const ContainerReasonStatusUnknown = 'ContainerStatusUnknown';

/**
 * §8.1 ShouldContainerBeRestarted for a container that is not running. `latestInstance` is the newest
 * runtime instance of that container name (undefined when it never ran or was garbage-collected).
 * A sidecar is restarted whatever the pod's restartPolicy, so it is judged with policy Always.
 */
export function shouldContainerBeRestarted(container: Container, pod: Pod, latestInstance: RuntimeContainerStatus | undefined, isSidecar: boolean): boolean {
  void container;
  if (pod.metadata?.deletionTimestamp) return false;
  if (!latestInstance) return true;
  if (latestInstance.state === 'CONTAINER_RUNNING') return false;
  if (latestInstance.state === 'CONTAINER_UNKNOWN' || latestInstance.state === 'CONTAINER_CREATED') return true;
  const policy = isSidecar ? 'Always' : (pod.spec?.restartPolicy ?? 'Always');
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && latestInstance.exitCode === 0) return false;
  return true;
}

/** Newest first, by creation time then attempt (the kubelet sorts its runtime statuses this way). */
export function compareNewestFirst(a: RuntimeContainerStatus, b: RuntimeContainerStatus): number {
  return b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt;
}

/** The newest runtime instance of each container name. */
export function latestInstances(instances: readonly RuntimeContainerStatus[]): Map<string, RuntimeContainerStatus> {
  const latest = new Map<string, RuntimeContainerStatus>();
  for (const c of instances) {
    const cur = latest.get(c.metadata.name);
    if (!cur || compareNewestFirst(c, cur) < 0) latest.set(c.metadata.name, c);
  }
  return latest;
}

export interface ConvertContainerStatusesInput {
  pod: Pod;
  /** The spec list being converted: spec.containers or spec.initContainers. */
  containers: readonly Container[];
  isInitContainer: boolean;
  /** Every runtime instance of the pod's containers, any order. */
  instances: readonly RuntimeContainerStatus[];
  /** The same instances sorted by compareNewestFirst (lets callers sort once for both lists). */
  sortedInstances?: readonly RuntimeContainerStatus[];
  /** Newest instance per name (lets callers compute it once for both lists). */
  latest?: ReadonlyMap<string, RuntimeContainerStatus>;
  /** The previously generated statuses of the same list. */
  previous: readonly ContainerStatus[] | undefined;
  runtimeName: string;
  reasonCache: ReadonlyMap<string, StartFailure>;
}

// The working form of a status; turned into the API's key order at the end.
interface Draft {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  started: boolean;
  restartCount: number;
}

function draftFromStatus(s: ContainerStatus): Draft {
  const d: Draft = {
    name: s.name,
    image: s.image,
    imageID: s.imageID ?? '',
    state: s.state ?? {},
    lastState: s.lastState ?? {},
    ready: s.ready,
    started: s.started ?? false,
    restartCount: s.restartCount,
  };
  if (s.containerID) d.containerID = s.containerID;
  return d;
}

function terminatedState(fields: {
  containerID?: string;
  exitCode: number;
  finishedAt: string | null;
  message?: string;
  reason?: string;
  startedAt: string | null;
}): ContainerState {
  const t: Record<string, unknown> = {};
  if (fields.containerID) t.containerID = fields.containerID;
  t.exitCode = fields.exitCode;
  t.finishedAt = fields.finishedAt;
  if (fields.message) t.message = fields.message;
  if (fields.reason) t.reason = fields.reason;
  t.startedAt = fields.startedAt;
  return { terminated: t as unknown as NonNullable<ContainerState['terminated']> };
}

function waitingState(reason?: string, message?: string): ContainerState {
  const w: { message?: string; reason?: string } = {};
  if (message) w.message = message;
  if (reason) w.reason = reason;
  return { waiting: w };
}

function convertInstance(cs: RuntimeContainerStatus, image: string, old: ContainerStatus | undefined, runtimeName: string): Draft {
  const cid = `${runtimeName}://${cs.id}`;
  const d: Draft = {
    name: cs.metadata.name,
    image,
    imageID: cs.imageRef,
    containerID: cid,
    state: {},
    lastState: {},
    ready: false,
    started: false,
    restartCount: cs.metadata.attempt,
  };
  switch (cs.state) {
    case 'CONTAINER_RUNNING':
      d.state = { running: { startedAt: toAPITime(cs.startedAt) as string } };
      break;
    case 'CONTAINER_CREATED':
      // created but not running: waiting to be running
      d.state = waitingState();
      break;
    case 'CONTAINER_EXITED':
      d.state = terminatedState({
        containerID: cid,
        exitCode: cs.exitCode,
        finishedAt: toAPITime(cs.finishedAt),
        message: cs.message,
        reason: cs.reason,
        startedAt: toAPITime(cs.startedAt),
      });
      break;
    default:
      if (cs.state === 'CONTAINER_UNKNOWN' && old?.state?.running) {
        // It ran and is gone: report a termination rather than "never ran", so a run-once pod is
        // not run twice.
        d.state = terminatedState({
          exitCode: 137,
          finishedAt: null,
          message: 'The container could not be located when the pod was terminated',
          reason: ContainerReasonStatusUnknown,
          startedAt: null,
        });
        d.restartCount = old.restartCount + 1;
      } else {
        d.state = waitingState();
      }
  }
  return d;
}

/** The draft in the key order of the API server's JSON. */
function finish(d: Draft): ContainerStatus {
  const s: Record<string, unknown> = {};
  if (d.containerID) s.containerID = d.containerID;
  s.image = d.image;
  s.imageID = d.imageID;
  s.lastState = d.lastState;
  s.name = d.name;
  s.ready = d.ready;
  s.restartCount = d.restartCount;
  s.started = d.started;
  s.state = d.state;
  return s as unknown as ContainerStatus;
}

function hasAnyRegularContainerCreated(pod: Pod, latest: ReadonlyMap<string, RuntimeContainerStatus>): boolean {
  for (const c of pod.spec!.containers) {
    const s = latest.get(c.name);
    if (s && (s.state === 'CONTAINER_CREATED' || s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_EXITED')) return true;
  }
  return false;
}

/**
 * The v1 statuses of one container list. `ready` and `started` come out false (started carried over
 * from the previous status while the same instance runs); the prober's updatePodStatus sets them.
 * Init container statuses keep the spec order; regular ones are sorted by name, as the kubelet sorts.
 */
export function convertToAPIContainerStatuses(input: ConvertContainerStatusesInput): ContainerStatus[] {
  const { pod, containers, isInitContainer, previous, runtimeName, reasonCache } = input;
  const hasInitContainers = (pod.spec!.initContainers?.length ?? 0) > 0;
  const sorted = input.sortedInstances ?? [...input.instances].sort(compareNewestFirst);
  const latest = input.latest ?? latestInstances(input.instances);

  const oldStatuses = new Map<string, ContainerStatus>();
  for (const s of previous ?? []) oldStatuses.set(s.name, s);

  const defaultReason = hasInitContainers ? PodInitializing : ContainerCreating;
  const specImage = new Map<string, string>();
  const drafts = new Map<string, Draft>();
  for (const c of containers) {
    specImage.set(c.name, c.image ?? '');
    let d: Draft = {
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      state: waitingState(defaultReason),
      lastState: {},
      ready: false,
      started: false,
      restartCount: 0,
    };
    const old = oldStatuses.get(c.name);
    if (old) {
      // An old termination stays valid even when the runtime has forgotten the container.
      if (old.state?.terminated) d = draftFromStatus(old);
      else {
        d.restartCount = old.restartCount;
        d.lastState = old.lastState ?? {};
      }
    }
    drafts.set(c.name, d);
  }

  // A container last seen Running that the runtime no longer lists: show that it terminated, so
  // the pod does not fall back to Pending.
  for (const c of containers) {
    if (latest.has(c.name)) continue;
    const old = oldStatuses.get(c.name);
    if (!old || old.state?.terminated || !old.state?.running) continue;
    const d = drafts.get(c.name)!;
    if (d.state.waiting?.reason !== defaultReason) continue;
    if (d.lastState.terminated) continue;
    d.lastState = terminatedState({
      exitCode: 137,
      finishedAt: null,
      message: 'The container could not be located when the pod was deleted.  The container used to be Running',
      reason: ContainerReasonStatusUnknown,
      startedAt: null,
    });
    if (!pod.metadata?.deletionTimestamp) d.restartCount += 1;
  }

  // The newest instance gives state, the second newest lastState.
  const seen = new Map<string, number>();
  for (const cs of sorted) {
    const name = cs.metadata.name;
    const current = drafts.get(name);
    if (!current) continue;
    const n = seen.get(name) ?? 0;
    if (n >= 2) continue;
    const old = oldStatuses.get(name);
    const d = convertInstance(cs, specImage.get(name)!, old, runtimeName);
    if (cs.state === 'CONTAINER_RUNNING' && old?.started !== undefined) d.started = old.started;
    if (n === 0) drafts.set(name, d);
    else current.lastState = d.state;
    seen.set(name, n + 1);
  }

  // Containers that failed to start and will be restarted show the cached failure as Waiting.
  for (const c of containers) {
    const sidecar = isInitContainer && isRestartableInitContainer(c);
    const s = latest.get(c.name);
    if (isInitContainer) {
      // an init container that exited 0 is not restarted
      if (s && s.state === 'CONTAINER_EXITED' && s.exitCode === 0) continue;
      const d = drafts.get(c.name)!;
      if (!s && !sidecar && d.state.waiting && hasAnyRegularContainerCreated(pod, latest)) {
        d.state = terminatedState({
          exitCode: 0,
          finishedAt: null,
          message: 'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally',
          reason: 'Completed',
          startedAt: null,
        });
        continue;
      }
    }
    if (!shouldContainerBeRestarted(c, pod, s, sidecar)) continue;
    const failure = reasonCache.get(c.name);
    if (!failure) continue;
    const d = drafts.get(c.name)!;
    if (d.state.terminated) d.lastState = d.state;
    d.state = waitingState(failure.reason, failure.message);
  }

  const out: ContainerStatus[] = [];
  if (isInitContainer) {
    for (const c of containers) out.push(finish(drafts.get(c.name)!));
  } else {
    const names = [...drafts.keys()].sort();
    for (const n of names) out.push(finish(drafts.get(n)!));
  }
  return out;
}
