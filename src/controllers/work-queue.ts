// A rate-free work queue of keys (client-go's workqueue in small): a key added while waiting is
// processed once, a key added while being processed is processed again afterwards, keys are
// processed one at a time, and addAfter schedules a key through the injected clock. Keys wait until
// start(): the workers begin once every informer has its initial objects (WaitForCacheSync).

import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export class WorkQueue {
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, Timer>();
  private running = false;
  private started = false;
  private stopped = false;
  /** Resolves when the queue next runs dry (tests and benchmarks wait on it). */
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<void>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.dirty.add(key);
    if (this.started && !this.running) void this.run();
  }

  /** Begins processing: the keys added so far, then each as it comes. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (this.dirty.size > 0 && !this.running) void this.run();
  }

  /** Adds the key after ms (an earlier pending schedule of the key is kept when sooner). */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    this.timers.get(key)?.cancel();
    this.timers.set(
      key,
      this.clock.setTimer(ms, () => {
        this.timers.delete(key);
        this.add(key);
      }),
    );
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    this.dirty.clear();
    if (!this.running) this.wakeIdleWaiters();
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.running && this.dirty.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.dirty.size > 0 && !this.stopped) {
        const key = this.dirty.values().next().value as string;
        this.dirty.delete(key);
        try {
          await this.sync(key);
        } catch (err) {
          this.logger.error('Controller sync failed; retrying', { controller: this.name, key, err: String(err) });
          this.addAfter(key, 1000);
        }
      }
    } finally {
      this.running = false;
      this.wakeIdleWaiters();
    }
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
