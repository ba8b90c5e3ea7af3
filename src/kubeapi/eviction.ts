// What pods/eviction asks of the pod's PodDisruptionBudget before it deletes the pod
// (pkg/registry/core/pod/storage/eviction.go): a terminal, Pending or terminating pod is evicted
// whatever the budget (canIgnorePDB); a pod no budget selects likewise; more than one budget is an
// internal error; an unready pod is evicted without using the budget when the budget is healthy
// (IfHealthyBudget) or always (AlwaysAllow); otherwise checkAndDecrement: 429 when the budget allows
// no disruption, else disruptionsAllowed is decremented and the pod recorded in
// status.disruptedPods (not on a dry run) before the pod is deleted.

import type { Pod } from '../api/types.js';
import type { PodDisruptionBudget } from '../api/validation/policy.js';
import { selectorMatches } from '../api/label-selector.js';
import { forbiddenObject, internalError, tooManyRequests } from '../http/status.js';
import type { KubeBackend, KubeObject } from './backend.js';

/** DisruptedPods entries beyond which evictions wait for the disruption controller (MaxDisruptedPodSize). */
const maxDisruptedPods = 2000;

/** Attempts at the budget's update when it changes under the eviction (EvictionsRetry's steps). */
const evictionRetries = 5;

const violation = "Cannot evict pod as it would violate the pod's disruption budget.";

/** A pod the budget need not count: terminal, Pending, or already being deleted. */
function canIgnoreBudget(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata?.deletionTimestamp;
}

function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

function budgetViolated(cause: string) {
  return tooManyRequests(violation, 0, [{ reason: 'DisruptionBudget', message: cause }]);
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** checkAndDecrement: the budget with one disruption used, or the refusal. */
function decremented(pdb: PodDisruptionBudget, podName: string, nowMs: number): PodDisruptionBudget {
  const name = pdb.metadata?.name ?? '';
  const status = pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 };
  if ((status.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0)) {
    throw budgetViolated(`The disruption budget ${name} is still being processed by the server.`);
  }
  if (status.disruptionsAllowed < 0) throw forbiddenObject('poddisruptionbudget', 'policy', name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > maxDisruptedPods) {
    throw forbiddenObject('poddisruptionbudget', 'policy', name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (status.disruptionsAllowed === 0) {
    throw budgetViolated(`The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`);
  }
  const allowed = status.disruptionsAllowed - 1;
  let conditions = status.conditions;
  if (allowed === 0) {
    // UpdateDisruptionAllowedCondition with no disruption left.
    conditions = (conditions ?? []).map((c) =>
      c.type === 'DisruptionAllowed'
        ? { ...c, status: 'False', reason: 'InsufficientPods', lastTransitionTime: c.status === 'False' ? c.lastTransitionTime : stamp(nowMs) }
        : c,
    );
  }
  return {
    ...pdb,
    status: {
      ...status,
      disruptionsAllowed: allowed,
      disruptedPods: { ...status.disruptedPods, [podName]: stamp(nowMs) },
      ...(conditions ? { conditions } : {}),
    },
  };
}

/**
 * Answers whether the pod may be evicted now under its disruption budget: resolves when it may (the
 * budget's status written unless dryRun), throws the API server's refusal when it may not.
 */
export async function admitEviction(backend: KubeBackend, pod: Pod, opts: { dryRun: boolean; nowMs: number }): Promise<void> {
  if (canIgnoreBudget(pod)) return;
  const storage = backend.objects?.storage('PodDisruptionBudget');
  if (!storage) return;
  const ns = pod.metadata?.namespace ?? '';
  // As upstream, a budget changed under the eviction (another eviction, the controller) is read again.
  for (let attempt = 1; ; attempt++) {
    const pdbs = (storage.list().items as Array<PodDisruptionBudget & KubeObject>).filter(
      (p) => (p.metadata?.namespace ?? '') === ns && selectorMatches(p.spec?.selector, pod.metadata?.labels),
    );
    if (pdbs.length === 0) return;
    if (pdbs.length > 1) throw internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const pdb = pdbs[0]!;
    if (!isReady(pod)) {
      if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return;
      const s = pdb.status;
      if (s && s.desiredHealthy > 0 && s.currentHealthy >= s.desiredHealthy) return;
    }
    const next = decremented(pdb, pod.metadata?.name ?? '', opts.nowMs);
    if (opts.dryRun) return;
    try {
      // At the budget's resourceVersion: a concurrent write makes this one conflict.
      await storage.updateStatus!(next as KubeObject, {});
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409 || attempt >= evictionRetries) throw err;
    }
  }
}
