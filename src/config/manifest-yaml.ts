// A reader for the YAML manifests are written in (block mappings and sequences, plain and quoted
// one-line scalars, literal and folded block scalars, one-line flow sequences and mappings) that
// gives the values the yaml package gives with podvisor's options: plain scalars as kubectl resolves
// them (yaml-scalars.ts, go-yaml v2's YAML 1.1 rules).
// It exists for start-up cost: on Node 20, importing the yaml package and its first parse of a dozen
// manifests take ~95 ms, more than Node's own start, where this reader takes a few. Whatever it does not know
// (anchors, aliases, tags, merge keys, multi-line plain, quoted or flow scalars, tabs, CRLF, an
// `.inf` or `.nan`, any error) makes it give up, and the yaml package reads the source instead: it
// stays the authority, and the one that reports errors with their positions.

import { resolvePlainScalar } from './yaml-scalars.js';

/** One non-empty document of the source, numbered as the yaml package numbers documents. */
export interface ReadDocument {
  index: number;
  value: unknown;
}

/** Thrown inside the reader when the source leaves the subset; never escapes it. */
class GiveUp extends Error {}
const giveUp = (): never => {
  throw new GiveUp();
};

/** Plain mapping keys read here: what Kubernetes field names, labels and annotations use. */
const plainKeyRe = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

/** What a plain scalar means to kubectl; gives up on `.inf` and `.nan`, which kubectl rejects. */
function resolvePlain(s: string): unknown {
  const v = resolvePlainScalar(s);
  if (typeof v === 'number' && !Number.isFinite(v)) giveUp();
  return v;
}

const escapes: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};

/** A quoted scalar starting at s[from] and closed on the same line: its value and the index after it. */
function readQuoted(s: string, from: number): [string, number] {
  const q = s[from];
  let out = '';
  let i = from + 1;
  for (;;) {
    if (i >= s.length) giveUp();
    const c = s[i]!;
    if (c === q) {
      if (q === "'" && s[i + 1] === "'") {
        out += "'";
        i += 2;
        continue;
      }
      return [out, i + 1];
    }
    if (q === '"' && c === '\\') {
      const e = s[i + 1];
      if (e === undefined) giveUp();
      const simple = escapes[e!];
      if (simple !== undefined) {
        out += simple;
        i += 2;
        continue;
      }
      const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : giveUp();
      const hex = s.slice(i + 2, i + 2 + len);
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) giveUp();
      const code = parseInt(hex, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) giveUp();
      out += String.fromCodePoint(code);
      i += 2 + len;
      continue;
    }
    out += c;
    i++;
  }
}

/** Whether the rest of a line from i holds nothing but spaces and a comment. */
function restIsBlank(s: string, i: number): boolean {
  while (s[i] === ' ') i++;
  return i >= s.length || (s[i] === '#' && s[i - 1] === ' ');
}

/** A plain scalar's text on one line: up to a ` #` comment, trailing spaces dropped. */
function plainText(s: string): string {
  const hash = s.indexOf(' #');
  return (hash === -1 ? s : s.slice(0, hash)).trimEnd();
}

