// Bounds on manifest input, checked before a parser sees it: the size of one source and the nesting
// depth of its collections (a linear lexical scan), so hostile input fails with a clear error
// instead of exhausting memory or the stack.

/**
 * The most bytes one manifest source may hold: 32 MiB. The API server takes at most 3 MiB per
 * request and 1.5 MiB per stored object; this leaves room for a List of many pods.
 */
export const maxSourceBytes = 32 * 1024 * 1024;

/**
 * The deepest nesting of collections a manifest may have. A Pod needs about 15 levels; the yaml
 * parser recurses per level, and 100 keeps it far from the end of the stack.
 */
export const maxNestingDepth = 100;

/** The most alias expansions one document may make before it is taken for an alias bomb. */
export const maxAliasCount = 10_000;

export interface DepthProblem {
  /** Offset in the text where the limit was passed. */
  offset: number;
  depth: number;
}

const SPACE = 0x20,
  TAB = 0x09,
  LF = 0x0a,
  CR = 0x0d,
  HASH = 0x23,
  DQ = 0x22,
  SQ = 0x27,
  BS = 0x5c;
const LBRACK = 0x5b,
  RBRACK = 0x5d,
  LBRACE = 0x7b,
  RBRACE = 0x7d,
  COMMA = 0x2c,
  COLON = 0x3a,
  DASH = 0x2d,
  QM = 0x3f;
const PIPE = 0x7c,
  GT = 0x3e;

/**
 * Finds where text nests deeper than limit, or undefined. YAML block structure counts one level per
 * indentation step and per `- ` entry opening a line; flow collections (`[`, `{`, JSON) one level
 * per bracket. Quoted scalars, comments and block scalars' contents are skipped. It may count a
 * level more than the parser would (a continued plain scalar) but never fewer, and runs in one pass.
 */
export function findExcessiveNesting(text: string, limit = maxNestingDepth): DepthProblem | undefined {
  const n = text.length;
  const indents: number[] = [];
  let flow = 0;
  let i = 0;
  let blockScalarIndent = -1; // > -1 while skipping a block scalar's lines indented deeper than this
  let quote = 0; // the open quote character, when a quoted scalar continues across lines
  while (i < n) {
    // At the start of a line.
    let col = 0;
    while (i < n && text.charCodeAt(i) === SPACE) {
      i++;
      col++;
    }
    const lineStart = i;
    let c = i < n ? text.charCodeAt(i) : LF;
    const blank = c === LF || c === CR || (c === HASH && quote === 0);
    if (blockScalarIndent >= 0) {
      if (blank || col > blockScalarIndent) {
        i = skipLine(text, i);
        continue;
      }
      blockScalarIndent = -1;
    }
    if (blank && quote === 0) {
      i = skipLine(text, i);
      continue;
    }
    let depth = 0;
    if (flow === 0 && quote === 0) {
      while (indents.length && indents[indents.length - 1]! > col) indents.pop();
      if (!indents.length || indents[indents.length - 1]! < col) indents.push(col);
      // `- - - x`: each entry marker at the line's start opens a nested sequence.
      while (i < n && text.charCodeAt(i) === DASH && isBlankAt(text, i + 1)) {
        indents.push(col + (i - lineStart) + 1);
        i++;
        while (i < n && text.charCodeAt(i) === SPACE) i++;
      }
      depth = indents.length;
      if (depth > limit) return { offset: i, depth };
    }
    // The rest of the line.
    const lineEnd = skipToEol(text, i);
    let valueStart = true; // where a flow collection or a quoted scalar may begin
    let lastToken = 0; // last significant character, for block scalar indicators
    let tokenAfterIndicator = false;
    while (i < n) {
      c = text.charCodeAt(i);
      if (c === LF) break;
      if (quote !== 0) {
        // Jump to the closing quote (or the line's end: a quoted scalar may span lines).
        const q = text.indexOf(quote === DQ ? '"' : "'", i);
        if (q === -1 || q > lineEnd) {
          i = lineEnd;
          break;
        }
        i = q + 1;
        if (quote === DQ) {
          let backslashes = 0;
          for (let k = q - 1; k >= 0 && text.charCodeAt(k) === BS; k--) backslashes++;
          if (backslashes % 2 === 1) continue;
        } else if (text.charCodeAt(q + 1) === SQ) {
          i = q + 2;
          continue;
        }
        quote = 0;
        valueStart = false;
        continue;
      }
      if (c === SPACE || c === TAB || c === CR) {
        i++;
        continue;
      }
      if (c === HASH && (i === 0 || isSpace(text.charCodeAt(i - 1)))) {
        i = skipToEol(text, i);
        break;
      }
      if ((c === DQ || c === SQ) && (valueStart || flow > 0)) {
        quote = c;
        i++;
        continue;
      }
      if ((c === LBRACK || c === LBRACE) && (valueStart || flow > 0)) {
        flow++;
        if (depth + flow > limit) return { offset: i, depth: depth + flow };
        i++;
        valueStart = true;
        lastToken = c;
        continue;
      }
      if ((c === RBRACK || c === RBRACE) && flow > 0) {
        flow--;
        i++;
        valueStart = false;
        lastToken = c;
        continue;
      }
      if (c === COMMA && flow > 0) {
        i++;
        valueStart = true;
        lastToken = c;
        continue;
      }
      if ((c === COLON || c === DASH || c === QM) && isBlankAt(text, i + 1)) {
        i++;
        valueStart = true;
        lastToken = c;
        tokenAfterIndicator = false;
        continue;
      }
      if ((c === PIPE || c === GT) && valueStart && flow === 0) {
        lastToken = c;
        tokenAfterIndicator = false;
        i++;
        // Indentation and chomping indicators (`|-`, `>+2`) belong to the header.
        while (i < n && /[-+0-9]/.test(text[i]!)) i++;
        continue;
      }
      // Anchors, tags and plain scalars: up to the next blank (or flow indicator inside a flow).
      if (lastToken === PIPE || lastToken === GT) tokenAfterIndicator = true;
      const anchorOrTag = c === 0x26 /* & */ || c === 0x21; /* ! */
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === LF || d === SPACE || d === TAB || d === CR) break;
        if (flow > 0 && (d === COMMA || d === RBRACK || d === RBRACE || d === LBRACK || d === LBRACE)) break;
        if (d === COLON && isBlankAt(text, i + 1)) break;
        i++;
      }
      if (!anchorOrTag) {
        valueStart = false;
        lastToken = 0;
      }
    }
    if ((lastToken === PIPE || lastToken === GT) && !tokenAfterIndicator && quote === 0 && flow === 0) blockScalarIndent = col;
    i++; // past the LF
  }
  return undefined;
}

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === LF || c === CR;
}

function isBlankAt(text: string, i: number): boolean {
  return i >= text.length || isSpace(text.charCodeAt(i));
}

function skipToEol(text: string, i: number): number {
  const nl = text.indexOf('\n', i);
  return nl === -1 ? text.length : nl;
}

function skipLine(text: string, i: number): number {
  return skipToEol(text, i) + 1;
}
