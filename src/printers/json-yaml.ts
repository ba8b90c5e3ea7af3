// Objects as `-o json|yaml` prints them (validate, run, up, get): several objects go out as one v1
// List, fields in the order the API server writes them, or sorted as Go marshals kubectl's maps.

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { inApiOrder } from '../api/field-order.js';

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
function sortKeys(value: unknown): unknown {
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
export function formatObject(obj: unknown, format: ObjectFormat, order: 'api' | 'sorted' = 'api'): string {
  // `api`: as the API server writes objects (validate, run, up); `sorted`: as kubectl get prints what
  // it decoded into maps (keys sorted).
  const ordered = order === 'sorted' ? sortKeys(obj) : inApiOrder(obj);
  if (format === 'json') return JSON.stringify(ordered, null, 4) + '\n';
  // YAML 1.1 quoting keeps strings such as timestamps, "yes" or "on" strings for 1.1 readers too.
  // The yaml package is loaded only when YAML is printed.
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return stringify(ordered, { version: '1.1', indentSeq: false, lineWidth: 0, aliasDuplicateObjects: false });
}
