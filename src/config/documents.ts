// Splits a source into its YAML/JSON documents (multi-document YAML, `kind: List` items) and keeps
// each document's syntax tree so problems can be reported as file:line:column.

import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type DocumentOptions, type Node, type Pair, type SchemaOptions } from 'yaml';
import type { PathSegment } from '../api/decode.js';
import type { SourceFile } from './sources.js';

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

// The YAML 1.1 schema matches the parser Kubernetes uses (yes/no/on/off are booleans, 0755 octal);
// timestamps and base-60 numbers stay strings there, so those tags are dropped.
const yamlOptions: DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  customTags: (tags) =>
    tags.filter((t) => {
      const tag = t as { tag?: string; format?: string };
      return tag.tag !== 'tag:yaml.org,2002:timestamp' && tag.format !== 'TIME';
    }),
};
const jsonOptions: DocumentOptions & SchemaOptions = { version: '1.2', schema: 'json' };

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

export interface ParsedSource {
  documents: ManifestDocument[];
  errors: string[];
}

/** Parses one source into documents; empty documents are skipped. */
export function parseSource(file: SourceFile): ParsedSource {
  const lineCounter = new LineCounter();
  const documents: ManifestDocument[] = [];
  const errors: string[] = [];
  const isJSON = file.path?.toLowerCase().endsWith('.json') ?? false;
  const docs = parseAllDocuments(file.text, {
    ...(isJSON ? jsonOptions : yamlOptions),
    lineCounter,
    prettyErrors: true,
  });
  const list = Array.isArray(docs) ? docs : [docs];
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${file.name}:${line}:${col}`;
  };

  list.forEach((doc, index) => {
    const err = doc.errors[0];
    if (err) {
      const { line, col } = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
      errors.push(`error: ${file.name}:${line}:${col}: ${firstLine(err.message)}`);
      return;
    }
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return;
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    const docStart = doc.contents.range?.[0] ?? 0;
    const locateIn = (root: Node | null, base: readonly PathSegment[]) => (segments: readonly PathSegment[], keyOf = false) => {
      const offset = nodeOffset(root, [...base, ...segments], keyOf);
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
    if (isMap(node)) {
      const pair = node.items.find((p: Pair) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(s));
      if (!pair) return best;
      if (last && keyOf) return (pair.key as Node | null)?.range?.[0] ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof s === 'number') {
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
