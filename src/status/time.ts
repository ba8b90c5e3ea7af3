// Timestamps as the API shows them: metav1.Time marshals to RFC 3339 with whole seconds, UTC.

/** ms since the epoch → `2026-12-02T12:00:00Z` (fraction truncated, as Go's RFC3339 layout does). */
export function toRFC3339(ms: number): string {
  const s = new Date(Math.floor(ms / 1000) * 1000).toISOString();
  return s.slice(0, 19) + 'Z';
}

/** As toRFC3339, but the zero time (0, not reached) is null as metav1.Time's zero value marshals. */
export function toAPITime(ms: number): string | null {
  return ms > 0 ? toRFC3339(ms) : null;
}
