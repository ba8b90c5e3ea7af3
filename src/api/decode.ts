// Strict decoding of a parsed manifest against the v1 field schema: reports unknown fields (with a
// "did you mean" hint when a known field is close) and values of the wrong type, and returns a copy
// without the unknown fields, as the API server's strict/warn field validation does.

import { apiSchema, type FieldType, type Schema } from './schema.js';
import { formatValue } from './field-errors.js';

export type PathSegment = string | number;

export interface DecodeProblem {
  /** Path segments from the object's root (field names, list indices, map keys). */
  segments: PathSegment[];
  /** The field path as printed, e.g. `spec.containers[0].livenessProbe.initialDelaySecond`. */
  path: string;
  /** The whole message, starting with the path. */
  message: string;
}

export interface DecodeResult<T = unknown> {
  /** A copy of the input without unknown fields; null fields are dropped (Go's zero value). */
  value: T;
  unknownFields: DecodeProblem[];
  typeErrors: DecodeProblem[];
}

/** `spec.containers[0].name`-style text of path segments; map keys print as `[key]`. */
export function formatPath(segments: readonly PathSegment[], mapKeys: ReadonlySet<number> = new Set()): string {
  let out = '';
  segments.forEach((s, i) => {
    if (typeof s === 'number' || mapKeys.has(i)) out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  });
  return out;
}

/** Levenshtein distance, for the "did you mean" hint. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The known field closest to name, when close enough to be a likely typo. */
export function suggestField(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const exactCase = known.find((k) => k.toLowerCase() === lower);
  if (exactCase) return exactCase;
  const limit = name.length <= 4 ? 1 : name.length <= 12 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of [...known].sort()) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

const typeWords: Record<FieldType['type'], string> = {
  string: 'must be a string',
  integer: 'must be an integer',
  boolean: 'must be a boolean',
  intOrString: 'must be an integer or a string',
  quantity: 'must be a quantity (a string such as "100m" or "128Mi", or a number)',
  any: '',
  object: 'must be an object',
  array: 'must be a list',
  map: 'must be an object',
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof Uint8Array);

function shortValue(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (isPlainObject(v)) return 'object';
  const s = formatValue(v);
  return s.length > 60 ? `${s.slice(0, 57)}..."` : s;
}

/** out[key] = value, as an own property even for `__proto__` (a map key like any other). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Integer fields the API declares int64; every other integer field is an int32. */
const int64Fields = new Set([
  'core/v1.PodSpec.activeDeadlineSeconds',
  'core/v1.PodSpec.terminationGracePeriodSeconds',
  'core/v1.Probe.terminationGracePeriodSeconds',
  'core/v1.SleepAction.seconds',
  'core/v1.PodSecurityContext.fsGroup',
  'core/v1.PodSecurityContext.runAsGroup',
  'core/v1.PodSecurityContext.runAsUser',
  'core/v1.PodSecurityContext.supplementalGroups',
  'core/v1.SecurityContext.runAsGroup',
  'core/v1.SecurityContext.runAsUser',
  'core/v1.ServiceAccountTokenProjection.expirationSeconds',
  'core/v1.Toleration.tolerationSeconds',
  'core/v1.PodStatus.observedGeneration',
  'core/v1.PodCondition.observedGeneration',
  'meta/v1.ObjectMeta.deletionGracePeriodSeconds',
  'meta/v1.ObjectMeta.generation',
]);

const int32Range = [-2147483648, 2147483647] as const;
// 2^63 - 1 is not a double: the nearest, 2^63, stands for it.
// eslint-disable-next-line no-loss-of-precision -- written as Go's bounds, read as the nearest doubles
const int64Range = [-9223372036854775808, 9223372036854775807] as const;

/** Go's name for the path of a struct field in an unmarshal error: JSON keys from the root, no indices. */
function goFieldPath(segments: readonly PathSegment[], mapKeys: ReadonlySet<number>): string {
  return segments.filter((s, i) => typeof s === 'string' && !mapKeys.has(i)).join('.');
}

class Decoder {
  readonly unknownFields: DecodeProblem[] = [];
  readonly typeErrors: DecodeProblem[] = [];
  constructor(private readonly schema: Readonly<Schema>) {}

  private path(segments: PathSegment[], mapKeys: Set<number>): string {
    return formatPath(segments, mapKeys);
  }

  private typeError(ft: FieldType, v: unknown, segments: PathSegment[], mapKeys: Set<number>): undefined {
    const path = this.path(segments, mapKeys);
    this.typeErrors.push({ segments, path, message: `${path}: Invalid value: ${shortValue(v)}: ${typeWords[ft.type]}` });
    return undefined;
  }

