// The DaemonSet controller (pkg/controller/daemon) for the agent's one node: a pod `<set>-<5 chars>`
// where the template fits the node (daemonset-node.ts), replaced and rolled as daemonset-plan.ts
// decides, the template's revisions as ControllerRevisions with the controller-revision-hash and
// pod-template-generation labels on the pods, and the status kubectl reads. Orphans its selector matches
// are adopted and pods whose labels no longer match released (pod-claims.ts).

import type { DaemonSet, Node, Pod } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { RevisionHistory, revisionHash, revisionHashLabel } from './controller-history.js';
import { daemonPodSpec, standaloneNode, unfitReason, type NodeFacts } from './daemonset-node.js';
import { isUpdated, planDaemonPods, resolveOnOneNode } from './daemonset-plan.js';
import { objectKey, type Informer } from './informer.js';
import { controllerRef, isPodActive, isPodReady, nameSuffix, ownerRefTo, podAvailability, podFromTemplate } from './pod-control.js';
import { isRefusal, RefusalBackoff } from './refusal-backoff.js';
import { claimPods, controllersOfPod } from './pod-claims.js';
import type { WorkQueue } from './work-queue.js';
import { PodControl, workloadRef } from './workload-events.js';

export const templateGenerationLabel = 'pod-template-generation';

export class DaemonSetController {
  readonly queue: WorkQueue;
  private readonly sets: Informer<DaemonSet>;
  private readonly history: RevisionHistory;
  /** Pods created and not yet seen by the pod informer, by set (the controller's expectations). */
  private readonly expected = new Map<string, string>();
  private readonly refusals: RefusalBackoff;
  private readonly podControl: PodControl;

