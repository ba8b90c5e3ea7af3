// Objects as `kubectl get -o json|yaml` prints them: several objects go out as one v1 List, keys in
// the sorted order kubectl's unstructured printing produces.

import { stringify } from 'yaml';
import { sortKeys } from './sort-keys.js';

export { sortKeys };

export interface V1List {
  apiVersion: 'v1';
  kind: 'List';
  metadata: { resourceVersion: string };
  items: unknown[];
}

/** Wraps objects in the List kubectl prints for more than one object. */
export function toV1List(items: unknown[]): V1List {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

export type ObjectFormat = 'json' | 'yaml';

/** kubectl's JSON printer (4-space indent) or YAML printer (block style, unindented sequences). */
export function formatObject(obj: unknown, format: ObjectFormat): string {
  const sorted = sortKeys(obj);
  if (format === 'json') return JSON.stringify(sorted, null, 4) + '\n';
  // YAML 1.1 quoting keeps strings such as timestamps, "yes" or "on" strings for 1.1 readers too.
  return stringify(sorted, { version: '1.1', indentSeq: false, lineWidth: 0 });
}
