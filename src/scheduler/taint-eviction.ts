// The taint manager's NoExecute eviction (pkg/controller/tainteviction/taint_eviction.go) for the pods
// bound to this node: a pod that does not tolerate one of the node's NoExecute taints is deleted at
// once; one that tolerates them all for a while (tolerationSeconds) is deleted when the shortest of
// those runs out, counted from when the taints were seen; one that tolerates them forever stays. A
// change of the taints, or of the pod's tolerations, starts its count again; removing the taints
// cancels it. Each deletion is recorded as TaintManagerEviction on the pod.

import type { Node, Pod, Taint, Toleration } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { holdsNode } from './framework.js';
import { tolerates } from './plugins/tainttoleration.js';

export interface TaintEvictionOptions {
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  node(): Node | undefined;
  /** The pods bound to the node. */
  pods(): Pod[];
  /** Deletes the pod gracefully. */
  evict(pod: Pod): Promise<void>;
}

/**
 * getMinTolerationTime over the tolerations that match the taints: -1 when every taint is tolerated
 * forever, else the shortest tolerationSeconds in ms (0 when one is negative or zero); undefined when
 * a taint is not tolerated at all.
 */
export function minTolerationMs(taints: readonly Taint[], tolerations: readonly Toleration[]): number | undefined {
  let min = -1;
  for (const taint of taints) {
    const used = tolerations.filter((t) => (t.effect === 'NoExecute' || !t.effect) && tolerates(t, taint));
    if (used.length === 0) return undefined;
    for (const t of used) {
      if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
      const ms = Math.max(0, t.tolerationSeconds) * 1000;
      min = min < 0 ? ms : Math.min(min, ms);
    }
  }
  return min;
}

export class TaintEvictionController {
  /** Pending evictions by pod UID: when, and for which taints and tolerations. */
  private readonly scheduled = new Map<string, { key: string; timer: Timer }>();
  private readonly evicting = new Set<string>();

  constructor(private readonly o: TaintEvictionOptions) {}

  /** Looks at every pod against the node's NoExecute taints now (on a change of the node or of a pod). */
  sync(): void {
    const taints = (this.o.node()?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
    const live = new Set<string>();
    for (const pod of this.o.pods()) {
      const uid = pod.metadata?.uid ?? '';
      if (!pod.spec?.nodeName || !holdsNode(pod) || pod.metadata?.deletionTimestamp) continue;
      live.add(uid);
      if (taints.length === 0) {
        this.cancel(uid);
        continue;
      }
      const tolerations = pod.spec?.tolerations ?? [];
      const min = minTolerationMs(taints, tolerations);
      const key = JSON.stringify([taints.map((t) => [t.key, t.value ?? '']), tolerations]);
      if (min === undefined || min === 0) {
        this.cancel(uid);
        this.evict(pod);
      } else if (min < 0) {
        this.cancel(uid);
      } else if (this.scheduled.get(uid)?.key !== key) {
        this.cancel(uid);
        const timer = this.o.clock.setTimer(min, () => {
          this.scheduled.delete(uid);
          const now = this.o.pods().find((p) => p.metadata?.uid === uid);
          if (now) this.evict(now);
        });
        this.scheduled.set(uid, { key, timer });
      }
    }
    for (const uid of [...this.scheduled.keys()]) if (!live.has(uid)) this.cancel(uid);
  }

  /** Pending evictions (tests). */
  pending(): number {
    return this.scheduled.size;
  }

  close(): void {
    for (const uid of [...this.scheduled.keys()]) this.cancel(uid);
  }

  private cancel(uid: string): void {
    this.scheduled.get(uid)?.timer.cancel();
    this.scheduled.delete(uid);
  }

  private evict(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (this.evicting.has(uid)) return;
    this.evicting.add(uid);
    const ns = pod.metadata?.namespace ?? 'default';
    this.o.recorder.event(
      { namespace: ns, name: pod.metadata?.name ?? '', uid },
      'Normal',
      'TaintManagerEviction',
      `Marking for deletion Pod ${ns}/${pod.metadata?.name ?? ''}`,
    );
    void this.o
      .evict(pod)
      .catch((err: Error) => this.o.logger.warn('Taint eviction failed', { pod: `${ns}/${pod.metadata?.name}`, err: err.message }))
      .finally(() => this.evicting.delete(uid));
  }
}
