// ControllerExpectations (pkg/controller/controller_utils.go): what a controller has asked of the API
// and not yet seen in its informer — pods it created (adds) and deleted (dels), per controller key. A
// controller manages its pods again only once its expectations are met (or 5 minutes old), so a sync
// that runs before its own creations are seen does not create them again.

/** ExpectationsTimeout: expectations older than this are satisfied regardless. */
export const ExpectationsTimeoutMs = 5 * 60_000;

export class ControllerExpectations {
  private readonly byKey = new Map<string, { adds: number; dels: number; at: number }>();

  constructor(private readonly now: () => number) {}

  /** SatisfiedExpectations: nothing outstanding (or the record expired). */
  satisfied(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return true;
    return (e.adds <= 0 && e.dels <= 0) || this.now() - e.at > ExpectationsTimeoutMs;
  }

  expectCreations(key: string, adds: number): void {
    this.byKey.set(key, { adds, dels: 0, at: this.now() });
  }

  expectDeletions(key: string, dels: number): void {
    this.byKey.set(key, { adds: 0, dels, at: this.now() });
  }

  /** One creation seen (or given up: a failed or skipped creation). */
  creationObserved(key: string, n = 1): void {
    const e = this.byKey.get(key);
    if (e) e.adds -= n;
  }

  /** One deletion seen (a deletionTimestamp, or the pod gone), or given up. */
  deletionObserved(key: string, n = 1): void {
    const e = this.byKey.get(key);
    if (e) e.dels -= n;
  }

  /** DeleteExpectations: the controller is gone. */
  delete(key: string): void {
    this.byKey.delete(key);
  }
}
