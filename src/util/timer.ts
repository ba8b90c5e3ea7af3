// Timers for any duration. Node clamps a setTimeout delay above 2^31-1 ms (about 24.8 days) to
// 1 ms, so a long wait taken from a manifest (a grace period, a probe timeout, a deadline) would
// fire at once; setLongTimeout chains timers of at most that length until the full time has passed.

/** The longest delay setTimeout honours: 2^31 - 1 ms. */
export const maxTimerDelayMs = 2 ** 31 - 1;

export interface LongTimer {
  /** Cancels the timer; harmless when it already fired or was cancelled. */
  cancel(): void;
}

export interface LongTimeoutOptions {
  /** Keep the process alive while waiting (default true, as setTimeout). */
  ref?: boolean;
  /** Milliseconds since the epoch, for measuring what is left between links; default Date.now. */
  now?: () => number;
}

export interface SleepOptions extends LongTimeoutOptions {
  /** Ends the sleep early, when it aborts. */
  signal?: AbortSignal;
}

/**
 * Runs fn once after ms milliseconds, however long. A negative, NaN or zero delay runs it on the
 * next turn; Infinity never runs it. Each link re-measures the time left, so a slow event loop never
 * makes the whole wait longer than asked.
 */
export function setLongTimeout(fn: () => void, ms: number, opts: LongTimeoutOptions = {}): LongTimer {
  const now = opts.now ?? Date.now;
  const ref = opts.ref ?? true;
  let handle: NodeJS.Timeout | undefined;
  let cancelled = false;
  const delay = Number.isNaN(ms) ? 0 : Math.max(0, ms);
  const due = now() + delay;
  const arm = (wait: number) => {
    handle = setTimeout(tick, Math.min(wait, maxTimerDelayMs));
    if (!ref) handle.unref();
  };
  const tick = () => {
    if (cancelled) return;
    const left = due - now();
    if (left > 0) {
      arm(left);
      return;
    }
    fn();
  };
  if (delay === Infinity) return { cancel: () => void (cancelled = true) };
  arm(delay);
  return {
    cancel: () => {
      cancelled = true;
      if (handle) clearTimeout(handle);
    },
  };
}

/** A promise resolved after ms milliseconds, however long (see setLongTimeout), or once opts.signal aborts. */
export function sleepLong(ms: number, opts: SleepOptions = {}): Promise<void> {
  const { signal } = opts;
  if (!signal) return new Promise((resolve) => setLongTimeout(resolve, ms, opts));
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const wake = () => {
      timer.cancel();
      signal.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setLongTimeout(wake, ms, opts);
    signal.addEventListener('abort', wake, { once: true });
  });
}
