// Go duration flags (`30s`, `1m30s`, `1.5h`), parsed as time.ParseDuration does, with pflag's error
// wording; kept apart from the agent flags so light commands (logs) load nothing else.

import { UsageError, type ParsedArgs } from './args.js';

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration string (`30s`, `1m30s`, `1.5h`, `300ms`), as time.ParseDuration reads it. */
export function parseGoDuration(s: string): number {
  const invalid = () => new Error(`time: invalid duration ${JSON.stringify(s)}`);
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let total = 0;
  while (rest !== '') {
    const m = /^([0-9]*)(\.[0-9]*)?([^0-9.]*)/.exec(rest)!;
    if (m[1] === '' && (m[2] === undefined || m[2] === '.')) throw invalid();
    if (m[3] === '') throw new Error(`time: missing unit in duration ${JSON.stringify(s)}`);
    const unit = unitMs[m[3]!];
    if (unit === undefined) throw new Error(`time: unknown unit ${JSON.stringify(m[3])} in duration ${JSON.stringify(s)}`);
    total += Number(`${m[1] || '0'}${m[2] ?? ''}`) * unit;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** A DURATION flag in ms, undefined when absent; a usage error (pflag's wording) when malformed or negative. */
export function durationFlag(parsed: ParsedArgs, name: string): number | undefined {
  const raw = parsed.flags[name];
  if (raw === undefined || raw === '') return undefined;
  let ms: number;
  try {
    ms = parseGoDuration(String(raw));
  } catch (err) {
    throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: ${(err as Error).message}`);
  }
  if (ms < 0) throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: must not be negative`);
  return ms;
}

