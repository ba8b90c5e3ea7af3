// Go's formatting of strings, lists and durations, which the kubelet's messages embed (`%q`, `%v`
// of a []string, time.Duration): reproduced once here so every message quotes the same way.

/** Go's %q for a string (strconv.Quote): double-quoted, non-printable characters escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp >= 0x80 && cp < 0xa0) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Go's `%v` of a []string: `[a b c]`. */
export function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/** Go's time.Duration.String() for a duration in milliseconds: `10s`, `1m20s`, `5m0s`, `1.5s`, `500ms`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  let out: string;
  if (rest < 1000) {
    out = `${trimFloat(rest)}ms`;
  } else {
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = trimFloat(rest / 1000);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFloat(n: number): string {
  return String(Number(n.toFixed(9)));
}