/** Characters a plain scalar may not start with here (YAML's indicators). */
const indicatorStart = new Set(['[', ']', '{', '}', ',', '#', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`', '?', ':', '-']);
/** Whether a plain scalar would start with an indicator (`-c` does not: a dash needs a space after it). */
const startsWithIndicator = (s: string) => indicatorStart.has(s[0]!) && !(s[0] === '-' && s.length > 1 && s[1] !== ' ');

/** A scalar inside a one-line flow collection, from s[i] to the next `,`, `]` or `}`: its value and end. */
function readFlowScalar(s: string, i: number): [unknown, number] {
  if (s[i] === '"' || s[i] === "'") return readQuoted(s, i);
  let end = i;
  while (end < s.length && !',]}'.includes(s[end]!)) end++;
  const text = s.slice(i, end).trimEnd();
  if (text === '' || startsWithIndicator(text) || /[:#[\]{}"']/.test(text)) giveUp();
  return [resolvePlain(text), end];
}

/** A one-line flow sequence or mapping of scalars starting at s[0] (`[a, "b"]`, `{cpu: "1"}`). */
function readFlow(s: string): unknown {
  const isMap = s[0] === '{';
  const close = isMap ? '}' : ']';
  const items: unknown[] = [];
  const map: Record<string, unknown> = {};
  let i = 1;
  while (s[i] === ' ') i++;
  if (s[i] !== close) {
    for (;;) {
      if (isMap) {
        const colon = s.indexOf(':', i);
        const key = colon === -1 ? '' : s.slice(i, colon).trimEnd();
        if (s[colon + 1] !== ' ' || !plainKeyRe.test(key) || typeof resolvePlain(key) !== 'string' || key === '__proto__') giveUp();
        if (Object.prototype.hasOwnProperty.call(map, key)) giveUp();
        i = colon + 1;
        while (s[i] === ' ') i++;
        const [v, end] = readFlowScalar(s, i);
        map[key] = v;
        i = end;
      } else {
        const [v, end] = readFlowScalar(s, i);
        items.push(v);
        i = end;
      }
      while (s[i] === ' ') i++;
      if (s[i] === close) break;
      if (s[i] !== ',') giveUp();
      i++;
      while (s[i] === ' ') i++;
      if (s[i] === close || s[i] === ',' || i >= s.length) giveUp();
    }
  }
  if (!restIsBlank(s, i + 1)) giveUp();
  return isMap ? map : items;
}

/** A mapping key at the start of s and the text of its value, or undefined when s is no `key:` line. */
function splitKey(s: string): [string, string] | undefined {
  let key: string;
  let colon: number;
  if (s[0] === '"' || s[0] === "'") {
    let end: number;
    try {
      [key, end] = readQuoted(s, 0);
    } catch {
      return undefined;
    }
    colon = end;
    while (s[colon] === ' ') colon++;
    if (s[colon] !== ':' || (colon + 1 < s.length && s[colon + 1] !== ' ')) return undefined;
  } else {
    if (startsWithIndicator(s)) return undefined;
    colon = -1;
    for (let i = s.indexOf(':'); i !== -1; i = s.indexOf(':', i + 1)) {
      const hash = s.indexOf(' #');
      if (hash !== -1 && hash < i) return undefined;
      if (i + 1 === s.length || s[i + 1] === ' ') {
        colon = i;
        break;
      }
    }
    if (colon === -1) return undefined;
    key = s.slice(0, colon).trimEnd();
    // A key outside the forms read here (`on:`, `1:`, `a b:`, `<<:`) is left to the yaml package.
    if (!plainKeyRe.test(key) || typeof resolvePlain(key) !== 'string') giveUp();
  }
  if (key === '__proto__') giveUp();
  return [key, s.slice(colon + 1).replace(/^ +/, '')];
}

const isEntry = (s: string) => s[0] === '-' && (s.length === 1 || s[1] === ' ');

/** The lines of one document: each line's indentation and the text after it. */
class DocumentReader {
  private pos: number;

  constructor(
    private readonly indent: number[],
    private readonly text: string[],
    start: number,
    private readonly end: number,
    /** Whether the source's last line ends with a line break (a block scalar at its end needs one). */
    private readonly endsWithBreak: boolean,
    private readonly maxDepth: number,
  ) {
    this.pos = start;
  }

  /** The document's value (null when it holds only comments). */
  read(): unknown {
    const first = this.next();
    if (first === -1) return null;
    const value = this.node(first, 0);
    if (this.next() !== -1) giveUp();
    return value;
  }

  /** The next line holding content (blank and comment lines skipped), or -1 at the document's end. */
  private next(): number {
    while (this.pos < this.end && (this.text[this.pos] === '' || this.text[this.pos]![0] === '#')) this.pos++;
    return this.pos < this.end ? this.pos : -1;
  }

  /** The block node whose first line is line i. */
  private node(i: number, depth: number): unknown {
    if (depth > this.maxDepth) giveUp();
    const s = this.text[i]!;
    if (isEntry(s)) return this.sequence(this.indent[i]!, depth);
    if (splitKey(s)) return this.mapping(this.indent[i]!, depth);
    // A scalar on a line of its own (a whole document that is a scalar is no manifest: left to yaml).
    if (depth === 0) giveUp();
    this.pos = i + 1;
    return this.inlineValue(s, this.indent[i]! - 1, depth);
  }

  private mapping(n: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let i = this.next(); i !== -1 && this.indent[i]! >= n; i = this.next()) {
      if (this.indent[i]! > n) giveUp();
      const split = splitKey(this.text[i]!) ?? giveUp();
      const [key, rest] = split;
      if (Object.prototype.hasOwnProperty.call(out, key)) giveUp();
      this.pos = i + 1;
      out[key] = this.value(rest, n, true, depth + 1);
    }
    return out;
  }

  private sequence(n: number, depth: number): unknown[] {
    const out: unknown[] = [];
    for (let i = this.next(); i !== -1 && this.indent[i]! >= n; i = this.next()) {
      if (this.indent[i]! > n) giveUp();
      const s = this.text[i]!;
      if (!isEntry(s)) break;
      let col = 1;
      while (s[col] === ' ') col++;
      const rest = s.slice(col);
      if (rest !== '' && rest[0] !== '#' && splitKey(rest)) {
        // `- key: value`: a mapping whose keys line up with this first one.
        this.indent[i] = n + col;
        this.text[i] = rest;
        this.pos = i;
        out.push(this.mapping(n + col, depth + 1));
        continue;
      }
      if (isEntry(rest)) giveUp();
      this.pos = i + 1;
      out.push(this.value(rest, n, false, depth + 1));
    }
    return out;
  }

  /**
   * The value after `key:` or `- ` (rest), for a node at indentation n; its lines follow pos. A
   * mapping's value may be a sequence at the key's own indentation (inMap).
   */
  private value(rest: string, n: number, inMap: boolean, depth: number): unknown {
    if (rest === '' || rest[0] === '#') {
      const j = this.next();
      if (j === -1 || this.indent[j]! < n) return null;
      if (this.indent[j]! > n) return this.node(j, depth);
      return inMap && isEntry(this.text[j]!) ? this.sequence(n, depth) : null;
    }
    return this.inlineValue(rest, n, depth);
  }

  /** A value that starts on the current line (a scalar, a flow collection, a block scalar header). */
  private inlineValue(s: string, n: number, depth: number): unknown {
    let value: unknown;
    const c = s[0]!;
    if (c === '|' || c === '>') return this.blockScalar(s, n);
    if (c === '[' || c === '{') {
      value = readFlow(s);
    } else if (c === '"' || c === "'") {
      const [v, end] = readQuoted(s, 0);
      if (!restIsBlank(s, end)) giveUp();
      value = v;
    } else {
      if (startsWithIndicator(s)) giveUp();
      const text = plainText(s);
      if (text.includes(': ') || text.endsWith(':') || text.includes('\t')) giveUp();
      value = resolvePlain(text);
    }
    // A line indented deeper would continue the scalar (or be an error): left to the yaml package.
    const j = this.next();
    if (j !== -1 && this.indent[j]! > n) giveUp();
    if (depth > this.maxDepth) giveUp();
    return value;
  }

  /** A literal (`|`) or folded (`>`) block scalar whose header is s, for a node at indentation n. */
  private blockScalar(header: string, n: number): string {
    const h = /^([|>])([-+]?)(?: +#.*| *)$/.exec(header) ?? giveUp();
    const lines: string[] = [];
    let m = -1;
    let k = this.pos;
    for (; k < this.end; k++) {
      const ind = this.indent[k]!;
      const t = this.text[k]!;
      if (t === '') {
        // A blank line with more spaces than the content's indentation keeps them: not read here.
        if (m !== -1 && ind > m) giveUp();
        lines.push('');
        continue;
      }
      if (m === -1) {
        if (ind <= n) break;
        m = ind;
        if (lines.some((_, b) => this.indent[this.pos + b]! > m)) giveUp();
      }
      if (ind < m) break;
      lines.push(' '.repeat(ind - m) + t);
    }
    if (m === -1) giveUp();
    if (k === this.end && !this.endsWithBreak) giveUp();
    this.pos = k;
    let last = lines.length - 1;
    while (last >= 0 && lines[last] === '') last--;
    const body = lines.slice(0, last + 1);
    const trailing = lines.length - body.length;
    let text: string;
    if (h[1] === '|') {
      text = body.join('\n');
    } else {
      // Folding: a line break between two lines of text becomes a space, or is dropped when empty
      // lines follow it; next to a more-indented line, every line break stays.
      text = '';
      let blank = 0;
      let prev: string | undefined;
      for (const l of body) {
        if (l === '') {
          blank++;
          continue;
        }
        if (prev === undefined) text += '\n'.repeat(blank);
        else if (prev.startsWith(' ') || l.startsWith(' ')) text += '\n'.repeat(blank + 1);
        else text += blank ? '\n'.repeat(blank) : ' ';
        text += l;
        prev = l;
        blank = 0;
      }
    }
    const chomp = h[2];
    if (chomp === '-') return text;
    if (chomp === '+') return `${text}\n${'\n'.repeat(trailing)}`;
    return `${text}\n`;
  }
}

/**
 * The documents of a YAML source, or undefined when the source is outside the subset read here (the
 * yaml package must read it). Documents holding only comments or null are left out.
 */
export function readManifestYAML(source: string, maxDepth = 100): ReadDocument[] | undefined {
  if (/[\t\r\uFEFF]/.test(source)) return undefined;
  const endsWithBreak = source.endsWith('\n');
  const raw = source.split('\n');
  if (endsWithBreak) raw.pop();
  const indent = new Array<number>(raw.length);
  const text = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i]!;
    let ind = 0;
    while (line.charCodeAt(ind) === 0x20) ind++;
    indent[i] = ind;
    text[i] = line.slice(ind);
  }
  const out: ReadDocument[] = [];
  try {
    // Documents: split at `---` lines; what precedes the first marker is a document when it has content.
    let index = 0;
    let started = false;
    let start = 0;
    const flush = (end: number) => {
      const value = new DocumentReader(indent, text, start, end, endsWithBreak, maxDepth).read();
      if (value !== null) out.push({ index, value });
    };
    for (let i = 0; i < raw.length; i++) {
      const line = raw[i]!;
      if (line.startsWith('---') || line.startsWith('...') || line.startsWith('%')) {
        if (!/^---(?: +(?:#.*)?)?$/.test(line)) return undefined;
        if (started) {
          flush(i);
          index++;
        }
        started = true;
        start = i + 1;
        continue;
      }
      if (!started && text[i] !== '' && text[i]![0] !== '#') started = true;
    }
    if (started) flush(raw.length);
  } catch (err) {
    if (err instanceof GiveUp) return undefined;
    throw err;
  }
  return out;
}
