// The node's pod registry, as the API server's storage is for pods bound to this node: every pod from
// every source (static files, a manifest URL, the API) by namespace/name, with a resourceVersion
// counter shared with events, a bounded history of watch events (a watch from a version older than it
// holds gets 410 Expired), graceful deletion (deletionTimestamp until the pod is terminated, then
// DELETED), and persistence of API pods.

import { randomUUID } from 'node:crypto';
import type { Event, Pod, PodStatus } from '../api/types.js';
import type { ListResult, Watch, WatchEvent } from '../kubeapi/backend.js';
import { alreadyExists, ApiError, badRequest, conflict, notFound as notFoundError } from '../http/status.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import { getPodQOS } from '../status/qos.js';
import { toRFC3339 } from '../status/time.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { storing } from './storage-full.js';

/** Where a pod came from: a static-pod file, a manifest URL, or the API. */
export interface PodOrigin {
  source: 'file' | 'http' | 'api';
  /** The file path or URL; `api` for API pods. */
  from: string;
}

/** Keeps API pods across agent restarts. */
export interface PodStore {
  save(pod: Pod): Promise<void>;
  remove(pod: Pod): Promise<void>;
}

export interface PodRegistryOptions {
  kubelet: PodKubelet;
  clock: Clock;
  logger: Logger;
  store?: PodStore;
  /** Watch events kept for resuming watches (default 1000 per kind). */
  historyLimit?: number;
  /** Told once per pod when it first reaches Running, with the seconds since the agent took it. */
  onPodStarted?: (seconds: number) => void;
}

interface Entry {
  key: string;
  pod: Pod;
  origin: PodOrigin;
  rv: number;
  /** When the agent took the pod (for the start-duration metric). */
  seenAt: number;
  started?: boolean;
  /** Set once deletion began; resolves when the pod is gone. */
  deleting?: Promise<void>;
  /** An API pod's deletion being recorded (its persisted file removed) before anything of it is killed. */
  recordingDeletion?: Promise<void>;
  /** A pod of the same name waiting for this one to terminate (a static pod's new version). */
  next?: { pod: Pod; origin: PodOrigin };
  /** An API pod not bound to the node yet (no spec.nodeName): the scheduler's status, the kubelet has it not. */
  unbound?: { status: PodStatus };
}

interface History<T> {
  items: Array<{ rv: number; ev: WatchEvent<T> }>;
  /** Lowest resourceVersion a watch may resume from. */
  floor: number;
  watchers: Set<(ev: WatchEvent<T>) => void>;
}

export const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;
const keyOf = (pod: Pod) => podKey(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '');
const uidOf = (pod: Pod) => pod.metadata?.uid ?? '';

export function notFound(name: string): ApiError {
  return notFoundError('pods', name);
}

export class PodRegistry {
  private readonly opts: PodRegistryOptions;
  private readonly byKey = new Map<string, Entry>();
  private readonly byUid = new Map<string, Entry>();
  private rv = 1;
  private readonly limit: number;
  private readonly podHistory: History<Pod> = { items: [], floor: 0, watchers: new Set() };
  private readonly eventHistory: History<Event> = { items: [], floor: 0, watchers: new Set() };
  private readonly eventMeta = new Map<string, { rv: number; uid: string }>();
  private readonly unsubscribe: Array<() => void> = [];

