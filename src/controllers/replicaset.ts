// The ReplicaSet controller (pkg/controller/replicaset): keeps spec.replicas active pods matching the
// selector, adopting orphans that match and releasing owned pods that no longer do, creating pods
// `<rs>-<5 chars>` from the template and deleting the least valuable first on scale-down, and writes
// status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas with minReadySeconds,
// observedGeneration). Event-driven: RS and pod watches enqueue the owning ReplicaSet. The same
// controller keeps v1 ReplicationControllers (upstream's replication manager is the ReplicaSet
// controller over RCs): a ReplicatedKind says which kind, its group version, its events' source and
// how its selector reads as a LabelSelector.

import type { LabelSelector, Pod, ReplicaSet } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import { controllerRef, deletionOrder, isPodActive, isPodReady, nameSuffix, ownerRefTo, podAvailability, podFromTemplate } from './pod-control.js';
import { claimPods, controllersOfPod } from './pod-claims.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, PodControl, workloadRef } from './workload-events.js';
import { RefusalBackoff } from './refusal-backoff.js';
import { slowStartBatchErr } from './slow-start.js';
import { ControllerExpectations, ExpectationsTimeoutMs } from './expectations.js';

/** The most pods one sync creates or deletes (the controller's burstReplicas). */
const burstReplicas = 500;

/** The ReplicaSet condition of a failed creation or deletion (calculateStatus). */
export const ReplicaFailure = 'ReplicaFailure';

/** Whether two versions of an object differ in their status (and resourceVersion) alone. */
function onlyStatusChanged(a: ReplicaSet, b: ReplicaSet): boolean {
  const rest = (o: ReplicaSet) => JSON.stringify([o.spec, { ...o.metadata, resourceVersion: undefined, managedFields: undefined }]);
  return rest(a) === rest(b);
}

/** The kind a ReplicaSetController keeps (NewBaseController's GroupVersionKind, event source and queue name). */
export interface ReplicatedKind {
  kind: string;
  apiVersion: string;
  /** The events' source component. */
  component: string;
  queueName: string;
  /** The object as the controller reads it: a ReplicaSet (an RC's selector map as matchLabels). */
  asReplicaSet(o: KubeObject): ReplicaSet;
}

export const replicaSetKind: ReplicatedKind = {
  kind: 'ReplicaSet',
  apiVersion: 'apps/v1',
  component: 'replicaset-controller',
  queueName: 'replicaset',
  asReplicaSet: (o) => o as ReplicaSet,
};

