// A node joined to a cluster: wires the Node registration and status, the Lease, the API-server pod
// source, status and event sync, mirror pods and the ConfigMap/Secret lookup around an existing pod
// kubelet and runtime, handling API pods as the kubelet's HandlePodAdditions/Updates/Removes do.

import type { Pod } from '../api/types.js';
import { applyV1Defaults } from '../api/defaults.js';
import { aggregateMessage, formatFieldError, type FieldError } from '../api/field-errors.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import type { RuntimeService } from '../runtime/cri.js';
import { runtimePodRules } from '../runtime/pod-rules.js';
import { isTerminalPhase } from '../status/phase.js';
import { LABEL_POD_UID } from '../kuberuntime/container-config.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { ApiClient } from './client.js';
import { EventSink } from './events-sink.js';
import { NodeLease } from './lease.js';
import type { ApiObjectLookup } from './lookup.js';
import { MirrorPods, nameStaticPod } from './mirror.js';
import { DEFAULT_KUBELET_PORT, NodeStatusReporter, type NodeSpecOptions } from './node-status.js';
import { ApiPodSource, type PodHandler } from './pod-source.js';
import type { ChangeType } from './reflector.js';
import { StatusSync, type StatusTarget } from './status-sync.js';

/** The grace of containers whose pod spec is no longer known (the kubelet's minimumGracePeriodInSeconds). */
const ORPHAN_GRACE_SECONDS = 2;

/** The rejection reason for a pod this node's runtime cannot run as written. */
export const UnsupportedPodSpecReason = 'UnsupportedPodSpec';

export interface ClusterNodeOptions {
  client: ApiClient;
  kubelet: PodKubelet;
  runtime: RuntimeService;
  /** The lookup the kubelet was built with. */
  lookup: ApiObjectLookup;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  /** `podvisor/<version>` is reported as the kubelet version. */
  version: string;
  internalIP: string;
  hostname?: string;
  /** daemonEndpoints.kubeletEndpoint.Port; 10250 when unset. */
  kubeletPort?: number;
  labels?: Record<string, string>;
  taints?: NodeSpecOptions['taints'];
  nodeStatusUpdateFrequencyMs?: number;
  leaseDurationSeconds?: number;
  leaseRenewIntervalMs?: number;
  /** Static pods (from --pod-manifest-path, defaulted): run here as `<name>-<node>`, mirrored in the API server. */
  staticPods?: Pod[];
  /** Runtime-specific checks; by default the process runtime's (every container needs a command). */
  validatePod?: (pod: Pod) => FieldError[];
  watchTimeoutSeconds?: number;
  /**
   * The runtime's containers outlive the agent (a runtime service): at start, the sandboxes it still
   * holds are kept for their pods to adopt, and once the API server has listed this node's pods, the
   * sandboxes of pods no source gives any more are stopped and removed.
   */
  adoptRunning?: boolean;
}

export class ClusterNode implements PodHandler {
  readonly nodeStatus: NodeStatusReporter;
  readonly lease: NodeLease;
  readonly statusSync: StatusSync;
  readonly events: EventSink;
  readonly mirrors: MirrorPods;
  readonly source: ApiPodSource;

  private readonly o: ClusterNodeOptions;
  /** The latest API object of each pod from the API server, by uid. */
  private readonly apiPods = new Map<string, Pod>();
  private readonly terminating = new Set<string>();
  private readonly unsubscribe: Array<() => void> = [];
  private nodeUid?: string;
  private listedOnce = false;
  private stopped = false;
  /** Resolves once the sandboxes of a previous agent are known (at once without adoptRunning). */
  private recovered: Promise<void> = Promise.resolve();
  private statics: Pod[] = [];

  constructor(opts: ClusterNodeOptions) {
    this.o = opts;
    const { client, clock, logger, nodeName, kubelet } = opts;
    const alloc = kubelet.nodeAllocatable;
    const capacity = { cpuMilli: alloc.cpuMilli, memoryBytes: alloc.memoryBytes, pods: alloc.pods ?? 110 };
    this.nodeStatus = new NodeStatusReporter({
      client,
      clock,
      logger,
      updateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
      spec: {
        nodeName,
        internalIP: opts.internalIP,
        hostname: opts.hostname,
        kubeletPort: opts.kubeletPort ?? DEFAULT_KUBELET_PORT,
        capacity,
        labels: opts.labels,
        taints: opts.taints,
        kubeletVersion: `podvisor/${opts.version}`,
        containerRuntimeVersion: `${opts.runtime.name}://${opts.version}`,
      },
      readiness: async () => {
        await opts.runtime.version();
        return { ready: true, pressure: kubelet.nodeConditions() };
      },
    });
    this.lease = new NodeLease({
      client,
      clock,
      logger,
      nodeName,
      nodeUid: () => this.nodeUid,
      durationSeconds: opts.leaseDurationSeconds,
      renewIntervalMs: opts.leaseRenewIntervalMs,
    });
    this.mirrors = new MirrorPods({ client, clock, logger, nodeName, nodeUid: () => this.nodeUid, onMirror: (uid) => this.statusSync.resend(uid) });
    this.statusSync = new StatusSync({ client, clock, logger, target: (uid) => this.target(uid) });
    this.events = new EventSink({ client, clock, logger });
    this.source = new ApiPodSource({ client, clock, logger, nodeName, handler: this, watchTimeoutSeconds: opts.watchTimeoutSeconds });
  }

