// The StatefulSet controller (pkg/controller/statefulset): pods `<set>-<ordinal>` with a stable
// hostname and subdomain, created and deleted as statefulset-plan.ts decides (OrderedReady or
// Parallel, RollingUpdate with partition, OnDelete), the template's revisions as ControllerRevisions,
// and the status kubectl reads (replicas, ready, current, updated, available, the revisions).
// volumeClaimTemplates become persistentVolumeClaim volumes, their claims created before each pod and
// owned as persistentVolumeClaimRetentionPolicy says (statefulset-claims.ts).
// Orphans named as its ordinals are adopted and pods whose labels no longer match released (pod-claims.ts).

import type { ControllerRevision, Pod, PodTemplateSpec, StatefulSet } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { RevisionHistory, revisionTemplate, revisionHashLabel, type Revisions } from './controller-history.js';
import { objectKey, type Informer } from './informer.js';
import { controllerRef, ownerRefTo, podAvailability, podFromTemplate } from './pod-control.js';
import { isRunningAndReady, isTerminating, planStatefulSet, podOrdinal, podRevision, type StatefulAction } from './statefulset-plan.js';
import { StatefulSetClaims } from './statefulset-claims.js';
import { isRefusal, RefusalBackoff } from './refusal-backoff.js';
import { claimPods, controllersOfPod } from './pod-claims.js';
import type { WorkQueue } from './work-queue.js';
import { PodControl, workloadRef, type PodEventWording } from './workload-events.js';

export const podNameLabel = 'statefulset.kubernetes.io/pod-name';
export const podIndexLabel = 'apps.kubernetes.io/pod-index';

type Volume = NonNullable<NonNullable<Pod['spec']>['volumes']>[number];

/** The pod of one ordinal from a revision's template (newStatefulSetPod: identity, storage, revision label). */
export function statefulPod(set: StatefulSet, template: PodTemplateSpec, revision: string, ordinal: number): Pod {
  const name = `${set.metadata!.name}-${ordinal}`;
  const pod = podFromTemplate(template, set.metadata!.namespace!, name, ownerRefTo(set, 'apps/v1', 'StatefulSet'));
  pod.metadata!.labels = { ...pod.metadata!.labels, [podNameLabel]: name, [podIndexLabel]: String(ordinal), [revisionHashLabel]: revision };
  const spec = pod.spec!;
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  const claims = set.spec?.volumeClaimTemplates ?? [];
  if (claims.length > 0) {
    const claimed = new Set(claims.map((c) => c.metadata?.name ?? ''));
    const volumes: Volume[] = (spec.volumes ?? []).filter((v) => !claimed.has(v.name));
    for (const c of claims) {
      const claim = c.metadata?.name ?? '';
      volumes.push({ name: claim, persistentVolumeClaim: { claimName: `${claim}-${name}` } });
    }
    spec.volumes = volumes;
  }
  return pod;
}

/** isMemberOf: the pod's name is `<set>-<ordinal>` (getParentName). */
function isMemberOf(setName: string, p: Pod): boolean {
  const m = /^(.*)-([0-9]+)$/.exec(p.metadata?.name ?? '');
  return m?.[1] === setName;
}

/** recordPodEvent's words: "create Pod web-0 in StatefulSet web successful". */
function statefulPodWording(set: string): PodEventWording {
  return {
    created: (pod) => `create Pod ${pod} in StatefulSet ${set} successful`,
    createFailed: (pod, err) => `create Pod ${pod} in StatefulSet ${set} failed error: ${err}`,
    deleted: (pod) => `delete Pod ${pod} in StatefulSet ${set} successful`,
    deleteFailed: (pod, err) => `delete Pod ${pod} in StatefulSet ${set} failed error: ${err}`,
  };
}

