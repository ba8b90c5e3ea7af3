// The three probe result caches (liveness, readiness, startup), after the kubelet's results.Manager:
// a map from container ID to the last published result, and listeners told of every change.

import type { Logger } from '../util/logger.js';
import { silentLogger } from '../util/logger.js';
import type { ProbeResult, ResultUpdate, ResultsReader } from './types.js';

export class ResultsCache implements ResultsReader {
  private readonly results = new Map<string, ProbeResult>();
  private readonly listeners = new Set<(u: ResultUpdate) => void>();

  constructor(private readonly logger: Logger = silentLogger) {}

  get(containerId: string): ProbeResult | undefined {
    return this.results.get(containerId);
  }

  /** Stores the result; listeners hear of it only when the ID was absent or its value changed. */
  set(containerId: string, result: ProbeResult, podUid: string): void {
    if (this.results.get(containerId) === result) return;
    this.results.set(containerId, result);
    const update: ResultUpdate = { containerId, result, podUid };
    for (const listener of this.listeners) {
      // A failing consumer must not break the worker that published.
      try {
        listener(update);
      } catch (err) {
        this.logger.error('probe result listener failed', { containerId, err });
      }
    }
  }

  /** Forgets the container; publishes nothing (the kubelet's Remove sends no update). */
  remove(containerId: string): void {
    this.results.delete(containerId);
  }

  onUpdate(listener: (u: ResultUpdate) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Number of containers with a cached result. */
  size(): number {
    return this.results.size;
  }
}
