// The kubelet-owned pod conditions (§10): PodReadyToStartContainers, Initialized, ContainersReady,
// Ready (with readiness gates) and PodScheduled, with the reasons and messages of the kubelet's
// status/generate.go.

import type { ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';
import type { PodSandboxStatus } from '../runtime/cri.js';
import { findStatus, hasAnyRegularContainerStarted, isRestartableInitContainer } from './phase.js';
import { goQuote } from '../util/go-format.js';

export const UnknownContainerStatuses = 'UnknownContainerStatuses';
export const PodCompleted = 'PodCompleted';
export const PodFailed = 'PodFailed';
export const ContainersNotReady = 'ContainersNotReady';
export const ContainersNotInitialized = 'ContainersNotInitialized';
export const ReadinessGatesNotReady = 'ReadinessGatesNotReady';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Condition types the kubelet regenerates on every status; any other condition is preserved. */
export const kubeletOwnedConditionTypes: ReadonlySet<string> = new Set([
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
]);

/**
 * A condition with its keys in the order the API server's JSON shows them. lastProbeTime is null and
 * lastTransitionTime empty until the transition time is assigned (see assignTransitionTimes).
 */
export function makeCondition(type: string, status: ConditionStatus, reason?: string, message?: string): PodCondition {
  const c: Record<string, unknown> = { lastProbeTime: null, lastTransitionTime: null };
  if (message) c.message = message;
  if (reason) c.reason = reason;
  c.status = status;
  c.type = type;
  return c as unknown as PodCondition;
}

/** Go's %s of a []string: `[a b]`. */
export function goStringSlice(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/** True when a sandbox exists, is ready and has networking: no new sandbox is needed. */
export function generatePodReadyToStartContainersCondition(sandbox: PodSandboxStatus | undefined): PodCondition {
  const ready = !!sandbox && sandbox.state === 'SANDBOX_READY' && sandbox.network.ip !== '';
  return makeCondition('PodReadyToStartContainers', ready ? 'True' : 'False');
}

function isInitContainerInitialized(isSidecar: boolean, s: ContainerStatus): boolean {
  return isSidecar ? s.started === true : s.ready === true;
}

/**
 * Initialized. `initStatuses`/`statuses` undefined together stand for the kubelet's nil list of
 * container statuses (no status generated yet).
 */
export function generatePodInitializedCondition(
  pod: Pod,
  initStatuses: readonly ContainerStatus[] | undefined,
  statuses: readonly ContainerStatus[] | undefined,
  phase: string,
): PodCondition {
  const spec = pod.spec!;
  const initContainers = spec.initContainers ?? [];
  if (initStatuses === undefined && statuses === undefined && initContainers.length > 0) {
    return makeCondition('Initialized', 'False', UnknownContainerStatuses);
  }
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of initContainers) {
    const s = findStatus(initStatuses, c.name);
    if (!s) {
      unknown.push(c.name);
      continue;
    }
    if (!isInitContainerInitialized(isRestartableInitContainer(c), s)) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return makeCondition('Initialized', 'True', PodCompleted);
  // A regular container that has run means the pod was initialized, even while sidecars restart.
  if (hasAnyRegularContainerStarted(spec, statuses ?? [])) return makeCondition('Initialized', 'True');
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goStringSlice(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goStringSlice(incomplete)}`);
  if (messages.length > 0) return makeCondition('Initialized', 'False', ContainersNotInitialized, messages.join(', '));
  return makeCondition('Initialized', 'True');
}

/** ContainersReady: every sidecar and every regular container has a status with ready=true. */
export function generateContainersReadyCondition(
  pod: Pod,
  initStatuses: readonly ContainerStatus[] | undefined,
  statuses: readonly ContainerStatus[] | undefined,
  phase: string,
): PodCondition {
  if (initStatuses === undefined && statuses === undefined) {
    return makeCondition('ContainersReady', 'False', UnknownContainerStatuses);
  }
  const spec = pod.spec!;
  const unknown: string[] = [];
  const unready: string[] = [];
  for (const c of spec.initContainers ?? []) {
    if (!isRestartableInitContainer(c)) continue;
    const s = findStatus(initStatuses, c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  for (const c of spec.containers) {
    const s = findStatus(statuses, c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return makeCondition('ContainersReady', 'False', PodCompleted);
  // Containers of a failed pod may still be terminating: never ready.
  if (phase === 'Failed') return makeCondition('ContainersReady', 'False', PodFailed);
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goStringSlice(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goStringSlice(unready)}`);
  if (messages.length > 0) return makeCondition('ContainersReady', 'False', ContainersNotReady, messages.join(', '));
  return makeCondition('ContainersReady', 'True');
}

/** Ready: ContainersReady and every readiness gate's condition present with status True. */
export function generatePodReadyCondition(
  pod: Pod,
  conditions: readonly PodCondition[],
  initStatuses: readonly ContainerStatus[] | undefined,
  statuses: readonly ContainerStatus[] | undefined,
  phase: string,
): PodCondition {
  const containersReady = generateContainersReadyCondition(pod, initStatuses, statuses, phase);
  if (containersReady.status !== 'True') {
    return makeCondition('Ready', containersReady.status as ConditionStatus, containersReady.reason, containersReady.message);
  }
  const messages: string[] = [];
  for (const gate of pod.spec!.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) {
      messages.push(`corresponding condition of pod readiness gate ${goQuote(gate.conditionType)} does not exist.`);
    } else if (c.status !== 'True') {
      messages.push(`the status of pod readiness gate ${goQuote(gate.conditionType)} is not "True", but ${c.status}`);
    }
  }
  if (messages.length > 0) return makeCondition('Ready', 'False', ReadinessGatesNotReady, messages.join(', '));
  return makeCondition('Ready', 'True');
}

/**
 * NeedToReconcilePodReadiness: a pod with readiness gates whose Ready condition in `current` (the
 * status last generated) no longer matches what the gate conditions of `pod.status` (the API's, where
 * other clients set them) give: its status must be generated again.
 */
export function needToReconcilePodReadiness(pod: Pod, current: PodStatus | undefined): boolean {
  if (!current || (pod.spec?.readinessGates ?? []).length === 0) return false;
  const have = current.conditions?.find((c) => c.type === 'Ready');
  if (!have) return false;
  const gates = (pod.status?.conditions ?? []).filter((c) => !kubeletOwnedConditionTypes.has(c.type));
  const want = generatePodReadyCondition(pod, gates, current.initContainerStatuses ?? [], current.containerStatuses ?? [], current.phase ?? 'Pending');
  return have.status !== want.status || (have.message ?? '') !== (want.message ?? '');
}

export function podScheduledCondition(): PodCondition {
  return makeCondition('PodScheduled', 'True');
}

/**
 * Gives each kubelet-owned condition its lastTransitionTime, as the status manager's
 * updateLastTransitionTime: the previous one when a condition of that type had the same status,
 * else `nowRFC3339`. Conditions are updated in place.
 */
export function assignTransitionTimes(conditions: PodCondition[], previous: readonly PodCondition[] | undefined, nowRFC3339: string): void {
  for (const c of conditions) {
    // Conditions owned by others (readiness gates) carry their own transition time.
    if (!kubeletOwnedConditionTypes.has(c.type) && c.type !== 'DisruptionTarget' && c.lastTransitionTime) continue;
    const old = previous?.find((p) => p.type === c.type);
    c.lastTransitionTime = old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : nowRFC3339;
  }
}
