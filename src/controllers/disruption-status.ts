// The status a PodDisruptionBudget is given (pkg/controller/disruption/disruption.go trySync):
// the expected pod count and the healthy pods it needs (getExpectedPodCount: minAvailable as an
// integer counts the selected pods; a percentage or maxUnavailable counts the replicas of the pods'
// controllers, getExpectedScale), the pods evicted but not yet deleted (buildDisruptedPodMap, which
// forgets one after DeletionTimeout), the Ready pods (countHealthyPods), and disruptionsAllowed
// with the DisruptionAllowed condition (updatePdbStatus, UpdateDisruptionAllowedCondition). Pure:
// what it needs is passed in, the clock's time among it.

import type { Pod } from '../api/types.js';
import type { PodDisruptionBudget } from '../api/validation/policy.js';
import { intOrPercentValue } from '../api/validation/workload.js';
import { isPodReady } from './pod-control.js';

type PdbStatus = NonNullable<PodDisruptionBudget['status']>;
type Condition = NonNullable<PdbStatus['conditions']>[number];

/** How long an evicted pod counts as disrupted before the controller stops waiting for its deletion. */
export const deletionTimeoutMs = 2 * 60 * 1000;

/** A pod's controller as getExpectedScale finds it: its uid and its desired replicas. */
export interface ControllerScale {
  uid: string;
  replicas: number;
}

/** Finds the scale of a pod's controller (a Deployment through its ReplicaSet, a ReplicaSet, a StatefulSet); undefined when none. */
export type ScaleFinder = (pod: Pod) => ControllerScale | undefined;

export interface PdbComputation {
  status: PdbStatus;
  /** Selected pods without a controller (an event says so, as upstream's UnmanagedPods). */
  unmanagedPods: string[];
  /** When to look again: the earliest time a disrupted pod's entry expires. */
  recheckAtMs?: number;
}

export class ExpectedCountError extends Error {}

/** GetScaledValueFromIntOrPercent with rounding up. */
function scaledUp(value: number | string, total: number): number {
  const v = intOrPercentValue(value);
  return v.percent ? Math.ceil((v.value * total) / 100) : v.value;
}

/** getExpectedScale: the sum of the replicas of the selected pods' controllers, each counted once. */
function expectedScale(pods: readonly Pod[], findScale: ScaleFinder): { count: number; unmanaged: string[] } {
  const scales = new Map<string, number>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller);
    if (!ref) {
      unmanaged.push(pod.metadata?.name ?? '');
      continue;
    }
    if (scales.has(ref.uid)) continue;
    const found = findScale(pod);
    if (!found) throw new ExpectedCountError(`found no controllers for pod "${pod.metadata?.name ?? ''}"`);
    scales.set(found.uid, found.replicas);
  }
  let count = 0;
  for (const n of scales.values()) count += n;
  return { count, unmanaged };
}

/** getExpectedPodCount: expectedCount, desiredHealthy and the unmanaged pods. */
export function expectedPodCount(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  findScale: ScaleFinder,
): { expectedCount: number; desiredHealthy: number; unmanagedPods: string[] } {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined) {
    const { count, unmanaged } = expectedScale(pods, findScale);
    const desired = Math.max(0, count - scaledUp(spec.maxUnavailable, count));
    return { expectedCount: count, desiredHealthy: desired, unmanagedPods: unmanaged };
  }
  if (spec.minAvailable !== undefined) {
    if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanagedPods: [] };
    const { count, unmanaged } = expectedScale(pods, findScale);
    return { expectedCount: count, desiredHealthy: scaledUp(spec.minAvailable, count), unmanagedPods: unmanaged };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
}

