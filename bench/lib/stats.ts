// Order statistics for the bench's samples (lateness, start times, detection delays): nearest-rank
// percentiles, so a reported p99 is always a value that was actually observed.

export interface Distribution {
  n: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of already sorted values; NaN when there are none. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    p50: percentileSorted(sorted, 50),
    p99: percentileSorted(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
