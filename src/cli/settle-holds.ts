// The settle hold of `up -d`/`run`/`wait` (as run's settle check): an object that met its target
// counts once the same container instances have kept it for settleMs, counted from when those
// instances began (heldSinceMs), not from when the client first saw them.

import { setLongTimeout } from '../util/timer.js';

export class SettleHolds {
  private readonly since = new Map<string, { instances: string; at: number }>();

  /** Asks onDue to judge again when a hold that begins now ends. */
  constructor(private readonly onDue: () => void) {}

  /**
   * Whether the object under key has held its target for settleMs with these instances. A hold
   * begins with the first call for new instances, at heldSince when that is earlier than now.
   */
  held(key: string, instances: string, settleMs: number, heldSince: number): boolean {
    if (settleMs <= 0) return true;
    const now = Date.now();
    let s = this.since.get(key);
    if (!s || s.instances !== instances) {
      s = { instances, at: Math.min(now, heldSince) };
      this.since.set(key, s);
      const left = settleMs - (now - s.at);
      if (left > 0) setLongTimeout(this.onDue, left + 10, { ref: false });
    }
    return now - s.at >= settleMs;
  }

  /** The object no longer meets its target: its hold ends. */
  drop(key: string): void {
    this.since.delete(key);
  }

  holding(key: string): boolean {
    return this.since.has(key);
  }
}
