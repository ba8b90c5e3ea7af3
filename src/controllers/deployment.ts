// The Deployment controller (pkg/controller/deployment): one ReplicaSet per template, named
// `<deploy>-<pod-template-hash>`, with the revision annotations `kubectl rollout history|undo` read;
// RollingUpdate (maxSurge/maxUnavailable, 25% by default) and Recreate; paused; revisionHistoryLimit;
// status (replicas, updated, ready, available, unavailable, observedGeneration, collisionCount) and
// the Available and Progressing conditions with the upstream reasons, progressDeadlineSeconds
// through the clock; the ScalingReplicaSet events. Event-driven: Deployment, ReplicaSet and pod
// watches enqueue the Deployment.

import type { Deployment, DeploymentCondition, Pod, PodTemplateSpec, ReplicaSet } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';
import type { EventRecorder } from '../events/recorder.js';
import { intOrPercentValue } from '../api/validation/workload.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import { controllerRef, isPodActive, ownerRefTo } from './pod-control.js';
import { computeHash } from './pod-template-hash.js';
import type { WorkQueue } from './work-queue.js';
import { errorText, workloadRef } from './workload-events.js';

export const revisionAnnotation = 'deployment.kubernetes.io/revision';
export const desiredReplicasAnnotation = 'deployment.kubernetes.io/desired-replicas';
export const maxReplicasAnnotation = 'deployment.kubernetes.io/max-replicas';
export const podTemplateHashLabel = 'pod-template-hash';

type Spec = NonNullable<Deployment['spec']>;

/** An int-or-percent of a total (intstr.GetScaledValueFromIntOrPercent). */
function scaled(v: number | string | undefined, total: number, roundUp: boolean): number {
  const { value, percent } = intOrPercentValue(v);
  if (!percent) return value;
  return roundUp ? Math.ceil((value * total) / 100) : Math.floor((value * total) / 100);
}

