// What a controller is given: the agent's API backend (pods and the object store's kinds), the clock,
// the logger, its event recorder (one source component per controller), the shared informers (one
// per kind, started once every controller has its handlers) and the controllers' work queues, which
// begin only once every informer holds its initial objects (client-go's WaitForCacheSync): a
// ReplicaSet synced before the pods are known would create its replicas again.

import type { Pod } from '../api/types.js';
import type { EventRecorder, EventRecorderFactory } from '../events/recorder.js';
import type { KubeBackend, KubeObject, Storage } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { Informer } from './informer.js';
import { WorkQueue } from './work-queue.js';

export class ControllerContext {
  readonly pods: Informer<Pod>;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly queues: WorkQueue[] = [];

  constructor(
    readonly backend: KubeBackend,
    readonly clock: Clock,
    readonly logger: Logger,
    private readonly events: EventRecorderFactory,
  ) {
    this.pods = new Informer<Pod>({ watch: (rv, on) => backend.watchPods(rv, on) });
  }

  /** The recorder of one controller: its events carry `component` (e.g. `deployment-controller`) as source. */
  recorder(component: string): EventRecorder {
    return this.events.recorderFor(component);
  }

  /** The object store's storage of a kind; the controllers run only where the backend keeps it. */
  storage(kind: string): Storage {
    const s = this.backend.objects?.storage(kind);
    if (!s) throw new Error(`the API backend does not keep ${kind} objects`);
    return s;
  }

  /** The shared informer of a kind kept by the object store. */
  informer<T extends KubeObject>(kind: string): Informer<T> {
    let i = this.informers.get(kind);
    if (!i) {
      const storage = this.storage(kind);
      i = new Informer<KubeObject>({ watch: (rv, on) => storage.watch!(rv, on) });
      this.informers.set(kind, i);
    }
    return i as unknown as Informer<T>;
  }

  /** A controller's work queue: its keys wait until start() has filled every informer. */
  workQueue(name: string, sync: (key: string) => Promise<void>): WorkQueue {
    const q = new WorkQueue(name, sync, this.clock, this.logger);
    this.queues.push(q);
    return q;
  }

  /** Fills every informer with the current objects, then starts the work queues. */
  start(): void {
    for (const i of this.informers.values()) i.start();
    this.pods.start();
    for (const q of this.queues) q.start();
  }

  /** Resolves once every work queue is empty. */
  async idle(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.idle()));
  }

  stop(): void {
    for (const q of this.queues) q.stop();
    for (const i of this.informers.values()) i.stop();
    this.pods.stop();
  }
}

/** An API write that lost a race (409 Conflict, 404 gone) is retried by the next sync. */
export function isConflictOrGone(err: unknown): boolean {
  const code = (err as { code?: number }).code;
  return code === 409 || code === 404;
}
