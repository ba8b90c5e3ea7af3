// Time as the prober, the back-off and the pod workers see it. Passing a Clock in (never calling
// Date.now or setTimeout directly in logic code) lets tests drive time deterministically.

import { setLongTimeout, sleepLong } from './timer.js';

export interface Timer {
  /** Cancels the timer; harmless when it already fired or was cancelled. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs fn once after ms milliseconds. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after ms milliseconds (or never, if the returned promise is abandoned). */
  sleep(ms: number): Promise<void>;
}

/** The wall clock; timers are unref'd so they never keep the process alive on their own. */
export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
  // Through setLongTimeout: a delay past 2^31-1 ms would otherwise fire after 1 ms.
  setTimer(ms: number, fn: () => void): Timer {
    return setLongTimeout(fn, ms, { ref: false });
  }
  sleep(ms: number): Promise<void> {
    return sleepLong(ms);
  }
}

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A manually advanced clock for logic tests. `advance(ms)` fires every timer that falls due, in due
 * order, letting promise callbacks settle between timers so async code chained on a timer runs too.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const t: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  /** Number of timers still waiting to fire. */
  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by ms, firing due timers in order; returns how many fired. */
  async advance(ms: number): Promise<number> {
    const target = this.current + ms;
    let fired = 0;
    for (;;) {
      await flushMicrotasks();
      this.timers = this.timers.filter((t) => !t.cancelled);
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      fired++;
    }
    this.current = target;
    await flushMicrotasks();
    return fired;
  }
}

/** Lets already-queued promise continuations run (several rounds, for chained awaits). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
