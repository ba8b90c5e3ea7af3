// Objects as `kubectl get -o json|yaml` prints them: several objects go out as one v1 List, keys in
// the sorted order kubectl's unstructured printing produces.

import { stringify } from 'yaml';

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

/** A deep copy with every object's keys sorted and undefined members dropped, as Go's maps marshal. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

export type ObjectFormat = 'json' | 'yaml';

/** kubectl's JSON printer (4-space indent) or YAML printer (block style, unindented sequences). */
export function formatObject(obj: unknown, format: ObjectFormat): string {
  const sorted = sortKeys(obj);
  if (format === 'json') return JSON.stringify(sorted, null, 4) + '\n';
  // YAML 1.1 quoting keeps strings such as timestamps, "yes" or "on" strings for 1.1 readers too.
  return stringify(sorted, { version: '1.1', indentSeq: false, lineWidth: 0 });
}
