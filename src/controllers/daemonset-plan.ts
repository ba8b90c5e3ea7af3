// What a DaemonSet sync does on this one node, decided from its pods alone (pkg/controller/daemon
// daemon_controller.go podsShouldBeOnNode and update.go rollingUpdate): a pod created where one
// should run and none exists, failed and surplus pods deleted, all of them where none should run,
// and the rolling update (maxUnavailable: the old pod deleted first; maxSurge: the new pod created
// beside it, the old one deleted once the new is available). OnDelete leaves old pods alone.

import type { Pod } from '../api/types.js';
import { revisionHashLabel } from './controller-history.js';
import { podAvailability } from './pod-control.js';

export interface DaemonPlanInput {
  /** Whether the node fits the template (nodeSelector, affinity, taints). */
  shouldRun: boolean;
  /** The set's pods on this node. */
  pods: readonly Pod[];
  /** The controller-revision-hash of the current template. */
  updateHash: string;
  updateStrategy: 'RollingUpdate' | 'OnDelete';
  /** maxSurge and maxUnavailable resolved against the one node (never both 0). */
  maxSurge: number;
  maxUnavailable: number;
  minReadySeconds: number;
  now: number;
}

export interface DaemonPlan {
  create: boolean;
  delete: string[];
  /** When a pod becomes available after minReadySeconds, the sync to run then. */
  recheckInMs?: number;
}

const terminating = (p: Pod) => Boolean(p.metadata?.deletionTimestamp);
const finished = (p: Pod) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
const created = (p: Pod) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
export const isUpdated = (p: Pod, hash: string): boolean => p.metadata?.labels?.[revisionHashLabel] === hash;

/** An int-or-percent of the one node, rounded up as the DaemonSet controller does (GetScaledValueFromIntOrPercent). */
export function resolveOnOneNode(v: number | string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number') return v;
  const percent = Number(v.replace(/%$/, ''));
  return Number.isFinite(percent) ? Math.ceil(percent / 100) : fallback;
}

export function planDaemonPods(input: DaemonPlanInput): DaemonPlan {
  const plan: DaemonPlan = { create: false, delete: [] };
  const available = (p: Pod) => {
    const a = podAvailability(p, input.minReadySeconds, input.now);
    if (!a.available && a.inMs !== undefined) plan.recheckInMs = Math.min(plan.recheckInMs ?? Infinity, a.inMs);
    return p.status?.phase === 'Running' && a.available;
  };
  const live = input.pods.filter((p) => !terminating(p));
  if (!input.shouldRun) {
    plan.delete = live.map((p) => p.metadata!.name!);
    return plan;
  }
  // A pod that is being deleted still holds the node until it has stopped.
  const exists = input.pods.some((p) => !(terminating(p) && finished(p)));
  if (!exists) {
    plan.create = true;
    return plan;
  }
  const running = live.filter((p) => !finished(p)).sort((a, b) => created(a) - created(b));
  plan.delete.push(...live.filter(finished).map((p) => p.metadata!.name!));
  const surge = input.updateStrategy === 'RollingUpdate' && input.maxSurge > 0;
  if (!surge) {
    // One pod only: the oldest stays.
    plan.delete.push(...running.slice(1).map((p) => p.metadata!.name!));
  }
  if (input.updateStrategy !== 'RollingUpdate' || running.length === 0) return plan;
  const newPods = running.filter((p) => isUpdated(p, input.updateHash));
  const oldPods = running.filter((p) => !isUpdated(p, input.updateHash));
  if (oldPods.length === 0) return plan;
  const oldPod = oldPods[0]!;
  if (!surge) {
    if (running.length > 1) return plan;
    // Not available: replaced at once; available: within maxUnavailable (the node is the only one).
    if (!available(oldPod) || input.maxUnavailable >= 1) plan.delete.push(oldPod.metadata!.name!);
    return plan;
  }
  if (newPods.length === 0) {
    plan.create = true;
    return plan;
  }
  if (newPods.length === 1 && available(newPods[0]!)) plan.delete.push(...oldPods.map((p) => p.metadata!.name!));
  return plan;
}
