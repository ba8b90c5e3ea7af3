// Asynchronous work run one at a time per key, in the order it was asked for: a write that reads,
// checks and stores finishes before the next write of the same key reads (etcd's compare-and-swap
// as one process gives it).

export class OneAtATime {
  private readonly running = new Map<string, Promise<void>>();

  /** Runs work after every earlier work of key has settled; its result or error is the caller's. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.running.get(key) ?? Promise.resolve();
    const result = before.then(work, work);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(key, settled);
    void settled.then(() => {
      if (this.running.get(key) === settled) this.running.delete(key);
    });
    return result;
  }
}