  /** Starts every loop; nothing here waits for the API server (see whenRegistered, whenListed). */
  start(): void {
    const { kubelet } = this.o;
    this.unsubscribe.push(
      kubelet.onPodStatus((pod, status) => this.statusSync.setStatus(pod.metadata!.uid!, status)),
      kubelet.events.onEvent((ev, isUpdate) => this.events.push(ev, isUpdate)),
    );
    this.nodeStatus.start();
    // Static pods run whether or not the API server answers; their mirrors wait for the Node.
    const statics = (this.statics = (this.o.staticPods ?? []).map((p) => nameStaticPod(p, this.o.nodeName)));
    if (this.o.adoptRunning) this.recovered = this.recoverSandboxes(statics);
    void this.recovered.then(() => {
      if (!this.stopped) for (const p of statics) this.runStatic(p);
    });
    void this.nodeStatus.whenRegistered().then((uid) => {
      this.nodeUid = uid;
      if (this.stopped) return;
      // The Lease (owned by the Node) and the API pods follow registration, as in the kubelet.
      this.lease.start();
      this.o.lookup.start();
      this.source.start();
      for (const p of statics) this.mirrors.addStatic(p);
    });
  }

  whenRegistered(): Promise<string> {
    return this.nodeStatus.whenRegistered();
  }

  whenListed(): Promise<void> {
    return this.source.whenListed();
  }

  /** Stops talking to the API server; the pods keep running (the agent decides what to do with them). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    this.nodeStatus.stop();
    this.lease.stop();
    this.mirrors.stop();
    this.statusSync.stop();
    this.events.stop();
    await Promise.all([this.source.stop(), this.o.lookup.stop()]);
    this.o.client.close();
  }

  // --- PodHandler ---

  add(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.apiPods.set(uid, pod);
    if (pod.metadata?.deletionTimestamp) {
      this.beginDeletion(pod);
      return;
    }
    // A pod that finished before we saw it (an earlier run of this node) is not started again.
    if (isTerminalPhase(pod.status?.phase)) return;
    const defaulted = applyV1Defaults(pod);
    const errs = (this.o.validatePod ?? this.defaultValidation())(defaulted);
    if (errs.length) {
      this.o.kubelet.rejectPod(defaulted, UnsupportedPodSpecReason, aggregateMessage(errs.map(formatFieldError)));
      return;
    }
    const admit = this.o.kubelet.admit(defaulted);
    if (!admit.admit) {
      this.o.kubelet.rejectPod(defaulted, admit.reason ?? 'UnexpectedAdmissionError', admit.message ?? '');
      return;
    }
    void Promise.all([this.recovered, this.o.lookup.registerPod(defaulted)]).then(() => {
      const latest = this.apiPods.get(uid);
      if (this.stopped || this.terminating.has(uid) || !latest) return;
      // An update that came while the pod's objects were looked up is not lost.
      this.o.kubelet.startPod(latest === pod ? defaulted : applyV1Defaults(latest));
    });
  }

  update(pod: Pod, _old: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.apiPods.set(uid, pod);
    if (pod.metadata?.deletionTimestamp) this.beginDeletion(pod);
    // The fields a bound pod may still change (activeDeadlineSeconds, images, metadata) and the
    // conditions other clients write into its status (readiness gates) go to its worker.
    else this.o.kubelet.updatePod(applyV1Defaults(pod));
  }

  remove(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.apiPods.delete(uid);
    // Gone from the API server (deleted with grace 0 elsewhere, or our own final delete): stop it.
    const grace = pod.metadata?.deletionGracePeriodSeconds;
    void this.o.kubelet.terminatePod(uid, grace === undefined || grace === null ? {} : { gracePeriodSeconds: grace }).then(() => this.forget(pod));
  }

  mirror(type: ChangeType, pod: Pod): void {
    this.mirrors.observe(type, pod);
  }

  listed(): void {
    // A relist follows a broken watch, usually an API server that was away: resend what it may have missed.
    if (this.listedOnce) {
      this.statusSync.resyncAll();
      this.nodeStatus.nudge();
      this.mirrors.sync();
    } else if (this.o.adoptRunning) {
      void this.recovered.then(() => this.removeOrphans());
    }
    this.listedOnce = true;
  }

  // --- internals ---

  private defaultValidation(): (pod: Pod) => FieldError[] {
    return runtimePodRules(this.o.runtime.capabilities);
  }

  private target(uid: string): StatusTarget | undefined {
    if (this.mirrors.isStatic(uid)) return this.mirrors.target(uid);
    const p = this.apiPods.get(uid);
    if (!p) return undefined;
    return { namespace: p.metadata!.namespace ?? 'default', name: p.metadata!.name!, uid };
  }

  /** Graceful deletion: terminate with the pod's grace, send the final status, then DELETE with grace 0. */
  private beginDeletion(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    const grace = pod.metadata?.deletionGracePeriodSeconds;
    const opts = grace === undefined || grace === null ? {} : { gracePeriodSeconds: grace };
    if (this.terminating.has(uid)) {
      // A shorter grace (a second delete) shortens the running termination.
      void this.o.kubelet.terminatePod(uid, opts);
      return;
    }
    this.terminating.add(uid);
    void (async () => {
      await this.recovered;
      // A pod deleted while this agent was down runs in a sandbox an earlier run left, which no
      // worker holds: its containers are stopped with the pod's grace before the final delete.
      if (!this.o.kubelet.getPod(uid)) await this.removeSandboxesOf(uid, grace ?? ORPHAN_GRACE_SECONDS);
      await this.o.kubelet.terminatePod(uid, opts);
      await this.statusSync.flushed(uid);
      if (this.stopped) return;
      const target = this.target(uid) ?? { namespace: pod.metadata!.namespace ?? 'default', name: pod.metadata!.name!, uid };
      if (await this.statusSync.finishDeletion(target)) this.forget(pod);
    })().catch((err: Error) => this.o.logger.error('Finishing pod deletion failed', { pod: pod.metadata?.name, err: err.message }));
  }