/** ResolveFenceposts: maxSurge rounded up, maxUnavailable down; both 0 means maxUnavailable 1. */
export function resolveFenceposts(d: Deployment): { maxSurge: number; maxUnavailable: number } {
  const replicas = d.spec?.replicas ?? 1;
  const ru = d.spec?.strategy?.rollingUpdate;
  const maxSurge = scaled(ru?.maxSurge ?? '25%', replicas, true);
  let maxUnavailable = scaled(ru?.maxUnavailable ?? '25%', replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

function revisionOf(o: KubeObject): number {
  const n = Number(o.metadata?.annotations?.[revisionAnnotation] ?? '0');
  return Number.isFinite(n) ? n : 0;
}

/** The template without its pod-template-hash label (EqualIgnoreHash compares these). */
function withoutHash(t: PodTemplateSpec | undefined): string {
  const c = structuredClone(t ?? {});
  if (c.metadata?.labels) delete c.metadata.labels[podTemplateHashLabel];
  // A template sent back by a client (`rollout undo`) carries Go's empty `creationTimestamp: null`.
  return canonicalJSON(JSON.parse(JSON.stringify(c, (_k, v: unknown) => (v === null ? undefined : v))));
}

const replicasOf = (rs: ReplicaSet) => rs.spec?.replicas ?? 0;
const sum = (rss: ReplicaSet[], f: (rs: ReplicaSet) => number) => rss.reduce((n, rs) => n + f(rs), 0);

export class DeploymentController {
  readonly queue: WorkQueue;
  private readonly deployments: Informer<Deployment>;
  private readonly sets: Informer<ReplicaSet>;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('deployment', (key) => this.sync(key));
    this.recorder = ctx.recorder('deployment-controller');
    this.deployments = ctx.informer<Deployment>('Deployment');
    this.sets = ctx.informer<ReplicaSet>('ReplicaSet');
    this.deployments.on({ onAdd: (d) => this.queue.add(objectKey(d)), onUpdate: (_o, d) => this.queue.add(objectKey(d)) });
    const rsChanged = (rs: KubeObject) => {
      const ref = controllerRef(rs);
      if (ref?.kind === 'Deployment') this.queue.add(`${rs.metadata?.namespace ?? ''}/${ref.name}`);
    };
    this.sets.on({ onAdd: rsChanged, onUpdate: (_o, rs) => rsChanged(rs), onDelete: rsChanged });
    // A pod's change reaches its Deployment through its ReplicaSet's status; Recreate also waits for old pods to go.
    ctx.pods.on({ onDelete: (p: Pod) => this.podGone(p) });
  }

  private podGone(p: Pod): void {
    const ref = controllerRef(p);
    if (ref?.kind !== 'ReplicaSet') return;
    const rs = this.sets.get(p.metadata?.namespace ?? '', ref.name);
    if (rs) this.queue.add(`${p.metadata?.namespace ?? ''}/${controllerRef(rs)?.name ?? ''}`);
  }

  private owned(d: Deployment): ReplicaSet[] {
    return this.sets.list(d.metadata?.namespace ?? '').filter((rs) => controllerRef(rs)?.uid === d.metadata?.uid);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const d = this.deployments.get(ns, name);
    if (!d || d.metadata?.deletionTimestamp) return;
    const all = this.owned(d);
    const newRS = await this.newReplicaSet(d, all);
    if (!newRS) return;
    const old = all.filter((rs) => rs.metadata?.uid !== newRS.metadata?.uid);
    if (!d.spec?.paused) {
      if (d.spec?.strategy?.type === 'Recreate') await this.recreate(d, newRS, old);
      else await this.rollingUpdate(d, newRS, old);
      await this.cleanup(d, old);
    }
    await this.writeStatus(d, this.sets.get(ns, newRS.metadata!.name!) ?? newRS, this.owned(d));
  }

  /** Finds or creates the ReplicaSet of the current template, and gives it the newest revision. */
  private async newReplicaSet(d: Deployment, all: ReplicaSet[]): Promise<ReplicaSet | undefined> {
    const ns = d.metadata!.namespace!;
    const maxOld = Math.max(0, ...all.map(revisionOf));
    const existing = all.find((rs) => withoutHash(rs.spec?.template) === withoutHash(d.spec?.template));
    const storage = this.ctx.storage('ReplicaSet');
    if (existing) {
      const isNewest = all.every((rs) => rs === existing || revisionOf(rs) < revisionOf(existing));
      const rev = isNewest ? revisionOf(existing) || 1 : maxOld + 1;
      await this.annotate(d, rev);
      if (revisionOf(existing) === rev) return existing;
      const next = structuredClone(existing);
      next.metadata!.annotations = { ...(next.metadata!.annotations ?? {}), [revisionAnnotation]: String(rev) };
      return (await storage.update!(next as KubeObject, {}).catch((err: unknown) => {
        if (isConflictOrGone(err)) return undefined;
        throw err;
      })) as ReplicaSet | undefined;
    }
    if (d.spec?.paused) return undefined;
    const spec = d.spec as Spec;
    const hash = computeHash(spec.template, d.status?.collisionCount);
    const template = structuredClone(spec.template);
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [podTemplateHashLabel]: hash } };
    const selector = structuredClone(spec.selector);
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [podTemplateHashLabel]: hash };
    const rev = maxOld + 1;
    const { maxSurge } = resolveFenceposts(d);
    const replicas = spec.strategy?.type === 'Recreate' ? 0 : this.newReplicas(d, 0, all);
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata!.name}-${hash}`,
        namespace: ns,
        labels: template.metadata.labels!,
        annotations: {
          [desiredReplicasAnnotation]: String(spec.replicas ?? 1),
          [maxReplicasAnnotation]: String((spec.replicas ?? 1) + (spec.strategy?.type === 'Recreate' ? 0 : maxSurge)),
          [revisionAnnotation]: String(rev),
        },
        ownerReferences: [ownerRefTo(d, 'apps/v1', 'Deployment')],
      },
      spec: { replicas, minReadySeconds: spec.minReadySeconds ?? 0, selector, template },
    };
    try {
      const created = (await storage.create!(rs as KubeObject, {})) as ReplicaSet;
      if (replicas > 0)
        this.recorder.event(
          workloadRef(d, 'apps/v1', 'Deployment'),
          'Normal',
          'ScalingReplicaSet',
          `Scaled up replica set ${rs.metadata!.name} to ${replicas}`,
        );
      await this.annotate(d, rev);
      await this.setProgressing(d, 'True', 'NewReplicaSetCreated', `Created new replica set "${rs.metadata!.name}"`);
      return created;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) {
        const msg = `Failed to create new replica set "${rs.metadata!.name}": ${errorText(err)}`;
        this.recorder.event(workloadRef(d, 'apps/v1', 'Deployment'), 'Warning', 'ReplicaSetCreateError', msg);
        throw err;
      }
      // A ReplicaSet of that name with another template: a hash collision; the next sync uses another hash.
      const clash = storage.get(ns, rs.metadata!.name!) as ReplicaSet | undefined;
      if (clash && withoutHash(clash.spec?.template) !== withoutHash(spec.template)) {
        const status = { ...(d.status ?? {}), collisionCount: (d.status?.collisionCount ?? 0) + 1 };
        await this.ctx.storage('Deployment').updateStatus!({ ...d, status } as KubeObject, {});
      }
      return undefined;
    }
  }

  /** The Deployment's own revision annotation (what `rollout history` shows as current). */
  private async annotate(d: Deployment, rev: number): Promise<void> {
    if (revisionOf(d) === rev) return;
    const next = structuredClone(d);
    next.metadata!.annotations = { ...(next.metadata!.annotations ?? {}), [revisionAnnotation]: String(rev) };
    await this.ctx.storage('Deployment').update!(next as KubeObject, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }

  /** NewRSNewReplicas: scale the new ReplicaSet up as far as maxSurge allows. */
  private newReplicas(d: Deployment, current: number, all: ReplicaSet[]): number {
    const replicas = d.spec?.replicas ?? 1;
    const { maxSurge } = resolveFenceposts(d);
    const total = sum(all, replicasOf);
    const maxTotal = replicas + maxSurge;
    if (total >= maxTotal) return current;
    return current + Math.max(0, Math.min(maxTotal - total, replicas - current));
  }

  /** scaleReplicaSetAndRecordEvent: the ScalingReplicaSet event once the new size is written. */
  private async scale(rs: ReplicaSet, replicas: number, d: Deployment): Promise<void> {
    const from = replicasOf(rs);
    if (from === replicas) return;
    const next = structuredClone(rs);
    next.spec!.replicas = replicas;
    next.metadata!.annotations = {
      ...(next.metadata!.annotations ?? {}),
      [desiredReplicasAnnotation]: String(d.spec?.replicas ?? 1),
      [maxReplicasAnnotation]: String((d.spec?.replicas ?? 1) + resolveFenceposts(d).maxSurge),
    };
    try {
      await this.ctx.storage('ReplicaSet').update!(next as KubeObject, {});
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      return;
    }
    const operation = replicas > from ? 'up' : 'down';
    const message = `Scaled ${operation} replica set ${rs.metadata!.name} to ${replicas} from ${from}`;
    this.recorder.event(workloadRef(d, 'apps/v1', 'Deployment'), 'Normal', 'ScalingReplicaSet', message);
  }

  private async rollingUpdate(d: Deployment, newRS: ReplicaSet, old: ReplicaSet[]): Promise<void> {
    const replicas = d.spec?.replicas ?? 1;
    const all = [newRS, ...old];
    // reconcileNewReplicaSet
    if (replicasOf(newRS) > replicas) await this.scale(newRS, replicas, d);
    else if (replicasOf(newRS) < replicas) await this.scale(newRS, this.newReplicas(d, replicasOf(newRS), all), d);
    const fresh = this.sets.get(newRS.metadata!.namespace!, newRS.metadata!.name!) ?? newRS;
    // reconcileOldReplicaSets
    const oldCount = sum(old, replicasOf);
    if (oldCount === 0) return;
    const { maxUnavailable } = resolveFenceposts(d);
    const minAvailable = replicas - maxUnavailable;
    const allCount = replicasOf(fresh) + oldCount;
    const newUnavailable = replicasOf(fresh) - (fresh.status?.availableReplicas ?? 0);
    let maxScaledDown = allCount - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return;
    const oldest = [...old].sort((a, b) => Date.parse(a.metadata?.creationTimestamp ?? '') - Date.parse(b.metadata?.creationTimestamp ?? ''));
    // cleanupUnhealthyReplicas: pods that are not available go first.
    const scaledTo = new Map<ReplicaSet, number>(old.map((rs) => [rs, replicasOf(rs)]));
    for (const rs of oldest) {
      if (maxScaledDown <= 0) break;
      const unhealthy = replicasOf(rs) - (rs.status?.availableReplicas ?? 0);
      const down = Math.min(maxScaledDown, unhealthy);
      if (down <= 0) continue;
      scaledTo.set(rs, replicasOf(rs) - down);
      maxScaledDown -= down;
    }
    // scaleDownOldReplicaSetsForRollingUpdate: available pods above minAvailable.
    const available = (fresh.status?.availableReplicas ?? 0) + sum(old, (rs) => rs.status?.availableReplicas ?? 0);
    let total = Math.min(maxScaledDown, available - minAvailable);
    for (const rs of oldest) {
      if (total <= 0) break;
      const now = scaledTo.get(rs)!;
      const down = Math.min(now, total);
      scaledTo.set(rs, now - down);
      total -= down;
    }
    for (const [rs, n] of scaledTo) await this.scale(rs, n, d);
  }

  private async recreate(d: Deployment, newRS: ReplicaSet, old: ReplicaSet[]): Promise<void> {
    for (const rs of old) await this.scale(rs, 0, d);
    const oldPodsRunning = this.ctx.pods
      .list(d.metadata!.namespace!)
      .some((p) => old.some((rs) => controllerRef(p)?.uid === rs.metadata?.uid) && (isPodActive(p) || p.metadata?.deletionTimestamp));
    if (oldPodsRunning) return;
    await this.scale(newRS, d.spec?.replicas ?? 1, d);
  }

  /** revisionHistoryLimit: the oldest scaled-down ReplicaSets beyond it are deleted. */
  private async cleanup(d: Deployment, old: ReplicaSet[]): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit ?? 10;
    const idle = old.filter((rs) => replicasOf(rs) === 0 && (rs.status?.replicas ?? 0) === 0).sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      await this.ctx.storage('ReplicaSet').delete!(rs.metadata!.namespace!, rs.metadata!.name!, {}).catch((err: unknown) => {
        if (!isConflictOrGone(err)) throw err;
      });
    }
  }

  private condition(d: Deployment, type: string): DeploymentCondition | undefined {
    return (d.status?.conditions ?? []).find((c) => c.type === type);
  }

  private timestamp(): string {
    return new Date(this.ctx.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** A condition set as SetDeploymentCondition does: the transition time kept while the status stays. */
  private withCondition(conds: DeploymentCondition[], type: string, status: string, reason: string, message: string): DeploymentCondition[] {
    const now = this.timestamp();
    const had = conds.find((c) => c.type === type);
    if (had && had.status === status && had.reason === reason && had.message === message) return conds;
    const c: DeploymentCondition = {
      type,
      status,
      reason,
      message,
      lastUpdateTime: now,
      lastTransitionTime: had && had.status === status ? had.lastTransitionTime! : now,
    };
    return [...conds.filter((x) => x.type !== type), c].sort((a, b) => (a.type === 'Available' ? -1 : b.type === 'Available' ? 1 : 0));
  }

  private async setProgressing(d: Deployment, status: string, reason: string, message: string): Promise<void> {
    const conditions = this.withCondition(d.status?.conditions ?? [], 'Progressing', status, reason, message);
    const fresh = this.deployments.get(d.metadata!.namespace!, d.metadata!.name!) ?? d;
    await this.ctx.storage('Deployment').updateStatus!({ ...fresh, status: { ...(fresh.status ?? {}), conditions } } as KubeObject, {}).catch(
      (err: unknown) => {
        if (!isConflictOrGone(err)) throw err;
      },
    );
  }

  private async writeStatus(d0: Deployment, newRS: ReplicaSet, all: ReplicaSet[]): Promise<void> {
    const d = this.deployments.get(d0.metadata!.namespace!, d0.metadata!.name!) ?? d0;
    const replicas = d.spec?.replicas ?? 1;
    const totalReplicas = sum(all, (rs) => rs.status?.replicas ?? 0);
    const available = sum(all, (rs) => rs.status?.availableReplicas ?? 0);
    const updated = newRS.status?.replicas ?? 0;
    const { maxUnavailable } = resolveFenceposts(d);
    let conditions = d.status?.conditions ?? [];
    conditions =
      available >= replicas - (d.spec?.strategy?.type === 'Recreate' ? 0 : maxUnavailable)
        ? this.withCondition(conditions, 'Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
        : this.withCondition(conditions, 'Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.');
    const rsName = newRS.metadata!.name!;
    const complete = updated === replicas && (newRS.status?.availableReplicas ?? 0) === replicas && totalReplicas === replicas;
    const deadline = d.spec?.progressDeadlineSeconds;
    const progressing = conditions.find((c) => c.type === 'Progressing');
    if (d.spec?.paused) {
      conditions = this.withCondition(conditions, 'Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused');
    } else if (complete) {
      conditions = this.withCondition(conditions, 'Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`);
    } else if (progressing?.reason !== 'ProgressDeadlineExceeded' || this.progressChanged(d, updated, available)) {
      const prev = this.condition(d, 'Progressing');
      const moved = this.progressChanged(d, updated, available) || prev?.reason === 'DeploymentPaused' || prev?.reason === 'NewReplicaSetAvailable' || !prev;
      if (moved) {
        conditions = this.withCondition(conditions, 'Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`);
        // A new update time restarts the deadline even when the message stays.
        conditions = conditions.map((c) => (c.type === 'Progressing' ? { ...c, lastUpdateTime: this.timestamp() } : c));
      }
      const since = Date.parse(conditions.find((c) => c.type === 'Progressing')?.lastUpdateTime ?? '') || this.ctx.clock.now();
      if (deadline !== undefined) {
        const left = since + deadline * 1000 - this.ctx.clock.now();
        if (left <= 0) {
          conditions = this.withCondition(conditions, 'Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`);
        } else this.queue.addAfter(objectKey(d), left + 1);
      }
    }
    // The ReplicaSets' ReplicaFailure, the new one's first, copied as the Deployment's (getReplicaFailures).
    const failure = [newRS, ...all.filter((rs) => rs !== newRS)]
      .map((rs) => (rs.status?.conditions ?? []).find((c) => c.type === 'ReplicaFailure' && c.status === 'True'))
      .find((c) => c !== undefined);
    conditions = failure
      ? this.withCondition(conditions, 'ReplicaFailure', failure.status, failure.reason ?? '', failure.message ?? '')
      : conditions.filter((c) => c.type !== 'ReplicaFailure');
    const status: NonNullable<Deployment['status']> = {
      observedGeneration: d.metadata?.generation ?? 1,
      replicas: totalReplicas,
      updatedReplicas: updated,
      readyReplicas: sum(all, (rs) => rs.status?.readyReplicas ?? 0),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, replicas - available),
      conditions,
      ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    };
    for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const)
      if (status[k] === 0) delete status[k];
    await this.ctx.storage('Deployment').updateStatus!({ ...d, status } as KubeObject, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }

  /** Whether the rollout moved since the status was written (more updated or available pods). */
  private progressChanged(d: Deployment, updated: number, available: number): boolean {
    return (
      updated !== (d.status?.updatedReplicas ?? 0) ||
      available !== (d.status?.availableReplicas ?? 0) ||
      d.metadata?.generation !== d.status?.observedGeneration
    );
  }
}