export class ReplicaSetController {
  readonly queue: WorkQueue;
  private readonly sets: Informer<ReplicaSet>;
  private readonly podControl: PodControl;
  /** Failed syncs retried at the rate limiter's pace, not at once. */
  private readonly refusals: RefusalBackoff;
  /** Its creations and deletions not yet seen by the pod informer. */
  private readonly expectations: ControllerExpectations;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly kind: ReplicatedKind = replicaSetKind,
  ) {
    this.queue = ctx.workQueue(kind.queueName, (key) => this.sync(key));
    this.podControl = new PodControl(ctx.backend, ctx.recorder(kind.component));
    this.refusals = new RefusalBackoff(this.queue, ctx.logger, kind.queueName);
    this.expectations = new ControllerExpectations(() => ctx.clock.now());
    this.sets = ctx.informer<ReplicaSet>(kind.kind);
    this.sets.on({
      onAdd: (rs) => this.queue.add(objectKey(rs)),
      // Its own status writes are no reason to sync again (a failure's message would retry it at once, past its back-off).
      onUpdate: (old, rs) => {
        if (!onlyStatusChanged(old, rs)) this.queue.add(objectKey(rs));
      },
    });
    const podChanged = (p: Pod) => this.enqueueFor(p);
    ctx.pods.on({
      onAdd: (p) => {
        const key = this.ownerKey(p);
        if (key) this.expectations.creationObserved(key);
        podChanged(p);
      },
      onUpdate: (old, p) => {
        const key = this.ownerKey(p);
        if (key && p.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp) this.expectations.deletionObserved(key);
        this.enqueueFor(old);
        podChanged(p);
      },
      onDelete: (p) => {
        const key = this.ownerKey(p);
        if (key && !p.metadata?.deletionTimestamp) this.expectations.deletionObserved(key);
        podChanged(p);
      },
    });
  }

  /** The key of the ReplicaSet controlling the pod, if one does. */
  private ownerKey(p: Pod): string | undefined {
    const ref = controllerRef(p);
    return ref?.kind === this.kind.kind ? `${p.metadata?.namespace ?? ''}/${ref.name}` : undefined;
  }

  private enqueueFor(p: Pod): void {
    for (const key of controllersOfPod(p, this.kind.kind, this.sets, (rs) => this.selectorOf(rs))) this.queue.add(key);
  }

  private selectorOf(o: ReplicaSet): LabelSelector | undefined {
    return this.kind.asReplicaSet(o as KubeObject).spec?.selector;
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const stored = this.sets.get(ns, name);
    const rs = stored && this.kind.asReplicaSet(stored as KubeObject);
    if (!rs) this.expectations.delete(key);
    if (!rs || rs.metadata?.deletionTimestamp) return;
    const uid = rs.metadata!.uid!;
    // Until the informer has seen what the last sync created and deleted, only the status is written.
    const needsSync = this.expectations.satisfied(key);
    if (!needsSync) this.queue.addAfter(key, ExpectationsTimeoutMs + 1);
    // The active pods it owns or adopts (FilterActivePods, then ClaimPods).
    const { kind, apiVersion } = this.kind;
    const claimer = { owner: rs, apiVersion, kind, selector: rs.spec?.selector };
    const owned = await claimPods(this.ctx.backend, claimer, this.ctx.pods.list(ns).filter(isPodActive));
    const active = owned.filter(isPodActive);
    const want = rs.spec?.replicas ?? 1;
    const diff = active.length - want;
    const ref = workloadRef(rs, apiVersion, kind);
    let failure: string | undefined;
    if (needsSync && diff < 0) {
      const owner = ownerRefTo(rs, apiVersion, kind);
      let lastName = '';
      const count = Math.min(-diff, burstReplicas);
      this.expectations.expectCreations(key, count);
      let attempted = 0;
      const { err } = await slowStartBatchErr(count, async () => {
        attempted++;
        const pod = podFromTemplate(rs.spec!.template!, ns, (lastName = `${name}-${nameSuffix()}`), owner);
        try {
          await this.podControl.create(ref, pod);
        } catch (e) {
          this.expectations.creationObserved(key);
          throw e;
        }
      });
      // The creations never tried will not be seen either.
      this.expectations.creationObserved(key, count - attempted);
      // A batch that failed stops the creations (the API is refusing them): the ReplicaSet says so
      // (ReplicaFailure) and the next sync comes after the rate limiter's back-off (1 s doubled, at most 5 min).
      if (err !== undefined) {
        failure = errorText(err);
        this.refusals.refused(key, lastName, err);
      } else this.refusals.succeeded(key);
    } else if (needsSync && diff > 0) {
      const victims = deletionOrder(active).slice(0, Math.min(diff, burstReplicas));
      this.expectations.expectDeletions(key, victims.length);
      for (const p of victims) {
        await this.podControl.delete(ref, ns, p.metadata!.name!).catch((err: unknown) => {
          this.expectations.deletionObserved(key);
          if (!isConflictOrGone(err)) throw err;
        });
      }
    }
    await this.writeStatus(
      stored as KubeObject,
      rs,
      this.ctx.pods.list(ns).filter((p) => controllerRef(p)?.uid === uid && isPodActive(p)),
      diff < 0 ? failure : undefined,
    );
  }

  private async writeStatus(stored: KubeObject, rs: ReplicaSet, pods: Pod[], failure: string | undefined): Promise<void> {
    const now = this.ctx.clock.now();
    const minReady = rs.spec?.minReadySeconds ?? 0;
    let available = 0;
    let soonest: number | undefined;
    for (const p of pods) {
      const a = podAvailability(p, minReady, now);
      if (a.available) available++;
      else if (a.inMs !== undefined) soonest = Math.min(soonest ?? Infinity, a.inMs);
    }
    const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
    const fullyLabeled = pods.filter((p) => Object.entries(templateLabels).every(([k, v]) => p.metadata?.labels?.[k] === v)).length;
    const status = {
      ...(rs.status ?? {}),
      replicas: pods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: pods.filter(isPodReady).length,
      availableReplicas: available,
      observedGeneration: rs.metadata?.generation ?? 1,
    };
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'] as const) if (status[k] === 0) delete status[k];
    // ReplicaFailure (FailedCreate) while creations fail; gone once a sync needs none or they succeed.
    const others = (rs.status?.conditions ?? []).filter((c) => c.type !== ReplicaFailure);
    const had = (rs.status?.conditions ?? []).find((c) => c.type === ReplicaFailure);
    const conditions =
      failure !== undefined
        ? [
            ...others,
            had?.message === failure
              ? had
              : {
                  type: ReplicaFailure,
                  status: 'True',
                  lastTransitionTime: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
                  reason: 'FailedCreate',
                  message: failure,
                },
          ]
        : others;
    if (conditions.length > 0) (status as { conditions?: unknown }).conditions = conditions;
    else delete (status as { conditions?: unknown }).conditions;
    if (soonest !== undefined) this.queue.addAfter(objectKey(rs), soonest);
    try {
      await this.ctx.storage(this.kind.kind).updateStatus!({ ...stored, status } as KubeObject, {});
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
    }
  }
}
