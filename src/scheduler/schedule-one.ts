// The scheduler of the standalone agent's one node (pkg/scheduler/schedule_one.go): pending pods
// (no spec.nodeName, spec.schedulerName default-scheduler) are taken from the scheduling queue one at a
// time, the filter plugins are run against the node and the pods bound to it, and the pod is bound
// (spec.nodeName, event Scheduled) or, when it does not fit, DefaultPreemption is tried and the pod is
// left Pending with PodScheduled=False/Unschedulable and a FailedScheduling event carrying the
// FitError's message, back in the queue until an event that may let it fit (a bound pod ends, the
// node changes) and its back-off allow another attempt. A pod with scheduling gates waits
// SchedulingGated until they are removed. A pod with claims is assumed on the node while its binding
// cycle runs apart (VolumeBinding's PreBind binds or provisions its WaitForFirstConsumer claims and
// waits for them, then the pod is bound), as upstream's binding cycle runs beside the next pods'.

import type { Node, Pod } from '../api/types.js';
import type { EventObject, EventRecorder } from '../events/recorder.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { preempt } from './default-preemption.js';
import { assignedPodEvent, pluginInterested, type ClusterEvent } from './eventhandlers.js';
import { defaultSchedulerName, fitErrorMessage, type FilterPlugin, type Status } from './framework.js';
import { SchedulingQueue, type QueuedPodInfo, type SchedulingQueueOptions } from './scheduling-queue.js';

/** What the scheduler reads and writes: the node, the pods bound to it, and the pod's binding and status. */
export interface SchedulerHost {
  /** The Node object as stored; undefined before it is registered. */
  node(): Node | undefined;
  /** The pods bound to the node that hold it (not Succeeded or Failed). */
  assignedPods(): Pod[];
  /** Binds the pod (pods/binding): spec.nodeName, then the kubelet admits it. */
  bind(pod: Pod, nodeName: string): Promise<void>;
  /** Writes PodScheduled=False with reason and message (and nominatedNodeName when preemption nominated the node). */
  setUnschedulable(pod: Pod, reason: string, message: string, nominatedNodeName?: string): void;
  /**
   * PreBind of the pod's volumes (VolumeBinding's BindPodVolumes): binds or provisions its unbound
   * WaitForFirstConsumer claims for the node and resolves once every claim is bound; rejects with the
   * reason otherwise. Absent where the agent keeps no claims.
   */
  bindVolumes?(pod: Pod, node: Node): Promise<void>;
  /** Deletes a victim of preemption gracefully, its DisruptionTarget condition saying why. */
  preemptVictim(victim: Pod, message: string): Promise<void>;
}

export interface SchedulerOptions {
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  host: SchedulerHost;
  filters: readonly FilterPlugin[];
  queue?: SchedulingQueueOptions;
}

/** A pod this scheduler places: not bound, and naming it (or no scheduler). */
export function isPendingForScheduler(p: Pod): boolean {
  return !p.spec?.nodeName && (p.spec?.schedulerName ?? defaultSchedulerName) === defaultSchedulerName && !p.metadata?.deletionTimestamp;
}

export const SchedulingGatedReason = 'SchedulingGated';
export const UnschedulableReason = 'Unschedulable';

