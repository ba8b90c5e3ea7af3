// Timestamps of CRI log records: RFC 3339 with nine fractional digits, always UTC, and their parsing
// (any RFC 3339 variant, so files written by other runtimes read back too).

import type { Clock } from '../../util/clock.js';

const NS_PER_MS = 1_000_000n;

/** `2026-12-02T12:00:00.123456789Z` for a time in ns since the epoch. */
export function formatRFC3339Nano(ns: bigint): string {
  const ms = ns / NS_PER_MS;
  let secondsNs = ns % 1_000_000_000n;
  const wholeMs = Number(ms);
  if (secondsNs < 0n) secondsNs += 1_000_000_000n;
  const iso = new Date(wholeMs).toISOString(); // 2026-12-02T12:00:00.123Z
  return `${iso.slice(0, 19)}.${secondsNs.toString().padStart(9, '0')}Z`;
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** ns since the epoch for an RFC 3339 timestamp, or undefined when it is not one. */
export function parseRFC3339Nano(s: string): bigint | undefined {
  const m = rfc3339.exec(s);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (Number.isNaN(ms)) return undefined;
  let ns = BigInt(ms) * NS_PER_MS + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  const zone = m[8]!;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const offsetMin = BigInt(Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    ns -= sign * offsetMin * 60n * 1_000_000_000n;
  }
  return ns;
}

/**
 * Nanosecond timestamps for one log file: milliseconds come from the injected clock, the
 * sub-millisecond part from the monotonic high-resolution timer, and records never go backwards.
 */
export class LogTimestamps {
  private last = 0n;
  constructor(private readonly clock: Clock) {}

  nowNs(): bigint {
    let ns = BigInt(this.clock.now()) * NS_PER_MS + (process.hrtime.bigint() % NS_PER_MS);
    if (ns <= this.last) ns = this.last + 1n;
    this.last = ns;
    return ns;
  }
}

/** `20261202-120000` (UTC), the suffix the kubelet's container log manager gives rotated files. */
export function rotationSuffix(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-02T12:00:00.000Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}
