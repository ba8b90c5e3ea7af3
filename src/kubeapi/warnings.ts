// Warnings of a write that succeeded, as a client reads them: the API server sends one `Warning`
// header each (`http/negotiate.ts` writes them, as apiserver's pkg/warning recorder does), which
// kubectl prints as `Warning: <text>`. Upstream: client-go's rest/warnings.go.

/** The texts of a response's Warning headers (what kubectl prints as `Warning: <text>`), in order. */
export function warningTexts(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const values = Array.isArray(header) ? header : [header];
  const out: string[] = [];
  // Node joins repeated headers with ", ": each warning is `299 - "<quoted>"`.
  const one = /\d{3} \S+ "((?:[^"\\]|\\.)*)"/g;
  for (const v of values) for (const m of v.matchAll(one)) out.push(unquote(m[1]!));
  return out;
}

function unquote(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, e: string) => {
    if (e[0] === 'u' || e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v' } as Record<string, string>)[e] ?? e;
  });
}
