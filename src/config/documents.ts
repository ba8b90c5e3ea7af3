// Splits a source into its YAML/JSON documents (multi-document YAML, `kind: List` items) and keeps
// each document's syntax tree so problems can be reported as file:line:column.

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { DocumentOptions, LineCounter, Node, Pair, SchemaOptions } from 'yaml';
import type { PathSegment } from '../api/decode.js';
import type { SourceFile } from './sources.js';
import { findExcessiveNesting, maxAliasCount, maxNestingDepth } from './limits.js';
import { readManifestYAML } from './manifest-yaml.js';
import { convertToJSONForm, kubectlTags } from './yaml-schema.js';

let yamlModule: typeof Yaml | undefined;
/** The yaml package, loaded by the first source that needs it: JSON input never loads it. */
function yaml(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlModule;
}

export interface ManifestDocument {
  file: SourceFile;
  /** 0-based index of the document in its file. */
  index: number;
  /** Index in the document's `items` when the document is a List. */
  item?: number;
  /** The parsed value (plain JSON-like data). */
  value: unknown;
  /** `file:line:column` of the node at segments (its key, when keyOf), or of the document. */
  locate(segments: readonly PathSegment[], keyOf?: boolean): string;
}

/** Where a document is, in words: `document 1` or `document 0, items[2]`. */
export function describeDocument(d: Pick<ManifestDocument, 'index' | 'item'>): string {
  return d.item === undefined ? `document ${d.index}` : `document ${d.index}, items[${d.item}]`;
}

// YAML 1.1, as the parser kubectl uses (go-yaml v2): its scalars resolve as kubectl resolves them
// (yes/no/on/off are booleans, 0755 octal, `e3` a string, timestamps and base-60 numbers strings).
// logLevel 'error': the parser's warnings (process warnings on stderr) are not for the user;
// what matters in a manifest is reported as an error with its position.
export const yamlOptions: DocumentOptions & SchemaOptions = {
  version: '1.1',
  logLevel: 'error',
  merge: true,
  customTags: kubectlTags,
};
const jsonOptions: DocumentOptions & SchemaOptions = { version: '1.2', schema: 'json', logLevel: 'error' };

/** The first line of a parser message, without its position, and short: it may quote the input. */
function firstLine(message: string): string {
  const line = message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '');
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Invalid JSON larger than this is reported without the yaml pass that would place the error. */
const locateInvalidJSONBelow = 64 * 1024;

export interface ParsedSource {
  documents: ManifestDocument[];
  errors: string[];
}