  /** The agent's Node when its store keeps one: its labels and taints decide where daemon pods belong. */
  private readonly nodes?: Informer<Node>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly fallbackNode: NodeFacts = standaloneNode(ctx.backend.nodeName),
  ) {
    this.queue = ctx.workQueue('daemonset', (key) => this.sync(key));
    this.podControl = new PodControl(ctx.backend, ctx.recorder('daemonset-controller'));
    this.refusals = new RefusalBackoff(this.queue, ctx.logger, 'daemonset');
    this.sets = ctx.informer<DaemonSet>('DaemonSet');
    this.history = new RevisionHistory(ctx, 'DaemonSet');
    this.sets.on({ onAdd: (s) => this.queue.add(objectKey(s)), onUpdate: (_o, s) => this.queue.add(objectKey(s)) });
    // A pod's change concerns its DaemonSet, or every set that may adopt it (an orphan).
    const podChanged = (p: Pod) => {
      for (const key of controllersOfPod(p, 'DaemonSet', this.sets, (s) => s.spec?.selector)) {
        if (this.expected.get(key) === p.metadata?.name) this.expected.delete(key);
        this.queue.add(key);
      }
    };
    ctx.pods.on({ onAdd: podChanged, onUpdate: (old, p) => (podChanged(old), podChanged(p)), onDelete: podChanged });
    if (ctx.backend.objects?.storage('Node')) {
      this.nodes = ctx.informer<Node>('Node');
      const nodeChanged = () => {
        for (const s of this.sets.list()) this.queue.add(objectKey(s));
      };
      this.nodes.on({ onAdd: nodeChanged, onUpdate: nodeChanged });
    }
  }

  /** The node's name, labels and taints: the stored Node's, or the kubelet's own labels while there is none. */
  private get node(): NodeFacts {
    const n = this.nodes?.get('', this.fallbackNode.name);
    if (!n) return this.fallbackNode;
    return { name: this.fallbackNode.name, labels: n.metadata?.labels ?? {}, taints: n.spec?.taints ?? [] };
  }

  private owned(ds: DaemonSet): Pod[] {
    return this.ctx.pods.list(ds.metadata?.namespace ?? '').filter((p) => controllerRef(p)?.uid === ds.metadata?.uid);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const ds = this.sets.get(ns, name);
    if (!ds) {
      this.expected.delete(key);
      return;
    }
    if (ds.metadata?.deletionTimestamp) return;
    const revs = await this.history.ensure(ds, undefined);
    if (!revs) return this.queue.add(key);
    const hash = revisionHash(revs.update);
    const spec = ds.spec!;
    const rolling = spec.updateStrategy?.type !== 'OnDelete';
    const ru = spec.updateStrategy?.rollingUpdate;
    const maxSurge = rolling ? resolveOnOneNode(ru?.maxSurge, 0) : 0;
    let maxUnavailable = rolling ? resolveOnOneNode(ru?.maxUnavailable, 1) : 1;
    if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
    const shouldRun = unfitReason(spec.template?.spec, this.node) === undefined;
    // getDaemonPods: the pods it owns or adopts by its selector.
    const claimer = { owner: ds, apiVersion: 'apps/v1', kind: 'DaemonSet', selector: spec.selector };
    const claimed = await claimPods(this.ctx.backend, claimer, this.ctx.pods.list(ns));
    const plan = planDaemonPods({
      shouldRun,
      pods: claimed,
      updateHash: hash,
      updateStrategy: rolling ? 'RollingUpdate' : 'OnDelete',
      maxSurge,
      maxUnavailable,
      minReadySeconds: spec.minReadySeconds ?? 0,
      now: this.ctx.clock.now(),
    });
    const tolerate = (err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    };
    for (const pod of plan.delete) await this.podControl.delete(workloadRef(ds, 'apps/v1', 'DaemonSet'), ns, pod).catch(tolerate);
    if (plan.create && !this.expected.has(key)) await this.create(ds, hash, key);
    if (plan.recheckInMs !== undefined) this.queue.addAfter(key, plan.recheckInMs + 1);
    const pods = this.owned(ds);
    await this.history.truncate(
      revs,
      new Set(revs.all.filter((r) => pods.some((p) => isUpdated(p, revisionHash(r)))).map((r) => r.metadata!.name!)),
      spec.revisionHistoryLimit ?? 10,
    );
    await this.writeStatus(ds, hash, shouldRun, pods, revs.collisionCount);
  }

  private async create(ds: DaemonSet, hash: string, key: string): Promise<void> {
    const template = ds.spec!.template!;
    const name = `${ds.metadata!.name}-${nameSuffix()}`;
    const pod = podFromTemplate(
      { ...template, spec: daemonPodSpec(template.spec!, this.node.name) },
      ds.metadata!.namespace!,
      name,
      ownerRefTo(ds, 'apps/v1', 'DaemonSet'),
    );
    pod.metadata!.labels = { ...pod.metadata!.labels, [revisionHashLabel]: hash, [templateGenerationLabel]: String(ds.metadata?.generation ?? 1) };
    this.expected.set(key, name);
    try {
      const made = await this.podControl.create(workloadRef(ds, 'apps/v1', 'DaemonSet'), pod);
      if (this.ctx.pods.get(made.metadata!.namespace!, name)) this.expected.delete(key);
      this.refusals.succeeded(key);
    } catch (err) {
      this.expected.delete(key);
      if (isRefusal(err)) this.refusals.refused(key, name, err);
      else if ((err as { code?: number }).code !== 409) throw err;
    }
  }

  private async writeStatus(ds0: DaemonSet, hash: string, shouldRun: boolean, pods: Pod[], collisionCount: number): Promise<void> {
    const ds = this.sets.get(ds0.metadata!.namespace!, ds0.metadata!.name!) ?? ds0;
    const now = this.ctx.clock.now();
    const running = pods.filter(isPodActive);
    const has = running.length > 0;
    const scheduled = shouldRun && has ? 1 : 0;
    const ready = shouldRun && running.some((p) => p.status?.phase === 'Running' && isPodReady(p)) ? 1 : 0;
    const available =
      shouldRun && running.some((p) => p.status?.phase === 'Running' && podAvailability(p, ds.spec?.minReadySeconds ?? 0, now).available) ? 1 : 0;
    const desired = shouldRun ? 1 : 0;
    const status: NonNullable<DaemonSet['status']> = {
      currentNumberScheduled: scheduled,
      desiredNumberScheduled: desired,
      numberMisscheduled: !shouldRun && has ? 1 : 0,
      numberReady: ready,
      observedGeneration: ds.metadata?.generation ?? 1,
      updatedNumberScheduled: shouldRun && running.some((p) => isUpdated(p, hash)) ? 1 : 0,
      numberAvailable: available,
      numberUnavailable: desired - available,
      ...(collisionCount > 0 ? { collisionCount } : {}),
    };
    for (const k of ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] as const) if (status[k] === 0) delete status[k];
    if (ds.status?.conditions) status.conditions = ds.status.conditions;
    await this.ctx.storage('DaemonSet').updateStatus!({ ...ds, status } as KubeObject, {}).catch((err: unknown) => {
      if (!isConflictOrGone(err)) throw err;
    });
  }
}
