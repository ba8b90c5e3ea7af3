// The floor programs' scheduler: n actions per period, phases spread evenly over the period, each
// re-armed from its due time (not from when it ran) and skipping ticks it missed, as a Go ticker does.
// Times are Date.now() milliseconds, the resolution of the agent's Clock, so the floor's lateness
// reads on the same scale as the prober's.

export interface Slots {
  stop(): void;
}

/** Calls act(slot) for every slot once per period; late(ms) receives actual-minus-due of each call. */
export function runSlots(n: number, periodMs: number, act: (slot: number) => void, late: (ms: number) => void): Slots {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const t0 = Date.now() + 10;
  const arm = (slot: number, due: number) => {
    const t = setTimeout(
      () => {
        timers.delete(t);
        if (stopped) return;
        const now = Date.now();
        late(now - due);
        act(slot);
        let next = due + periodMs;
        while (next <= now) next += periodMs;
        arm(slot, next);
      },
      Math.max(0, due - Date.now()),
    );
    timers.add(t);
  };
  for (let i = 0; i < n; i++) arm(i, t0 + Math.round((i * periodMs) / n));
  return {
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