/** `file:line:col` of an offset, counting lines only when asked (a linear pass). */
function positionOf(file: SourceFile, lineCounter: LineCounter | undefined, offset: number): string {
  if (lineCounter) {
    const { line, col } = lineCounter.linePos(offset);
    return `${file.name}:${line}:${col}`;
  }
  let line = 1;
  let lineStart = 0;
  for (let i = file.text.indexOf('\n'); i !== -1 && i < offset; i = file.text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `${file.name}:${line}:${offset - lineStart + 1}`;
}

/**
 * Parses one source into documents; empty documents are skipped. Never throws: every problem,
 * however the parser fails, becomes a message naming the file (and line:column where known).
 */
export function parseSource(file: SourceFile): ParsedSource {
  const isJSON = file.path?.toLowerCase().endsWith('.json') ?? false;
  try {
    // JSON is YAML too: a YAML source that opens like JSON tries the fast path first.
    if (isJSON || /^\s*[[{]/.test(file.text.slice(0, 4096))) {
      const fast = parseJSONFast(file, isJSON);
      if (fast) return fast;
    }
    // The manifest reader stops at maxNestingDepth levels by itself; the yaml parser recurses per
    // level, so the depth is checked on the text before it runs.
    if (!isJSON) {
      const read = readManifestYAML(file.text, maxNestingDepth);
      if (read) {
        const tooDeepRead = tooDeepValue(
          file,
          read.map((d) => d.value),
        );
        if (tooDeepRead) return tooDeepRead;
        return { documents: read.map(({ index, value }) => ({ file, index, value, locate: locateLater(file, isJSON, index) })), errors: [] };
      }
    }
    const deep = findExcessiveNesting(file.text);
    if (deep) return tooDeep(file, deep.offset);
    return parseYAML(file, isJSON);
  } catch (err) {
    // Whatever escaped the parser is not shown: it is the parser's inside, not the user's input.
    const what = err instanceof RangeError ? `nesting is deeper than this parser can follow` : 'cannot be parsed as YAML or JSON';
    return { documents: [], errors: [`error: ${file.name}: ${what}`] };
  }
}

function tooDeep(file: SourceFile, offset: number | undefined): ParsedSource {
  const where = offset === undefined ? file.name : positionOf(file, undefined, offset);
  return { documents: [], errors: [`error: ${where}: nesting is deeper than ${maxNestingDepth} levels`] };
}

/**
 * The error for values read without the yaml parser (JSON.parse, the manifest reader) that nest
 * deeper than maxNestingDepth: those readers do not recurse, but what reads the values does.
 */
function tooDeepValue(file: SourceFile, values: readonly unknown[]): ParsedSource | undefined {
  return values.some((v) => nestsDeeper(v, maxNestingDepth)) ? tooDeep(file, findExcessiveNesting(file.text)?.offset) : undefined;
}

/** Whether a parsed value nests deeper than limit (walked without recursion). */
function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A .json source through JSON.parse; the yaml parser's position-keeping pass runs only when a
 * location is asked for. Undefined when JSON.parse rejects the text: the yaml pass then says where.
 */
function parseJSONFast(file: SourceFile, isJSON: boolean): ParsedSource | undefined {
  if (file.text.trim() === '') return { documents: [], errors: [] };
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch (err) {
    // Not JSON after all (a YAML flow mapping, or an error the yaml pass will place).
    if (!isJSON || file.text.length <= locateInvalidJSONBelow) return undefined;
    const message = String((err as Error).message);
    const what = firstLine(message.split(/, (?:\.\.\.)?"| in JSON at position/)[0]!);
    const offset = jsonErrorOffset(file.text, message);
    const where = offset === undefined ? file.name : positionOf(file, undefined, offset);
    return { documents: [], errors: [`error: ${where}: invalid JSON: ${what}`] };
  }
  if (value === null) return { documents: [], errors: [] };
  const deep = tooDeepValue(file, [value]);
  if (deep) return deep;
  return { documents: [{ file, index: 0, value, locate: locateLater(file, isJSON, 0) }], errors: [] };
}

type Locate = ManifestDocument['locate'];
/** The yaml package's documents of each file read without it, parsed when a position is first asked for. */
const locatedFiles = new WeakMap<SourceFile, ManifestDocument[]>();

/** locate for document index of a file read without positions: the yaml pass runs on first use. */
function locateLater(file: SourceFile, isJSON: boolean, index: number): Locate {
  let located: Locate | undefined;
  return (segments, keyOf) => {
    if (!located) {
      let docs = locatedFiles.get(file);
      if (!docs) locatedFiles.set(file, (docs = parseYAML(file, isJSON).documents));
      located = docs.find((d) => d.index === index)?.locate ?? (() => `${file.name}:1:1`);
    }
    return located(segments, keyOf);
  };
}

/**
 * Where V8's JSON.parse message places the error: `… at position N`, or for an unexpected token
 * the excerpt it quotes (`..."<10 characters before><token>…"`), found in the text.
 */
function jsonErrorOffset(text: string, message: string): number | undefined {
  const at = / at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  const quoted = /, \.\.\."(.*)"(?:\.\.\.)? is not valid JSON$/s.exec(message);
  if (!quoted?.[1]) return undefined;
  const found = text.indexOf(quoted[1]);
  return found === -1 ? undefined : found + 10;
}

/**
 * A source read by the yaml package, with positions: the authority for what the fast readers give,
 * and the reader of every source they leave (isJSON: a .json file, read with the JSON schema).
 */
export function parseYAML(file: SourceFile, isJSON: boolean): ParsedSource {
  const lineCounter = new (yaml().LineCounter)();
  const documents: ManifestDocument[] = [];
  const errors: string[] = [];
  // prettyErrors would add a context excerpt to every error at a cost growing with the line's
  // length (quadratic on one long line); positions come from the line counter instead.
  const docs = yaml().parseAllDocuments(file.text, {
    ...(isJSON ? jsonOptions : yamlOptions),
    lineCounter,
    prettyErrors: false,
  });
  const list = Array.isArray(docs) ? docs : [docs];
  const at = (offset: number) => positionOf(file, lineCounter, offset);

  list.forEach((doc, index) => {
    const err = doc.errors[0];
    if (err) {
      // The parser records what it threw too; a stack overflow is not the user's message to read.
      const message = /call stack/i.test(err.message) ? 'nesting is deeper than this parser can follow' : firstLine(err.message);
      errors.push(`error: ${at(err.pos[0])}: ${message}`);
      return;
    }
    if (doc.contents === null || (yaml().isScalar(doc.contents) && doc.contents.value === null)) return;
    const docStart = doc.contents.range?.[0] ?? 0;
    // kubectl reads a document as JSON: keys become strings, and a value JSON cannot hold fails it.
    const problem = isJSON ? undefined : convertToJSONForm(doc, yaml());
    if (problem) {
      errors.push(`error: ${at(problem.offset ?? docStart)}: ${problem.message}`);
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount }) as unknown;
    } catch (e) {
      const excessive = e instanceof ReferenceError && /alias/i.test(e.message);
      const text = excessive
        ? `document ${index}: document contains excessive aliasing (more than ${maxAliasCount} alias expansions)`
        : `document ${index}: cannot be converted to an object: ${e instanceof RangeError ? 'nesting too deep' : 'unsupported use of merge keys, aliases or tags'}`;
      errors.push(`error: ${at(docStart)}: ${text}`);
      return;
    }
    const locateIn =
      (root: Node | null, base: readonly PathSegment[]) =>
      (segments: readonly PathSegment[], keyOf = false) => {
        let offset: number | undefined;
        try {
          offset = nodeOffset(root, [...base, ...segments], keyOf);
        } catch {
          // An odd node (a merge key where a value belongs) only costs the precise position.
        }
        return at(offset ?? docStart);
      };
    documents.push({ file, index, value, locate: locateIn(doc.contents as Node, []) });
  });
  return { documents, errors };
}

/** Offset of the node (or its key) at the path, or of the deepest node found on the way. */
function nodeOffset(root: Node | null, segments: readonly PathSegment[], keyOf: boolean): number | undefined {
  let node: unknown = root;
  let best = (root as Node | null)?.range?.[0];
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const last = i === segments.length - 1;
    if (yaml().isMap(node)) {
      const pair = node.items.find((p: Pair) => (yaml().isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(s));
      if (!pair) return best;
      if (last && keyOf) return (pair.key as Node | null)?.range?.[0] ?? best;
      node = pair.value;
    } else if (yaml().isSeq(node) && typeof s === 'number') {
      node = node.items[s];
    } else {
      return best;
    }
    const r = (node as Node | null)?.range?.[0];
    if (r !== undefined) best = r;
  }
  return best;
}

/** The documents of a List's items, each locating into the item it came from. */
export function expandList(d: ManifestDocument): ManifestDocument[] {
  const items = (d.value as { items?: unknown }).items;
  if (!Array.isArray(items)) return [];
  return items.map((value, item) => ({
    file: d.file,
    index: d.index,
    item,
    value,
    locate: (segments: readonly PathSegment[], keyOf?: boolean) => d.locate(['items', item, ...segments], keyOf),
  }));
}