  private forget(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    this.statusSync.forget(uid);
    this.o.lookup.unregisterPod(pod);
    // As the kubelet's housekeeping: the finished pod's worker, status and sandbox go.
    void this.o.kubelet.forgetPod(uid).catch(() => {});
  }

  /** Every ready sandbox of the runtime is kept for adoption until the sources have spoken. */
  private async recoverSandboxes(statics: Pod[]): Promise<void> {
    try {
      const held = await this.o.runtime.listPodSandbox();
      const staticUids = new Set(statics.map((p) => p.metadata?.uid));
      const others: Pod[] = held
        .filter((sb) => !staticUids.has(sb.labels?.[LABEL_POD_UID] ?? sb.metadata.uid))
        .map((sb) => ({ metadata: { name: sb.metadata.name, namespace: sb.metadata.namespace, uid: sb.labels?.[LABEL_POD_UID] ?? sb.metadata.uid } }) as Pod);
      const r = await this.o.kubelet.recover([...statics, ...others]);
      if (held.length) this.o.logger.info('Found the pod sandboxes of an earlier run', { sandboxes: held.length, adoptable: r.adopted });
    } catch (err) {
      this.o.logger.warn("Could not list the runtime's pod sandboxes; starting pods afresh", { err: (err as Error).message });
    }
  }

  /** After the first list: sandboxes of pods neither the API server nor the static source gives are stopped and removed. */
  private async removeOrphans(): Promise<void> {
    const { runtime, kubelet, logger } = this.o;
    const wanted = new Set([...this.apiPods.keys(), ...this.statics.map((p) => p.metadata?.uid ?? '')]);
    const mine = kubelet.sandboxIds();
    try {
      for (const sb of await runtime.listPodSandbox()) {
        const uid = sb.labels?.[LABEL_POD_UID] ?? sb.metadata.uid;
        if (wanted.has(uid) || mine.has(sb.id)) continue;
        logger.info('Removing the sandbox of a pod no longer bound to this node', { pod: `${sb.metadata.namespace}/${sb.metadata.name}`, uid });
        await this.removeSandbox(sb.id, ORPHAN_GRACE_SECONDS);
      }
    } catch (err) {
      logger.warn('Failed to remove orphaned pod sandboxes', { err: (err as Error).message });
    }
  }

  /** Stops and removes the runtime's sandboxes of a pod UID that no worker holds. */
  private async removeSandboxesOf(uid: string, graceSeconds: number): Promise<void> {
    try {
      for (const sb of await this.o.runtime.listPodSandbox()) {
        if ((sb.labels?.[LABEL_POD_UID] ?? sb.metadata.uid) !== uid) continue;
        this.o.logger.info('Stopping the containers of a pod deleted while the agent was away', { pod: `${sb.metadata.namespace}/${sb.metadata.name}`, uid });
        await this.removeSandbox(sb.id, graceSeconds);
      }
    } catch (err) {
      this.o.logger.warn('Failed to remove the sandbox of a deleted pod', { uid, err: (err as Error).message });
    }
  }

  private async removeSandbox(id: string, graceSeconds: number): Promise<void> {
    const { runtime } = this.o;
    const running = await runtime.listContainers({ podSandboxId: id, state: 'CONTAINER_RUNNING' });
    await Promise.all(running.map((c) => runtime.stopContainer(c.id, graceSeconds)));
    await runtime.stopPodSandbox(id);
    await runtime.removePodSandbox(id);
  }

  private runStatic(pod: Pod): void {
    const k = this.o.kubelet;
    const admit = k.admit(pod);
    if (!admit.admit) k.rejectPod(pod, admit.reason ?? 'UnexpectedAdmissionError', admit.message ?? '');
    else k.startPod(pod);
  }
}
