// The yaml package set to read manifests as kubectl does: scalar tags that resolve as go-yaml v2
// (yaml-scalars.ts), and sigs.k8s.io/yaml's conversion to JSON (keys made strings, no ±Inf or NaN).

import type * as Yaml from 'yaml';
import type { Document, Node, Scalar, ScalarTag, Tags } from 'yaml';
import { goNumber, jsonKey, plainKey, resolvePlainScalar, unsupportedValueMessage } from './yaml-scalars.js';

const tagPrefix = 'tag:yaml.org,2002:';
/** The YAML 1.1 scalar tags replaced here (the rest: collections, str, binary, merge, omap, pairs, set). */
const replacedTags = new Set(['null', 'bool', 'int', 'float', 'timestamp'].map((t) => tagPrefix + t));

/** What kubectl says when an explicit tag does not fit its scalar (go-yaml names what it resolved to). */
function cannotDecode(s: string, tag: string): string {
  const v = resolvePlainScalar(s);
  const resolved = typeof v === 'number' ? (goNumber(s)?.kind === 'float' ? 'float' : 'int') : v === null ? 'null' : typeof v === 'boolean' ? 'bool' : 'str';
  return `error converting YAML to JSON: yaml: cannot decode !!${resolved} \`${s}\` as a !!${tag}`;
}

const kubectlScalarTags: ScalarTag[] = [
  // Plain scalars: resolved as go-yaml's resolve() does (first match wins; anything else is a string).
  { tag: `${tagPrefix}null`, default: true, test: /^(?:~|null|Null|NULL)?$/, resolve: () => null },
  {
    tag: `${tagPrefix}bool`,
    default: true,
    test: /^(?:y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON|n|N|no|No|NO|false|False|FALSE|off|Off|OFF)$/,
    resolve: resolvePlainScalar,
  },
  // Every scalar that starts as a number may be one; what go-yaml leaves a string resolves to its text.
  { tag: `${tagPrefix}float`, default: true, test: /^[-+.0-9]/, resolve: resolvePlainScalar },
  // Explicit tags (`!!int 0x1F`): only what go-yaml decodes as that type.
  {
    tag: `${tagPrefix}int`,
    default: false,
    resolve: (s, onError) => {
      const n = goNumber(s);
      if (n && n.kind !== 'float') return n.value;
      onError(cannotDecode(s, 'int'));
      return s;
    },
  },
  {
    tag: `${tagPrefix}float`,
    default: false,
    resolve: (s, onError) => {
      const n = goNumber(s);
      if (n) return n.value;
      onError(cannotDecode(s, 'float'));
      return s;
    },
  },
  // go-yaml decodes a timestamp into interface{} as its text.
  { tag: `${tagPrefix}timestamp`, default: false, resolve: (s) => s },
];

/** The yaml package's `customTags` for YAML 1.1 manifests: its scalar tags swapped for kubectl's. */
export function kubectlTags(tags: Tags): Tags {
  return [...tags.filter((t) => !replacedTags.has((t as { tag?: string }).tag ?? '')), ...kubectlScalarTags];
}

export interface JSONProblem {
  /** Offset of the node at fault in the source, when known. */
  offset: number | undefined;
  message: string;
}

/**
 * Turns a parsed document into what sigs.k8s.io/yaml makes JSON of: each mapping key that resolved
 * to something else than a string becomes the string kubectl writes for it (`on:` is "true", `1.5:`
 * "1.5"). The first value JSON cannot hold (`.inf`, `.nan`), or key it refuses (null, uint64), is
 * returned, as kubectl fails the whole document on it; so is a `%YAML` version other than 1.1.
 */
export function convertToJSONForm(doc: Document.Parsed, y: typeof Yaml): JSONProblem | undefined {
  // go-yaml v2 reads YAML 1.1 only: a `%YAML 1.2` directive fails the document.
  if (doc.directives?.yaml.explicit && doc.directives.yaml.version !== '1.1') {
    return { offset: doc.range[0], message: 'error converting YAML to JSON: yaml: found incompatible YAML document' };
  }
  // Walked in document order, so the first problem reported is the first in the source.
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (y.isMap(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    } else if (y.isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    } else if (y.isPair(node)) {
      const key = node.key;
      if (key === null || y.isScalar(key)) {
        const problem = keyToString(key as Scalar | null);
        if (problem) return { offset: (key as Node | null)?.range?.[0] ?? (node.value as Node | null)?.range?.[0], message: problem };
      } else if (y.isCollection(key)) {
        return { offset: key.range?.[0], message: 'error converting YAML to JSON: yaml: invalid map key: a mapping or sequence' };
      }
      stack.push(node.value);
    } else if (y.isScalar(node) && typeof node.value === 'number' && !Number.isFinite(node.value)) {
      return { offset: node.range?.[0], message: unsupportedValueMessage(node.value) };
    }
  }
  return undefined;
}

/** Makes a scalar key's value kubectl's key string; the error message when kubectl refuses it. */
function keyToString(key: Scalar | null): string | undefined {
  const value = key?.value ?? null;
  if (typeof value === 'string' || typeof value === 'symbol') return undefined; // a string, or the merge key
  let converted: ReturnType<typeof jsonKey>;
  if (key && key.type === 'PLAIN' && !key.tag && typeof key.source === 'string') converted = plainKey(key.source);
  else if (value === null || typeof value === 'boolean') converted = jsonKey(value);
  else if (typeof value === 'number') converted = jsonKey(Number.isInteger(value) ? { kind: 'int', value, exact: BigInt(value) } : { kind: 'float', value });
  else return undefined;
  if ('error' in converted) return converted.error;
  key!.value = converted.key;
  return undefined;
}
