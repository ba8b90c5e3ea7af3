// Go duration strings (`30s`, `1m30s`, `1.5h`), read as time.ParseDuration reads them, with its error
// wording: the values of the duration flags and settings.

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

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
