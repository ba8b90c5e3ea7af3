// Pod statuses to the API server, as the kubelet's status manager syncs them: every change of a
// pod's status is queued, changes made while a patch is in flight coalesce into one later patch, each
// patch is a strategic merge patch of pods/<name>/status carrying the pod's uid (so it never lands on
// a recreated pod of the same name), failures are retried with back-off, and once a deleted pod is
// terminal and its final status is sent, the deletion is finished with DELETE gracePeriodSeconds=0
// and a uid precondition.

import type { PodStatus } from '../api/types.js';
import { kubeletOwnedConditionTypes } from '../status/conditions.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isNotFound, isRetriable, podPath, RetryBackoff, STRATEGIC_MERGE_PATCH, type ApiClient } from './client.js';

/** The API object a local pod's status goes to (itself, or a static pod's mirror pod). */
export interface StatusTarget {
  namespace: string;
  name: string;
  uid: string;
}

export interface StatusSyncOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  /** The API pod for a local pod uid; undefined holds the status back (no mirror pod yet). */
  target: (podUid: string) => StatusTarget | undefined;
  /** Patches in flight at once. */
  concurrency?: number;
}

interface PodState {
  latest?: PodStatus;
  /** JSON of the last status the API server accepted, and that status. */
  sentJSON?: string;
  sent?: PodStatus;
  inFlight: boolean;
  /** Resolvers waiting until the latest status is sent. */
  waiters: Array<() => void>;
}

/** The status patch: the new status, with null for top-level fields the last sent status had and this one drops. */
export function statusPatch(uid: string, status: PodStatus, previous: PodStatus | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { ...status };
  // As mergePodStatus: the conditions other clients own (readiness gates) are theirs to write; the
  // strategic merge keeps them on the server as they are now.
  if (status.conditions) body.conditions = status.conditions.filter((c) => kubeletOwnedConditionTypes.has(c.type) || c.type === 'DisruptionTarget');
  for (const k of Object.keys(previous ?? {})) if (!(k in body) || body[k] === undefined) body[k] = null;
  return { metadata: { uid }, status: body };
}

export class StatusSync {
  private readonly o: StatusSyncOptions;
  private readonly pods = new Map<string, PodState>();
  private readonly queue = new Set<string>();
  private readonly backoff = new RetryBackoff();
  private retryTimer?: Timer;
  private active = 0;
  private stopped = false;
  /** Patches the API server accepted. */
  patches = 0;

  constructor(opts: StatusSyncOptions) {
    this.o = opts;
  }

  /** A new status of a local pod (from the status manager). */
  setStatus(podUid: string, status: PodStatus): void {
    const s = this.state(podUid);
    s.latest = status;
    this.enqueue(podUid);
  }

  /** Sends the pod's status again in full: its target is a new object (a recreated mirror pod). */
  resend(podUid: string): void {
    const s = this.pods.get(podUid);
    if (!s) return;
    s.sentJSON = undefined;
    s.sent = undefined;
    this.enqueue(podUid);
  }

  /** Resends every status not known to be on the API server, and forgets what was sent (a resync). */
  resyncAll(): void {
    // The API server is back: no reason to wait out the back-off of the failures before.
    this.retryTimer?.cancel();
    this.retryTimer = undefined;
    this.backoff.reset();
    for (const [uid, s] of this.pods) {
      s.sentJSON = undefined;
      this.enqueue(uid);
    }
  }

  /** Resolves once the latest status of the pod is on the API server (or the sync stopped). */
  flushed(podUid: string): Promise<void> {
    const s = this.pods.get(podUid);
    if (!s || this.stopped || !this.isDirty(s)) return Promise.resolve();
    return new Promise((r) => s.waiters.push(r));
  }

  forget(podUid: string): void {
    const s = this.pods.get(podUid);
    this.pods.delete(podUid);
    this.queue.delete(podUid);
    for (const w of s?.waiters.splice(0) ?? []) w();
  }

  /**
   * DELETE with gracePeriodSeconds=0 and a uid precondition, retried while the API server is
   * unreachable. Resolves true when the pod is gone (deleted now, or already).
   */
  async finishDeletion(target: StatusTarget): Promise<boolean> {
    const backoff = new RetryBackoff();
    while (!this.stopped) {
      try {
        await this.o.client.request('DELETE', podPath(target.namespace, target.name), {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: target.uid } },
        });
        return true;
      } catch (err) {
        // 404: gone already; 409: the name now holds another pod, ours is gone.
        if (isNotFound(err) || (err as { code?: number }).code === 409) return true;
        if (!isRetriable(err)) {
          this.o.logger.error('Failed to delete pod', { pod: `${target.namespace}/${target.name}`, err: (err as Error).message });
          return false;
        }
        await this.o.clock.sleep(backoff.next());
      }
    }
    return false;
  }

  stop(): void {
    this.stopped = true;
    this.retryTimer?.cancel();
    for (const s of this.pods.values()) for (const w of s.waiters.splice(0)) w();
  }

  private state(uid: string): PodState {
    let s = this.pods.get(uid);
    if (!s) {
      s = { inFlight: false, waiters: [] };
      this.pods.set(uid, s);
    }
    return s;
  }

  private isDirty(s: PodState): boolean {
    return s.latest !== undefined && JSON.stringify(s.latest) !== s.sentJSON;
  }

  private enqueue(uid: string): void {
    if (this.stopped) return;
    this.queue.add(uid);
    this.pump();
  }

  private pump(): void {
    const limit = this.o.concurrency ?? 8;
    for (const uid of [...this.queue]) {
      if (this.active >= limit || this.retryTimer) return;
      const s = this.pods.get(uid);
      this.queue.delete(uid);
      if (!s || s.inFlight) continue; // a patch in flight re-queues itself when it ends
      if (!this.isDirty(s)) {
        for (const w of s.waiters.splice(0)) w();
        continue;
      }
      void this.send(uid, s);
    }
  }

  private async send(uid: string, s: PodState): Promise<void> {
    const target = this.o.target(uid);
    if (!target) return; // held back until requeue()
    const status = s.latest!;
    const json = JSON.stringify(status);
    s.inFlight = true;
    this.active++;
    let retry = false;
    try {
      await this.o.client.request('PATCH', podPath(target.namespace, target.name, 'status'), {
        body: statusPatch(target.uid, status, s.sent),
        contentType: STRATEGIC_MERGE_PATCH,
      });
      s.sentJSON = json;
      s.sent = status;
      this.patches++;
      this.backoff.reset();
    } catch (err) {
      if (isNotFound(err)) {
        // The pod is gone from the API server: nothing more to report.
        s.sentJSON = json;
      } else if (isRetriable(err)) {
        retry = true;
      } else {
        this.o.logger.error('Failed to update status for pod', { pod: `${target.namespace}/${target.name}`, err: (err as Error).message });
        s.sentJSON = json;
      }
    } finally {
      s.inFlight = false;
      this.active--;
    }
    if (this.stopped || !this.pods.has(uid)) return;
    if (retry) {
      this.queue.add(uid);
      if (!this.retryTimer) {
        const delay = this.backoff.next();
        this.retryTimer = this.o.clock.setTimer(delay, () => {
          this.retryTimer = undefined;
          this.pump();
        });
      }
      return;
    }
    if (this.isDirty(s)) this.queue.add(uid);
    else for (const w of s.waiters.splice(0)) w();
    this.pump();
  }
}
