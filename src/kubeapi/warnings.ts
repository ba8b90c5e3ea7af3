// Warnings of a write that succeeded, sent as the API server sends them: one `Warning` header each,
// `299 - "<text>"` (RFC 7234 warn-code 299, no agent, the text quoted as Go's strconv.Quote does),
// which kubectl prints as `Warning: <text>`. Upstream: apimachinery's util/net NewWarningHeader and
// apiserver's pkg/warning (the recorder of a request's warnings), endpoints/filters/warning.go.

import type { ServerResponse } from 'node:http';
import { goQuote } from '../util/go-format.js';

/** The header value of one warning; what is not ASCII escaped as \\u (a header carries bytes, not text). */
export function warningHeader(text: string): string {
  return `299 - ${goQuote(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`;
}

/** Sets the Warning headers of these texts (each once, in order) on a response not yet sent. */
export function setWarnings(res: ServerResponse, texts: readonly string[]): void {
  const unique = [...new Set(texts)];
  if (unique.length === 0 || res.headersSent) return;
  res.setHeader('Warning', unique.map(warningHeader));
}

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
