// Label and field selectors as apimachinery parses them: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
// `a notin (x)`, `a`, `!a` for labels; `path=value`, `path!=value` over a fixed set of fields.

import { badRequest } from '../http/status.js';

type Requirement = (labels: Record<string, string>) => boolean;

/** Splits on commas outside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p !== '');
}

const keyRe = /^([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

function checkKey(k: string, sel: string): string {
  if (!keyRe.test(k)) throw badRequest(`unable to parse requirement: invalid label key "${k}" in selector "${sel}"`);
  return k;
}

/** A label selector as a predicate; an empty selector matches everything. */
export function parseLabelSelector(sel: string | null | undefined): Requirement {
  if (!sel) return () => true;
  const reqs: Requirement[] = [];
  for (const part of splitTop(sel)) {
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const key = checkKey(m[1]!, sel);
      const values = new Set(
        m[3]!
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      );
      const notin = m[2] === 'notin';
      reqs.push((l) => (key in l ? values.has(l[key]!) !== notin : notin));
    } else if ((m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const key = checkKey(m[1]!, sel);
      const value = m[3]!;
      if (m[2] === '!=') reqs.push((l) => l[key] !== value);
      else reqs.push((l) => l[key] === value);
    } else if ((m = part.match(/^!\s*(\S+)$/))) {
      const key = checkKey(m[1]!, sel);
      reqs.push((l) => !(key in l));
    } else if (keyRe.test(part)) {
      reqs.push((l) => part in l);
    } else {
      throw badRequest(`unable to parse requirement: found '${part}', expected: identifier or selector "${sel}"`);
    }
  }
  return (labels) => reqs.every((r) => r(labels));
}

/** A field selector over the fields `fields` reads from an object; unknown fields are 400 as the API server says. */
export function parseFieldSelector<T>(
  sel: string | null | undefined,
  fields: (obj: T) => Record<string, string>,
  known: readonly string[],
  kind: string,
): (obj: T) => boolean {
  if (!sel) return () => true;
  const reqs: Array<{ field: string; value: string; negate: boolean }> = [];
  for (const part of splitTop(sel)) {
    const m = part.match(/^([^=!]+?)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw badRequest(`invalid selector: '${sel}'; can't understand '${part}'`);
    const field = m[1]!.trim();
    if (!known.includes(field)) throw badRequest(`"${field}" is not a known field selector: only "${known.join('", "')}"`);
    reqs.push({ field, value: m[3]!.trim(), negate: m[2] === '!=' });
  }
  void kind;
  return (obj) => {
    const f = fields(obj);
    return reqs.every((r) => ((f[r.field] ?? '') === r.value) !== r.negate);
  };
}
