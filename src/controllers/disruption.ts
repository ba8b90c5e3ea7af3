// The disruption controller (pkg/controller/disruption/disruption.go): keeps each
// PodDisruptionBudget's status (disruption-status.ts) over the pods its selector picks in its
// namespace, synced when the budget or one of those pods changes, and again when an eviction
// recorded in status.disruptedPods expires. A sync that cannot count the expected pods leaves the
// budget fail-safe (no disruptions allowed, DisruptionAllowed False with SyncFailed).

import type { Deployment, Pod, ReplicaSet, StatefulSet } from '../api/types.js';
import type { PodDisruptionBudget } from '../api/validation/policy.js';
import { selectorMatches } from '../api/label-selector.js';
import { canonicalJSON } from '../api/defaults.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { computePdbStatus, ExpectedCountError, failSafeStatus, type ControllerScale } from './disruption-status.js';
import { objectKey, type Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';
import { workloadRef } from './workload-events.js';

/** A PDB selects a pod of its namespace by its selector (policy/v1: an empty selector selects every pod, none selects none). */
function selects(pdb: PodDisruptionBudget, pod: Pod): boolean {
  return (pdb.metadata?.namespace ?? '') === (pod.metadata?.namespace ?? '') && selectorMatches(pdb.spec?.selector, pod.metadata?.labels);
}

export class DisruptionController {
  readonly queue: WorkQueue;
  private readonly pdbs: Informer<PodDisruptionBudget & KubeObject>;
  private readonly replicaSets: Informer<ReplicaSet & KubeObject>;
  private readonly deployments: Informer<Deployment & KubeObject>;
  private readonly statefulSets: Informer<StatefulSet & KubeObject>;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder('controllermanager');
    this.queue = ctx.workQueue('disruption', (key) => this.sync(key));
    this.pdbs = ctx.informer('PodDisruptionBudget');
    this.replicaSets = ctx.informer('ReplicaSet');
    this.deployments = ctx.informer('Deployment');
    this.statefulSets = ctx.informer('StatefulSet');
    this.pdbs.on({ onAdd: (p) => this.queue.add(objectKey(p)), onUpdate: (_o, p) => this.queue.add(objectKey(p)) });
    const podChanged = (pod: Pod) => {
      for (const pdb of this.pdbs.list(pod.metadata?.namespace ?? '')) if (selects(pdb, pod)) this.queue.add(objectKey(pdb));
    };
    ctx.pods.on({
      onAdd: podChanged,
      onUpdate: (old, pod) => {
        podChanged(pod);
        // A pod whose labels changed may have left a budget.
        if (canonicalJSON(old.metadata?.labels) !== canonicalJSON(pod.metadata?.labels)) podChanged(old);
      },
      onDelete: podChanged,
    });
  }

  /** The finders of getExpectedScale: a ReplicaSet (its Deployment's replicas when it has one) or a StatefulSet. */
  private findScale(pod: Pod): ControllerScale | undefined {
    const ns = pod.metadata?.namespace ?? '';
    const ref = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller);
    if (!ref) return undefined;
    if (ref.kind === 'ReplicaSet') {
      const rs = this.replicaSets.get(ns, ref.name);
      if (!rs || rs.metadata?.uid !== ref.uid) return undefined;
      const owner = (rs.metadata?.ownerReferences ?? []).find((r) => r.controller);
      if (owner?.kind === 'Deployment') {
        const d = this.deployments.get(ns, owner.name);
        if (!d || d.metadata?.uid !== owner.uid) return undefined;
        return { uid: owner.uid, replicas: d.spec?.replicas ?? 1 };
      }
      return { uid: ref.uid, replicas: rs.spec?.replicas ?? 1 };
    }
    if (ref.kind === 'StatefulSet') {
      const ss = this.statefulSets.get(ns, ref.name);
      if (!ss || ss.metadata?.uid !== ref.uid) return undefined;
      return { uid: ref.uid, replicas: ss.spec?.replicas ?? 1 };
    }
    return undefined;
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const pdb = this.pdbs.get(ns, name);
    if (!pdb || pdb.metadata?.deletionTimestamp) return;
    const ref = workloadRef(pdb, 'policy/v1', 'PodDisruptionBudget');
    const pods = this.ctx.pods.list(ns).filter((p) => selects(pdb, p));
    if (pods.length === 0) this.recorder.event(ref, 'Normal', 'NoPods', 'No matching pods found');
    const now = this.ctx.clock.now();
    let status: NonNullable<PodDisruptionBudget['status']>;
    let recheckAtMs: number | undefined;
    try {
      const computed = computePdbStatus(pdb, pods, (pod) => this.findScale(pod), now);
      if (computed.unmanagedPods.length > 0) {
        this.recorder.event(
          ref,
          'Warning',
          'UnmanagedPods',
          'Pods selected by this PodDisruptionBudget (selector: ' +
            JSON.stringify(pdb.spec?.selector ?? null) +
            ') were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
        );
      }
      status = computed.status;
      recheckAtMs = computed.recheckAtMs;
    } catch (err) {
      if (!(err instanceof ExpectedCountError)) throw err;
      this.recorder.event(ref, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${err.message}`);
      status = failSafeStatus(pdb, err.message, now);
    }
    if (canonicalJSON(status) !== canonicalJSON(pdb.status)) {
      try {
        await this.ctx.storage('PodDisruptionBudget').updateStatus!({ ...pdb, status } as KubeObject, {});
      } catch (err) {
        if (!isConflictOrGone(err)) throw err;
        // Changed under us (an eviction wrote its status): that update enqueues it again.
        return;
      }
    }
    if (recheckAtMs !== undefined) this.queue.addAfter(key, recheckAtMs - now);
  }
}