/** buildDisruptedPodMap: the evictions still awaited (pod present, not deleted, within the timeout). */
function disruptedPodMap(pods: readonly Pod[], pdb: PodDisruptionBudget, nowMs: number): { map: Record<string, string>; recheckAtMs?: number } {
  const map: Record<string, string> = {};
  let recheckAtMs: number | undefined;
  const byName = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = byName.get(name);
    if (!pod || pod.metadata?.deletionTimestamp) continue;
    const expires = Date.parse(at) + deletionTimeoutMs;
    if (expires < nowMs) continue;
    map[name] = at;
    if (recheckAtMs === undefined || expires < recheckAtMs) recheckAtMs = expires;
  }
  return { map, ...(recheckAtMs !== undefined ? { recheckAtMs } : {}) };
}

/** countHealthyPods: Ready pods not being deleted and not awaiting an eviction. */
export function countHealthyPods(pods: readonly Pod[], disrupted: Readonly<Record<string, string>>): number {
  return pods.filter((p) => !p.metadata?.deletionTimestamp && !Object.hasOwn(disrupted, p.metadata?.name ?? '') && isPodReady(p)).length;
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * UpdateDisruptionAllowedCondition through meta.SetStatusCondition: DisruptionAllowed True with
 * SufficientPods while disruptions are allowed, False with InsufficientPods otherwise; its
 * lastTransitionTime moves only when its status does.
 */
export function withDisruptionAllowedCondition(status: PdbStatus, nowMs: number): PdbStatus {
  const allowed = (status.disruptionsAllowed ?? 0) > 0;
  const next: Condition = {
    type: 'DisruptionAllowed',
    status: allowed ? 'True' : 'False',
    reason: allowed ? 'SufficientPods' : 'InsufficientPods',
    message: '',
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    lastTransitionTime: stamp(nowMs),
  };
  const conditions = [...(status.conditions ?? [])];
  const i = conditions.findIndex((c) => c.type === 'DisruptionAllowed');
  if (i < 0) conditions.push(next);
  else conditions[i] = { ...next, lastTransitionTime: conditions[i]!.status === next.status ? conditions[i]!.lastTransitionTime : next.lastTransitionTime };
  return { ...status, conditions };
}

/** trySync and updatePdbStatus: the status of a PDB over the pods it selects. Throws ExpectedCountError as getExpectedPodCount fails. */
export function computePdbStatus(pdb: PodDisruptionBudget, pods: readonly Pod[], findScale: ScaleFinder, nowMs: number): PdbComputation {
  const { expectedCount, desiredHealthy, unmanagedPods } = expectedPodCount(pdb, pods, findScale);
  const { map, recheckAtMs } = disruptedPodMap(pods, pdb, nowMs);
  const currentHealthy = countHealthyPods(pods, map);
  let disruptionsAllowed = currentHealthy - desiredHealthy;
  if (expectedCount <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
  const status: PdbStatus = {
    ...(Object.keys(map).length ? { disruptedPods: map } : {}),
    disruptionsAllowed,
    currentHealthy,
    desiredHealthy,
    expectedPods: expectedCount,
    ...(pdb.metadata?.generation !== undefined ? { observedGeneration: pdb.metadata.generation } : {}),
    ...(pdb.status?.conditions ? { conditions: pdb.status.conditions } : {}),
  };
  return { status: withDisruptionAllowedCondition(status, nowMs), unmanagedPods, ...(recheckAtMs !== undefined ? { recheckAtMs } : {}) };
}

/** failSafe: no disruptions allowed, DisruptionAllowed False with SyncFailed and the error's text. */
export function failSafeStatus(pdb: PodDisruptionBudget, message: string, nowMs: number): PdbStatus {
  const status: PdbStatus = { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, ...pdb.status, disruptionsAllowed: 0 };
  const conditions = [...(status.conditions ?? [])].filter((c) => c.type !== 'DisruptionAllowed');
  const was = (pdb.status?.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
  conditions.push({
    type: 'DisruptionAllowed',
    status: 'False',
    reason: 'SyncFailed',
    message,
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    lastTransitionTime: was?.status === 'False' ? was.lastTransitionTime : stamp(nowMs),
  });
  return { ...status, conditions };
}