function podRef(pod: Pod): EventObject {
  return { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
}

export class Scheduler {
  readonly queue: SchedulingQueue;
  private running = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  /** Pods assumed on the node while their binding cycle (PreBind of their volumes, then bind) runs, by UID. */
  private readonly assumed = new Map<string, Pod>();
  /** Pods nominated to the node by preemption, by UID, until bound or gone (the nominator). */
  private readonly nominated = new Map<string, Pod>();

  constructor(private readonly opts: SchedulerOptions) {
    this.queue = new SchedulingQueue(opts.clock, () => this.kick(), opts.queue);
  }

  // --- event handlers (pkg/scheduler/eventhandlers.go) ---

  /** An unassigned pod appeared. */
  addPod(pod: Pod): void {
    if (!isPendingForScheduler(pod) || this.assumed.has(pod.metadata?.uid ?? '')) return;
    if ((pod.spec?.schedulingGates ?? []).length > 0) {
      this.opts.host.setUnschedulable(pod, SchedulingGatedReason, 'Scheduling is blocked due to non-empty scheduling gates');
      return;
    }
    this.queue.add(pod);
  }

  /** An unassigned pod changed (or was bound, or is being deleted). */
  updatePod(pod: Pod): void {
    if (!isPendingForScheduler(pod)) {
      this.queue.delete(pod.metadata?.uid ?? '');
      return;
    }
    if ((pod.spec?.schedulingGates ?? []).length > 0 || this.assumed.has(pod.metadata?.uid ?? '')) return;
    this.queue.update(pod);
  }

  deletePod(pod: Pod): void {
    this.queue.delete(pod.metadata?.uid ?? '');
    this.nominated.delete(pod.metadata?.uid ?? '');
    this.assumed.delete(pod.metadata?.uid ?? '');
  }

  /** A bound pod was added, changed, ended or deleted, or the node changed: unschedulable pods may fit now. */
  clusterChanged(event: ClusterEvent): void {
    this.queue.moveAllToActiveOrBackoff(pluginInterested(event));
  }

  /** A pod of the node changed (old undefined: added; pod undefined: deleted): the queue and the cluster events it makes. */
  podChanged(old: Pod | undefined, pod: Pod | undefined): void {
    if (pod && isPendingForScheduler(pod)) {
      if (old && isPendingForScheduler(old)) this.updatePod(pod);
      else this.addPod(pod);
    } else if (old && !old.spec?.nodeName) {
      this.queue.delete(old.metadata?.uid ?? '');
      this.nominated.delete(old.metadata?.uid ?? '');
      if (!pod) this.assumed.delete(old.metadata?.uid ?? '');
    }
    const event = assignedPodEvent(old, pod);
    if (event) this.clusterChanged(event);
  }

  /** Resolves once no pod is being scheduled and activeQ is empty. */
  idle(): Promise<void> {
    if (!this.running && this.queue.counts().active === 0 && this.assumed.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.queue.close();
  }

  // --- the loop ---

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = true;
    queueMicrotask(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      for (let info = this.queue.pop(); info && !this.closed; info = this.queue.pop()) {
        try {
          await this.scheduleOne(info);
        } catch (err) {
          this.opts.logger.error('Scheduling a pod failed', { pod: `${info.pod.metadata?.namespace}/${info.pod.metadata?.name}`, err: String(err) });
          this.queue.addUnschedulable(info);
        }
      }
    } finally {
      this.running = false;
      if (this.assumed.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** One scheduling cycle: filters, then bind, or PostFilter and the failure handler. */
  private async scheduleOne(info: QueuedPodInfo): Promise<void> {
    const { host, recorder, filters } = this.opts;
    const pod = info.pod;
    const uid = pod.metadata?.uid ?? '';
    const node = host.node();
    if (!node) {
      this.fail(info, fitErrorMessage(0, [], ''));
      return;
    }
    // addNominatedPods: pods that preempted for room here and are not bound yet keep it from pods of no higher priority.
    const priority = pod.spec?.priority ?? 0;
    const nominated = [...this.nominated.values()].filter((p) => p.metadata?.uid !== uid && (p.spec?.priority ?? 0) >= priority);
    const assigned = host.assignedPods().filter((p) => p.metadata?.uid !== uid);
    const assignedUids = new Set(assigned.map((p) => p.metadata?.uid));
    const assumed = [...this.assumed.values()].filter((p) => p.metadata?.uid !== uid && !assignedUids.has(p.metadata?.uid));
    const nodeInfo = { node, pods: [...assigned, ...assumed, ...nominated] };
    let status: Status | undefined;
    for (const f of filters) {
      status = f.preFilter?.(pod);
      if (status) break;
    }
    if (!status) {
      for (const f of filters) {
        status = f.filter(pod, nodeInfo);
        if (status) break;
      }
    }
    const nodeName = node.metadata?.name ?? '';
    if (!status) {
      this.queue.done(uid);
      this.nominated.delete(uid);
      // A pod with claims is assumed on the node while its binding cycle (PreBind of its volumes,
      // which may wait for a provisioner) runs apart from the scheduling of the next pods.
      if (host.bindVolumes && (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim)) {
        this.assumed.set(uid, pod);
        void this.bindingCycle(info, node, host.bindVolumes.bind(host));
        return;
      }
      await this.bindPod(pod, nodeName);
      return;
    }
    const result = preempt(pod, nodeInfo, status, filters);
    const message = fitErrorMessage(1, [status], result.message);
    if (result.victims.length > 0) {
      for (const v of result.victims) {
        recorder.event(podRef(v), 'Normal', 'Preempted', `Preempted by pod ${uid} on node ${nodeName}`);
        await host.preemptVictim(v, `${defaultSchedulerName}: preempting to accommodate a higher priority pod`);
      }
      this.nominated.set(uid, pod);
      this.fail(info, message, nodeName, status.plugin);
      return;
    }
    this.fail(info, message, pod.status?.nominatedNodeName, status.plugin);
  }

  private async bindPod(pod: Pod, nodeName: string): Promise<void> {
    await this.opts.host.bind(pod, nodeName);
    this.opts.recorder.event(
      podRef(pod),
      'Normal',
      'Scheduled',
      `Successfully assigned ${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''} to ${nodeName}`,
    );
  }

  /** The binding cycle of an assumed pod: PreBind (VolumeBinding), then bind; a failure forgets the pod and fails it. */
  private async bindingCycle(info: QueuedPodInfo, node: Node, bindVolumes: (pod: Pod, node: Node) => Promise<void>): Promise<void> {
    const pod = info.pod;
    const uid = pod.metadata?.uid ?? '';
    try {
      try {
        await bindVolumes(pod, node);
      } catch (err) {
        if (!this.assumed.delete(uid)) return;
        this.fail(info, `running PreBind plugin "VolumeBinding": ${(err as Error).message}`, undefined, 'VolumeBinding');
        return;
      }
      await this.bindPod(pod, node.metadata?.name ?? '');
    } catch (err) {
      this.opts.logger.error('Binding a pod failed', { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, err: String(err) });
      // Retried unless the pod went meanwhile.
      if (this.assumed.has(uid)) this.queue.addUnschedulable(info);
    } finally {
      this.assumed.delete(uid);
      if (!this.running && this.assumed.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** handleSchedulingFailure: the event, the PodScheduled condition, and back to the queue. */
  private fail(info: QueuedPodInfo, message: string, nominatedNodeName?: string, plugin?: string): void {
    info.unschedulablePlugins = new Set(plugin ? [plugin] : []);
    this.opts.recorder.event(podRef(info.pod), 'Warning', 'FailedScheduling', message);
    this.opts.host.setUnschedulable(info.pod, UnschedulableReason, message, nominatedNodeName);
    this.queue.addUnschedulable(info);
  }
}
