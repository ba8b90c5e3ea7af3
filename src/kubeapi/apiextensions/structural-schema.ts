// A CustomResourceDefinition's OpenAPI v3 schema applied to a custom object: unknown fields pruned
// (unless x-kubernetes-preserve-unknown-fields), defaults filled in from `default`, then the object
// validated with upstream's messages (type, required, enum, minimum/maximum, pattern, min/maxLength,
// min/maxItems, x-kubernetes-int-or-string, x-kubernetes-embedded-resource).
// Upstream: apiextensions-apiserver pkg/apiserver/schema (pruning, defaulting, validation via kube-openapi's validate).

import type { FieldError } from '../../api/field-errors.js';

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-validations'?: Array<{ rule: string; message?: string }>;
  [key: string]: unknown;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields every embedded resource and the root keep whatever the schema says (apiVersion, kind, metadata). */
const typeMetaFields = ['apiVersion', 'kind', 'metadata'];

/** Removes the fields the schema does not name (in place); at the root apiVersion, kind and metadata stay. */
export function prune(value: unknown, schema: JSONSchemaProps | undefined, at: 'root' | 'nested' = 'root'): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) prune(item, schema.items, 'nested');
    return;
  }
  if (!isObject(value)) return;
  const keepMeta = at === 'root' || schema['x-kubernetes-embedded-resource'] === true;
  const props = schema.properties;
  for (const key of Object.keys(value)) {
    // ObjectMeta is the API server's, whatever the schema says of it (kept whole; only `metadata: {type: object}` is allowed there).
    if (keepMeta && typeMetaFields.includes(key)) continue;
    const sub = props?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (sub) prune(value[key], sub, 'nested');
    else if (schema.additionalProperties === true || schema['x-kubernetes-preserve-unknown-fields'] === true) continue;
    else delete value[key];
  }
}

/** Fills in `default`s of absent fields, in place, depth first as upstream's structural defaulting. */
export function applyDefaults(value: unknown, schema: JSONSchemaProps | undefined, at: 'root' | 'nested' = 'root'): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) applyDefaults(item, schema.items, 'nested');
    return;
  }
  if (!isObject(value)) return;
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (key === 'metadata' && (at === 'root' || schema['x-kubernetes-embedded-resource'])) continue;
    if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
    applyDefaults(value[key], sub, 'nested');
  }
  if (isObject(schema.additionalProperties))
    for (const key of Object.keys(value)) if (!schema.properties?.[key]) applyDefaults(value[key], schema.additionalProperties, 'nested');
}

const goValue = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v));

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(v: unknown, type: string): boolean {
  const t = typeOf(v);
  return t === type || (type === 'number' && t === 'integer');
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The object checked against the schema: each error as upstream's validator words it. */
export function validateValue(value: unknown, schema: JSONSchemaProps | undefined, path = ''): FieldError[] {
  if (!schema) return [];
  const errs: FieldError[] = [];
  if (value === null) {
    if (schema.nullable || schema['x-kubernetes-preserve-unknown-fields'] || !schema.type) return [];
    return [{ type: 'Invalid', field: path, value: null, detail: `${path} in body must be of type ${schema.type}: "null"` }];
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value)))
      return [{ type: 'Invalid', field: path, value: typeOf(value), detail: `${path} in body must be of type integer,string: "${typeOf(value)}"` }];
  } else if (schema.type && !matchesType(value, schema.type)) {
    return [{ type: 'Invalid', field: path, value: typeOf(value), detail: `${path} in body must be of type ${schema.type}: "${typeOf(value)}"` }];
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errs.push({ type: 'NotSupported', field: path, value, detail: `supported values: ${schema.enum.map(goValue).join(', ')}` });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum))
      errs.push({
        type: 'Invalid',
        field: path,
        value,
        detail: `${path} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
      });
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum))
      errs.push({
        type: 'Invalid',
        field: path,
        value,
        detail: `${path} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
      });
  }
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength)
      errs.push({ type: 'TooLong', field: path, value, detail: `may not be more than ${schema.maxLength} bytes` });
    if (schema.minLength !== undefined && [...value].length < schema.minLength)
      errs.push({ type: 'Invalid', field: path, value, detail: `${path} in body should be at least ${schema.minLength} chars long` });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      errs.push({ type: 'Invalid', field: path, value, detail: `${path} in body should match '${schema.pattern}'` });
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errs.push({ type: 'TooMany', field: path, value: value.length, detail: `must have at most ${schema.maxItems} items` });
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errs.push({ type: 'Invalid', field: path, value, detail: `${path} in body should have at least ${schema.minItems} items` });
    value.forEach((item, i) => errs.push(...validateValue(item, schema.items, `${path}[${i}]`)));
  }
  if (isObject(value)) {
    for (const r of schema.required ?? []) if (value[r] === undefined) errs.push({ type: 'Required', field: join(path, r), detail: '' });
    if (schema['x-kubernetes-embedded-resource']) {
      if (typeof value.apiVersion !== 'string' || value.apiVersion === '')
        errs.push({ type: 'Required', field: join(path, 'apiVersion'), detail: 'must not be empty' });
      if (typeof value.kind !== 'string' || value.kind === '') errs.push({ type: 'Required', field: join(path, 'kind'), detail: 'must not be empty' });
    }
    for (const [key, v] of Object.entries(value)) {
      const sub = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if ((path === '' || schema['x-kubernetes-embedded-resource']) && key === 'metadata') continue;
      errs.push(...validateValue(v, sub, join(path, key)));
    }
  }
  return errs;
}

/** The paths of a schema that carry x-kubernetes-validations rules (CEL), once each, for saying which are not evaluated. */
export function celRulePaths(schema: JSONSchemaProps | undefined, path = ''): string[] {
  if (!schema) return [];
  const out: string[] = (schema['x-kubernetes-validations'] ?? []).length > 0 ? [path || '<root>'] : [];
  for (const [k, s] of Object.entries(schema.properties ?? {})) out.push(...celRulePaths(s, join(path, k)));
  if (schema.items) out.push(...celRulePaths(schema.items, `${path}[*]`));
  if (isObject(schema.additionalProperties)) out.push(...celRulePaths(schema.additionalProperties as JSONSchemaProps, `${path}[*]`));
  return out;
}