export class StatefulSetController {
  readonly queue: WorkQueue;
  private readonly sets: Informer<StatefulSet>;
  private readonly history: RevisionHistory;
  private readonly refusals: RefusalBackoff;
  private readonly recorder: EventRecorder;
  /** The sets' claims, where the agent keeps PersistentVolumeClaims. */
  private readonly claims?: StatefulSetClaims;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('statefulset', (key) => this.sync(key));
    this.recorder = ctx.recorder('statefulset-controller');
    if (ctx.backend.objects?.storage('PersistentVolumeClaim')) this.claims = new StatefulSetClaims(ctx, this.recorder);
    this.refusals = new RefusalBackoff(this.queue, ctx.logger, 'statefulset');
    this.sets = ctx.informer<StatefulSet>('StatefulSet');
    this.history = new RevisionHistory(ctx, 'StatefulSet');
    this.sets.on({ onAdd: (s) => this.queue.add(objectKey(s)), onUpdate: (_o, s) => this.queue.add(objectKey(s)) });
    // A pod's change concerns its StatefulSet, or every set that may adopt it (an orphan).
    const podChanged = (p: Pod) => {
      for (const key of controllersOfPod(p, 'StatefulSet', this.sets, (s) => s.spec?.selector)) this.queue.add(key);
    };
    ctx.pods.on({ onAdd: podChanged, onUpdate: (old, p) => (podChanged(old), podChanged(p)), onDelete: podChanged });
  }

  private owned(set: StatefulSet): Pod[] {
    return this.ctx.pods.list(set.metadata?.namespace ?? '').filter((p) => controllerRef(p)?.uid === set.metadata?.uid);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const set = this.sets.get(ns, name);
    if (!set || set.metadata?.deletionTimestamp) return;
    const revs = await this.history.ensure(set, set.status?.currentRevision);
    if (!revs) return this.queue.add(key);
    const spec = set.spec!;
    const rolling = spec.updateStrategy?.type !== 'OnDelete';
    // getPodsForStatefulSet: the pods it owns or adopts whose labels match and whose name is one of its ordinals.
    const claimer = { owner: set, apiVersion: 'apps/v1', kind: 'StatefulSet', selector: spec.selector, filter: (p: Pod) => isMemberOf(name, p) };
    const claimed = await claimPods(this.ctx.backend, claimer, this.ctx.pods.list(ns));
    // The claims' owners follow the retention policy before a condemned pod is deleted.
    await this.claims?.keepRetention(
      set,
      claimed.flatMap((p) => {
        const ordinal = podOrdinal(name, p.metadata?.name);
        return ordinal === undefined ? [] : [{ pod: p, ordinal }];
      }),
    );
    const plan = planStatefulSet({
      setName: name,
      replicas: spec.replicas ?? 1,
      startOrdinal: spec.ordinals?.start ?? 0,
      podManagementPolicy: spec.podManagementPolicy === 'Parallel' ? 'Parallel' : 'OrderedReady',
      updateStrategy: rolling ? 'RollingUpdate' : 'OnDelete',
      partition: spec.updateStrategy?.rollingUpdate?.partition ?? 0,
      minReadySeconds: spec.minReadySeconds ?? 0,
      pods: claimed,
      currentRevision: revs.current.metadata!.name!,
      updateRevision: revs.update.metadata!.name!,
      now: this.ctx.clock.now(),
    });
    for (const action of plan.actions) await this.apply(set, revs, action);
    if (plan.recheckInMs !== undefined) this.queue.addAfter(key, plan.recheckInMs + 1);
    const pods = this.owned(set);
    await this.history.truncate(revs, new Set(pods.map(podRevision)), spec.revisionHistoryLimit ?? 10);
    await this.writeStatus(set, revs, pods);
  }

  private async apply(set: StatefulSet, revs: Revisions, action: StatefulAction): Promise<void> {
    const ns = set.metadata!.namespace!;
    const control = new PodControl(this.ctx.backend, this.recorder, statefulPodWording(set.metadata!.name!));
    const ref = workloadRef(set, 'apps/v1', 'StatefulSet');
    const tolerate = (err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    };
    if (action.type === 'delete') {
      this.ctx.logger.debug('StatefulSet deletes a pod', { statefulSet: `${ns}/${set.metadata!.name}`, pod: action.pod, why: action.why });
      await control.delete(ref, ns, action.pod).catch(tolerate);
      return;
    }
    const rev: ControllerRevision = action.revision === 'current' ? revs.current : revs.update;
    const template = action.revision === 'update' ? (set.spec!.template ?? {}) : revisionTemplate(rev);
    const pod = statefulPod(set, template, rev.metadata!.name!, action.ordinal);
    const key = objectKey(set);
    try {
      await this.claims?.create(set, action.ordinal, pod.metadata!.name!);
      await control.create(ref, pod);
      this.refusals.succeeded(key);
    } catch (err) {
      // A pod of that name that is not the set's (released, or not yet gone) blocks the ordinal: retried with back-off
      // as upstream's sync error is, since nothing about that pod enqueues the set once it is no longer selected.
      if (isRefusal(err) || (err as { code?: number }).code === 409 || !(err as { code?: number }).code) this.refusals.refused(key, pod.metadata!.name!, err);
      else tolerate(err);
    }
  }

  private async writeStatus(set0: StatefulSet, revs: Revisions, pods: Pod[]): Promise<void> {
    const set = this.sets.get(set0.metadata!.namespace!, set0.metadata!.name!) ?? set0;
    const now = this.ctx.clock.now();
    const minReady = set.spec?.minReadySeconds ?? 0;
    const created = pods.filter((p) => Boolean(p.status?.phase));
    const live = created.filter((p) => !isTerminating(p));
    const updateName = revs.update.metadata!.name!;
    let currentName = revs.current.metadata!.name!;
    const replicas = created.length;
    const ready = created.filter(isRunningAndReady).length;
    const updated = live.filter((p) => podRevision(p) === updateName).length;
    let current = live.filter((p) => podRevision(p) === currentName).length;
    // completeRollingUpdate: once every pod is updated and ready, the update revision is the current one.
    if (set.spec?.updateStrategy?.type !== 'OnDelete' && updated === replicas && ready === replicas) {
      currentName = updateName;
      current = updated;
    }
    const status: NonNullable<StatefulSet['status']> = {
      observedGeneration: set.metadata?.generation ?? 1,
      replicas,
      readyReplicas: ready,
      currentReplicas: current,
      updatedReplicas: updated,
      availableReplicas: created.filter((p) => isRunningAndReady(p) && podAvailability(p, minReady, now).available).length,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount: revs.collisionCount,
    };
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (status[k] === 0) delete status[k];
    if (set.status?.conditions) status.conditions = set.status.conditions;
    await this.ctx.storage('StatefulSet').updateStatus!({ ...set, status } as KubeObject, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }
}