  constructor(opts: PodRegistryOptions) {
    this.opts = opts;
    this.limit = opts.historyLimit ?? 1000;
    const { kubelet } = opts;
    this.unsubscribe.push(
      kubelet.onPodStatus((pod, status) => {
        const e = this.byUid.get(uidOf(pod));
        if (!e) return;
        if (!e.started && status.phase === 'Running') {
          e.started = true;
          opts.onPodStarted?.((opts.clock.now() - e.seenAt) / 1000);
        }
        this.modified(e);
      }),
      kubelet.events.onEvent((ev) => this.recordEvent(ev)),
    );
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  // --- reads ---

  list(): ListResult<Pod> {
    return { items: [...this.byKey.values()].map((e) => this.view(e)), resourceVersion: String(this.rv) };
  }

  get(namespace: string, name: string): Pod | undefined {
    const e = this.byKey.get(podKey(namespace, name));
    return e && this.view(e);
  }

  origin(namespace: string, name: string): PodOrigin | undefined {
    return this.byKey.get(podKey(namespace, name))?.origin;
  }

  /** The UIDs of every pod held, those waiting to replace one included. */
  podUids(): string[] {
    const out: string[] = [];
    for (const e of this.byKey.values()) {
      out.push(uidOf(e.pod));
      if (e.next) out.push(uidOf(e.next.pod));
    }
    return out;
  }

  /** Every pod's namespace, plus `default`. */
  namespaces(): string[] {
    return [...new Set(['default', ...[...this.byKey.values()].map((e) => e.pod.metadata?.namespace ?? 'default')])].sort();
  }

  /** Pods of one origin (a file, a URL, the API), by UID. */
  podsFrom(origin: PodOrigin): Map<string, Pod> {
    const out = new Map<string, Pod>();
    for (const e of this.byKey.values()) {
      if (e.origin.source === origin.source && e.origin.from === origin.from && !e.deleting) out.set(uidOf(e.pod), e.pod);
      if (e.next && e.next.origin.source === origin.source && e.next.origin.from === origin.from) out.set(uidOf(e.next.pod), e.next.pod);
    }
    return out;
  }

  /**
   * Resolves once the kubelet has published a status for each of the pods (by UID) that are still
   * held, or after ms. An agent restarted on its root dir waits so, before its controllers and
   * clients read the restored pods: an API server keeps a pod's last status across a kubelet
   * restart, and here the pod has none until its first sync.
   */
  async firstStatuses(uids: readonly string[], ms: number): Promise<{ waiting: number }> {
    const waiting = () => uids.filter((uid) => this.byUid.has(uid) && !this.byUid.get(uid)!.unbound && !this.opts.kubelet.getPodStatus(uid)).length;
    if (waiting() === 0) return { waiting: 0 };
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const unsubscribe = this.opts.kubelet.onPodStatus(() => {
      if (waiting() === 0) done();
    });
    const timer = this.opts.clock.setTimer(ms, () => done());
    try {
      await all;
    } finally {
      unsubscribe();
      timer.cancel();
    }
    return { waiting: waiting() };
  }

  // --- writes ---

  /** Takes a new pod (already defaulted and validated, with its UID): admits and starts it. 409 if the name is taken. */
  async add(pod: Pod, origin: PodOrigin): Promise<Pod> {
    const key = keyOf(pod);
    if (this.byKey.has(key)) throw alreadyExists('pods', pod.metadata?.name ?? '');
    const meta = pod.metadata as { creationTimestamp?: string };
    meta.creationTimestamp ??= toRFC3339(this.opts.clock.now());
    const store = this.opts.store;
    if (origin.source === 'api' && store) await storing('pods', pod.metadata?.name ?? '', () => store.save(pod));
    return this.admitAndStart(key, pod, origin);
  }

  /**
   * Takes back an API pod the store already holds (an agent restarted on its root dir), as add
   * does but without writing it again: it is on disk as it was read. 409 if the name is taken.
   */
  restore(pod: Pod): Pod {
    const key = keyOf(pod);
    if (this.byKey.has(key)) throw alreadyExists('pods', pod.metadata?.name ?? '');
    return this.admitAndStart(key, pod, { source: 'api', from: 'api' });
  }

  /**
   * Takes the pod: a pod bound to the node (spec.nodeName: static pods, API pods bound by hand or by
   * the scheduler) goes to the kubelet's admission, then its worker; an API pod without a node waits
   * Pending for the scheduler (bind).
   */
  private admitAndStart(key: string, pod: Pod, origin: PodOrigin): Pod {
    const e: Entry = { key, pod, origin, rv: this.next(), seenAt: this.opts.clock.now() };
    this.byKey.set(key, e);
    this.byUid.set(uidOf(pod), e);
    if (!pod.spec?.nodeName) e.unbound = { status: { phase: 'Pending', qosClass: getPodQOS(pod) } };
    else this.admit(pod);
    this.publish(this.podHistory, e.rv, { type: 'ADDED', object: this.view(e) });
    return this.view(e);
  }

  private admit(pod: Pod): void {
    const { kubelet } = this.opts;
    const admit = kubelet.admit(pod);
    if (admit.admit) kubelet.startPod(pod);
    else kubelet.rejectPod(pod, admit.reason ?? 'UnknownReason', admit.message ?? '');
  }

  /**
   * pods/binding: the scheduler assigns a pending pod to the node (spec.nodeName, persisted), which the
   * kubelet then admits and starts. 409 when the pod is gone, replaced or bound already.
   */
  async bind(namespace: string, name: string, uid: string, nodeName: string): Promise<Pod> {
    const e = this.byKey.get(podKey(namespace, name));
    if (!e || uidOf(e.pod) !== uid) throw notFound(name);
    if (!e.unbound || e.deleting || e.recordingDeletion) {
      throw conflict('pods', name, `pod ${name} is already assigned to node ${JSON.stringify(e.pod.spec?.nodeName ?? '')}`);
    }
    const bound: Pod = { ...e.pod, spec: { ...e.pod.spec!, nodeName } };
    const store = this.opts.store;
    if (e.origin.source === 'api' && store) await storing('pods', name, () => store.save(bound));
    if (this.byKey.get(e.key) !== e || !e.unbound) throw conflict('pods', name, 'the pod changed while it was bound');
    e.pod = bound;
    e.unbound = undefined;
    this.admit(bound);
    this.modified(e);
    return this.view(e);
  }

  /**
   * Marks a bound pod about to be deleted by a controller (preemption, the taint manager) with the
   * DisruptionTarget condition its status then carries, as those controllers patch it before deleting.
   */
  markDisruptionTarget(uid: string, reason: string, message: string): void {
    const e = this.byUid.get(uid);
    if (!e || e.unbound) return;
    const condition = { type: 'DisruptionTarget', status: 'True', lastTransitionTime: toRFC3339(this.opts.clock.now()), reason, message };
    const conditions = [...(e.pod.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'), condition];
    e.pod = { ...e.pod, status: { ...(e.pod.status ?? {}), conditions } };
    this.opts.kubelet.updatePod(e.pod);
  }

  /**
   * The scheduler's verdict on a pending pod: PodScheduled=False with its reason and message (the
   * transition time kept while the status stays False), and nominatedNodeName when preemption chose
   * the node. Nothing is published when nothing changed.
   */
  setSchedulingStatus(uid: string, reason: string, message: string, nominatedNodeName?: string): void {
    const e = this.byUid.get(uid);
    if (!e?.unbound) return;
    const was = e.unbound.status;
    const old = was.conditions?.find((c) => c.type === 'PodScheduled');
    if (old?.reason === reason && old.message === message && was.nominatedNodeName === nominatedNodeName) return;
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      lastProbeTime: null as unknown as string,
      lastTransitionTime: old?.status === 'False' && old.lastTransitionTime ? old.lastTransitionTime : toRFC3339(this.opts.clock.now()),
      reason,
      message,
    };
    e.unbound.status = { phase: 'Pending', conditions: [condition], qosClass: getPodQOS(e.pod), ...(nominatedNodeName ? { nominatedNodeName } : {}) };
    this.modified(e);
  }

  /**
   * A source's pod whose content changed (a new UID, same name): the old pod is terminated
   * gracefully, then the new one is started, as the kubelet orders static pod updates.
   */
  replace(oldUid: string, pod: Pod, origin: PodOrigin): void {
    const e = this.byUid.get(oldUid);
    if (!e) {
      void this.add(pod, origin).catch((err: Error) => this.opts.logger.error('Failed to add pod', { pod: keyOf(pod), err: err.message }));
      return;
    }
    e.next = { pod, origin };
    void this.delete(e.pod.metadata?.namespace ?? 'default', e.pod.metadata?.name ?? '', {}, true);
  }

  /** Applies an allowed change to a live pod (validated by the caller); the worker restarts changed containers. */
  async update(pod: Pod): Promise<Pod> {
    const e = this.byKey.get(keyOf(pod));
    if (!e || uidOf(e.pod) !== uidOf(pod)) throw notFound(pod.metadata?.name ?? '');
    // A pod whose deletion is recorded is not written back (it would come back after a restart).
    const store = this.opts.store;
    if (e.origin.source === 'api' && !e.deleting && !e.recordingDeletion && store) await storing('pods', pod.metadata?.name ?? '', () => store.save(pod));
    e.pod = pod;
    this.opts.kubelet.updatePod(pod);
    this.modified(e);
    return this.view(e);
  }

  /**
   * Begins graceful deletion (gracePeriodSeconds overrides the pod's; 0 kills at once); resolves to
   * the pod with its deletionTimestamp, or as it was when it is gone already. `internal` skips the
   * check that only API pods may be deleted through the API.
   */
  async delete(
    namespace: string,
    name: string,
    opts: { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: boolean } = {},
    internal = false,
  ): Promise<Pod> {
    const e = this.byKey.get(podKey(namespace, name));
    if (!e) throw notFound(name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== uidOf(e.pod)) {
      throw conflict('pods', name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${uidOf(e.pod)}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== String(e.rv)) {
      throw conflict('pods', name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${e.rv}`);
    }
    if (!internal && e.origin.source !== 'api') {
      throw new ApiError(
        403,
        'Forbidden',
        `pods ${JSON.stringify(name)} is forbidden: a static pod from ${e.origin.from} is removed by removing it from its source`,
        { name, kind: 'pods' },
      );
    }
    if (opts.dryRun) return this.view(e);
    if (!e.deleting) {
      await this.recordDeletion(e, name);
      if (this.byKey.get(e.key) !== e) return this.view(e);
    }
    const uid = uidOf(e.pod);
    const { kubelet } = this.opts;
    const grace = opts.gracePeriodSeconds;
    if (e.deleting) {
      if (grace !== undefined) void kubelet.terminatePod(uid, { gracePeriodSeconds: grace });
      return this.view(e);
    }
    const terminated = kubelet.terminatePod(uid, grace !== undefined ? { gracePeriodSeconds: grace } : {});
    e.deleting = terminated.then(
      () => this.finishDeletion(e),
      (err: Error) => {
        this.opts.logger.error('Pod termination failed', { pod: e.key, err: err.message });
        return this.finishDeletion(e);
      },
    );
    // A pod that never ran (rejected) or has finished is gone at once.
    const meta = kubelet.getPod(uid)?.metadata as { deletionTimestamp?: string } | undefined;
    if (!meta?.deletionTimestamp) {
      await e.deleting;
      return this.view(e);
    }
    this.modified(e);
    return this.view(e);
  }

  /**
   * An API pod's deletion reaches the disk before anything of it is killed: an agent that dies while
   * its containers stop does not bring the pod back (its restart ends what is left of it, as of any
   * pod no source has). When the record cannot be written, nothing is killed and the caller is told.
   */
  private async recordDeletion(e: Entry, name: string): Promise<void> {
    const store = this.opts.store;
    if (e.origin.source !== 'api' || !store) return;
    e.recordingDeletion ??= store.remove(e.pod);
    try {
      await e.recordingDeletion;
    } catch (err) {
      e.recordingDeletion = undefined;
      throw new ApiError(500, 'InternalError', `cannot record the deletion of pod ${JSON.stringify(name)}, so it keeps running: ${(err as Error).message}`);
    }
  }

  /** Resolves once the pod of that name (as it is now) is gone; at once when there is none. */
  async whenGone(namespace: string, name: string): Promise<void> {
    const e = this.byKey.get(podKey(namespace, name));
    if (e?.deleting) await e.deleting;
  }

  // --- watches ---

  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch {
    return this.watch(this.podHistory, resourceVersion, onEvent, () => [...this.byKey.values()].map((e) => this.view(e)));
  }

  listEvents(): ListResult<Event> {
    return { items: this.opts.kubelet.events.list().map((ev) => this.kubeEvent(ev)), resourceVersion: String(this.rv) };
  }

  watchEvents(resourceVersion: string, onEvent: (ev: WatchEvent<Event>) => void): Watch {
    return this.watch(this.eventHistory, resourceVersion, onEvent, () => this.listEvents().items);
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.podHistory.watchers.clear();
    this.eventHistory.watchers.clear();
  }

  // --- internals ---

  private next(): number {
    return ++this.rv;
  }

  private view(e: Entry): Pod {
    const uid = uidOf(e.pod);
    const current = e.unbound ? e.pod : (this.opts.kubelet.getPod(uid) ?? e.pod);
    const status: PodStatus = e.unbound?.status ?? this.opts.kubelet.getPodStatus(uid) ?? { phase: 'Pending', qosClass: getPodQOS(e.pod) };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...current.metadata, resourceVersion: String(e.rv) },
      spec: current.spec,
      status,
    } as Pod;
  }

  private modified(e: Entry): void {
    if (this.byKey.get(e.key) !== e) return;
    e.rv = this.next();
    this.publish(this.podHistory, e.rv, { type: 'MODIFIED', object: this.view(e) });
  }

  private async finishDeletion(e: Entry): Promise<void> {
    if (this.byKey.get(e.key) !== e) return;
    const last = this.view(e);
    this.byKey.delete(e.key);
    this.byUid.delete(uidOf(e.pod));
    const rv = this.next();
    last.metadata = { ...last.metadata, resourceVersion: String(rv) };
    this.publish(this.podHistory, rv, { type: 'DELETED', object: last });
    if (e.origin.source === 'api') {
      await this.opts.store?.remove(e.pod).catch((err: Error) => this.opts.logger.error('Failed to remove a persisted pod', { pod: e.key, err: err.message }));
    }
    await this.opts.kubelet.forgetPod(uidOf(e.pod));
    if (e.next) {
      await this.add(e.next.pod, e.next.origin).catch((err: Error) => this.opts.logger.error('Failed to add pod', { pod: e.key, err: err.message }));
    }
  }

  /** The event as the API serves it: its store's name and namespace, with a resourceVersion, uid and creationTimestamp. */
  private kubeEvent(ev: Event): Event {
    const name = ev.metadata?.name ?? '';
    let meta = this.eventMeta.get(name);
    if (!meta) {
      meta = { rv: this.next(), uid: randomUUID() };
      this.eventMeta.set(name, meta);
    }
    return {
      ...ev,
      metadata: {
        ...ev.metadata,
        name,
        namespace: ev.metadata?.namespace ?? 'default',
        resourceVersion: String(meta.rv),
        uid: meta.uid,
        creationTimestamp: ev.firstTimestamp ?? undefined,
      },
    };
  }

  private recordEvent(ev: Event): void {
    const name = ev.metadata?.name ?? '';
    const known = this.eventMeta.get(name);
    const rv = this.next();
    this.eventMeta.set(name, { rv, uid: known?.uid ?? randomUUID() });
    this.publish(this.eventHistory, rv, { type: known ? 'MODIFIED' : 'ADDED', object: this.kubeEvent(ev) });
    // Names of events the store no longer holds are not kept forever.
    if (this.eventMeta.size > 4 * this.limit + 1000) {
      const live = new Set(this.opts.kubelet.events.list().map((x) => x.metadata?.name ?? ''));
      for (const n of this.eventMeta.keys()) if (!live.has(n)) this.eventMeta.delete(n);
    }
  }

  private publish<T>(h: History<T>, rv: number, ev: WatchEvent<T>): void {
    h.items.push({ rv, ev });
    if (h.items.length > this.limit) {
      const dropped = h.items.splice(0, h.items.length - this.limit);
      h.floor = dropped[dropped.length - 1]!.rv;
    }
    for (const w of [...h.watchers]) {
      try {
        w(ev);
      } catch (err) {
        this.opts.logger.warn('Watch listener failed', { err: (err as Error).message });
      }
    }
  }

  private watch<T>(h: History<T>, resourceVersion: string, onEvent: (ev: WatchEvent<T>) => void, current: () => T[]): Watch {
    if (resourceVersion === '' || resourceVersion === '0') {
      for (const object of current()) onEvent({ type: 'ADDED', object });
    } else {
      if (!/^[0-9]+$/.test(resourceVersion)) {
        throw badRequest(`invalid resource version "${resourceVersion}"`);
      }
      const from = Number(resourceVersion);
      if (from < h.floor) {
        throw new ApiError(410, 'Expired', `too old resource version: ${from} (${h.floor})`);
      }
      for (const { rv, ev } of h.items) if (rv > from) onEvent(ev);
    }
    h.watchers.add(onEvent);
    return { stop: () => void h.watchers.delete(onEvent) };
  }
}