  /** Returns the decoded value, or undefined to drop it. */
  value(ft: FieldType, v: unknown, segments: PathSegment[], mapKeys: Set<number>): unknown {
    if (v === null || v === undefined) return undefined;
    switch (ft.type) {
      case 'any':
        return v;
      case 'string':
        return typeof v === 'string' ? v : this.typeError(ft, v, segments, mapKeys);
      case 'integer':
        return typeof v === 'number' && Number.isInteger(v) ? v : this.typeError(ft, v, segments, mapKeys);
      case 'boolean':
        return typeof v === 'boolean' ? v : this.typeError(ft, v, segments, mapKeys);
      case 'intOrString':
        return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)) ? v : this.typeError(ft, v, segments, mapKeys);
      case 'quantity':
        // A JSON number is a valid Quantity; it is kept in the string form the API returns.
        if (typeof v === 'number' && Number.isFinite(v)) return String(v);
        return typeof v === 'string' ? v : this.typeError(ft, v, segments, mapKeys);
      case 'array': {
        if (!Array.isArray(v)) return this.typeError(ft, v, segments, mapKeys);
        const out: unknown[] = [];
        v.forEach((item, i) => {
          const d = item === null && ft.items.type === 'object' ? {} : this.value(ft.items, item, [...segments, i], mapKeys);
          if (d !== undefined) out.push(d);
        });
        return out;
      }
      case 'map': {
        if (!isPlainObject(v)) return this.typeError(ft, v, segments, mapKeys);
        const out: Record<string, unknown> = {};
        for (const [k, item] of Object.entries(v)) {
          const keys = new Set(mapKeys).add(segments.length);
          const d = this.value(ft.values, item, [...segments, k], keys);
          if (d !== undefined) setOwn(out, k, d);
        }
        return out;
      }
      case 'object':
        if (!isPlainObject(v)) return this.typeError(ft, v, segments, mapKeys);
        return this.object(ft.ref, v, segments, mapKeys);
    }
  }

  object(typeName: string, v: Record<string, unknown>, segments: PathSegment[], mapKeys: Set<number>): Record<string, unknown> {
    const t = this.schema.types[typeName];
    if (!t) throw new Error(`schema has no type ${typeName}`);
    const known = Object.keys(t.fields);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      // Own fields only: `__proto__` or `constructor` is an unknown field like any other.
      const ft = Object.hasOwn(t.fields, k) ? t.fields[k] : undefined;
      if (!ft) {
        const fieldSegments = [...segments, k];
        const path = this.path(fieldSegments, mapKeys);
        const hint = suggestField(k, known);
        this.unknownFields.push({
          segments: fieldSegments,
          path,
          message: `${path}: unknown field "${k}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
        continue;
      }
      const d = this.value(ft, item, [...segments, k], mapKeys);
      if (d !== undefined) out[k] = this.inRange(typeName, k, ft, d, [...segments, k], mapKeys);
    }
    return out;
  }

  /**
   * An integer beyond its field's Go type fails the API server's decoding; reported with its words
   * (`cannot unmarshal number … into Go struct field Probe.spec…timeoutSeconds of type int32`).
   */
  private inRange(typeName: string, field: string, ft: FieldType, d: unknown, segments: PathSegment[], mapKeys: Set<number>): unknown {
    const isInt = ft.type === 'integer' || (ft.type === 'array' && ft.items.type === 'integer');
    if (!isInt) return d;
    const goType = int64Fields.has(`${typeName}.${field}`) ? 'int64' : 'int32';
    const [lo, hi] = goType === 'int64' ? int64Range : int32Range;
    const values = Array.isArray(d) ? (d as number[]) : [d as number];
    let ok = true;
    values.forEach((v, i) => {
      if (v >= lo && v <= hi) return;
      ok = false;
      const at = Array.isArray(d) ? [...segments, i] : segments;
      const path = this.path(at, mapKeys);
      const struct = typeName.slice(typeName.lastIndexOf('.') + 1);
      const goPath = goFieldPath(segments, mapKeys);
      this.typeErrors.push({
        segments: at,
        path,
        message: `${path}: Invalid value: ${v}: cannot unmarshal number ${v} into Go struct field ${struct}.${goPath} of type ${goType}`,
      });
    });
    return ok ? d : undefined;
  }
}

/** encoding/json's name for the JSON type of a value, as its UnmarshalTypeError prints it. */
function goJSONType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'string' ? 'string' : 'object';
}

/**
 * kube-apiserver's answer to a request body whose apiVersion or kind is not a string (a mapping, a
 * list, a number): its JSON serializer reads both into string fields first (Interpret), fails there,
 * and the handler names the type it wanted and the start of the body (transformDecodeError,
 * summarizeData: 30 bytes). Undefined when both are strings or absent.
 */
export function typeMetaError(body: Readonly<Record<string, unknown>>, kind: string): string | undefined {
  // json.Unmarshal reports the first field in the body's order.
  const field = Object.keys(body).find((k) => (k === 'apiVersion' || k === 'kind') && body[k] !== null && typeof body[k] !== 'string');
  if (field === undefined) return undefined;
  const data = JSON.stringify(body);
  const summary = data.length > 30 ? `${data.slice(0, 30)} ...` : data;
  return (
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ` +
    `json: cannot unmarshal ${goJSONType(body[field])} into Go struct field .${field} of type string (${summary})`
  );
}

/**
 * Decodes v as the schema type typeName (e.g. `core/v1.Pod`). Problems are reported, never
 * thrown; the caller decides whether unknown fields are errors, warnings or ignored.
 */
export function strictDecode<T = unknown>(v: unknown, typeName: string, schema: Readonly<Schema> = apiSchema): DecodeResult<T> {
  const d = new Decoder(schema);
  let value: unknown;
  if (isPlainObject(v)) value = d.object(typeName, v, [], new Set());
  else {
    d.typeErrors.push({ segments: [], path: '', message: `Invalid value: ${shortValue(v)}: must be an object` });
    value = {};
  }
  return { value: value as T, unknownFields: d.unknownFields, typeErrors: d.typeErrors };
}
