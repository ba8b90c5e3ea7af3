// Drives every probe worker from one timer: a binary min-heap of due times with a single Clock timer
// armed for the earliest, so thousands of workers cost one pending timer and O(log n) per iteration.
//
// Why one heap and not a timer per worker: a thousand pods with three probes each at a 1 s period are
// 3000 iterations a second; keeping them in one heap makes each tick a pop and a push of a
// preallocated entry (no closures, no timer objects per tick), keeps all due times on the injected
// Clock (FakeClock drives the whole prober in tests), and lets the benchmark see lateness through
// one hook. Entries due at the same instant run in insertion order. Phase spreading (so that workers
// added together do not fire together) is the worker's decision; see worker.ts.

import type { Clock, Timer } from '../util/clock.js';

/** Something the scheduler runs at its due time. */
export interface ScheduledEntry {
  /** Heap bookkeeping owned by the scheduler: -1 when not scheduled. */
  heapIndex: number;
  dueMs: number;
  seq: number;
  /** Called once when due; dueMs is the time it was scheduled for. */
  fire(dueMs: number): void;
}

export class ProbeScheduler {
  private readonly heap: ScheduledEntry[] = [];
  private nextSeq = 0;
  private timer: Timer | undefined;
  private armedFor = Infinity;
  private closed = false;
  private running = false;

  constructor(private readonly clock: Clock) {}

  /** Schedules (or moves) entry to run at dueMs. */
  schedule(entry: ScheduledEntry, dueMs: number): void {
    if (this.closed) return;
    if (entry.heapIndex >= 0) this.removeAt(entry.heapIndex);
    entry.dueMs = dueMs;
    entry.seq = this.nextSeq++;
    entry.heapIndex = this.heap.length;
    this.heap.push(entry);
    this.siftUp(entry.heapIndex);
    this.arm();
  }

  cancel(entry: ScheduledEntry): void {
    if (entry.heapIndex < 0) return;
    this.removeAt(entry.heapIndex);
    // A timer armed for a cancelled entry fires harmlessly and re-arms; no need to cancel it here.
  }

  /** Entries waiting to run. */
  size(): number {
    return this.heap.length;
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const e of this.heap) e.heapIndex = -1;
    this.heap.length = 0;
  }

  private arm(): void {
    if (this.running || this.closed) return;
    const top = this.heap[0];
    if (!top) return;
    if (this.timer && top.dueMs >= this.armedFor) return;
    this.timer?.cancel();
    this.armedFor = top.dueMs;
    this.timer = this.clock.setTimer(top.dueMs - this.clock.now(), this.onTimer);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    this.running = true;
    try {
      const now = this.clock.now();
      for (;;) {
        const top = this.heap[0];
        if (!top || top.dueMs > now || this.closed) break;
        this.removeAt(0);
        try {
          top.fire(top.dueMs);
        } catch {
          // Entries catch their own errors; this only keeps one bad entry from stalling the rest.
        }
      }
    } finally {
      this.running = false;
    }
    this.arm();
  };

  private less(a: ScheduledEntry, b: ScheduledEntry): boolean {
    return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
  }

  private removeAt(i: number): void {
    const heap = this.heap;
    const removed = heap[i]!;
    const last = heap.pop()!;
    removed.heapIndex = -1;
    if (i < heap.length) {
      heap[i] = last;
      last.heapIndex = i;
      this.siftDown(i);
      this.siftUp(last.heapIndex);
    }
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    const e = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!this.less(e, p)) break;
      heap[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    heap[i] = e;
    e.heapIndex = i;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const e = heap[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(heap[r]!, heap[l]!)) c = r;
      const child = heap[c]!;
      if (!this.less(child, e)) break;
      heap[i] = child;
      child.heapIndex = i;
      i = c;
    }
    heap[i] = e;
    e.heapIndex = i;
  }
}
