// Field-level validation errors shaped like apimachinery's field.Error and field.Path, printed
// exactly as the API server prints them (`<path>: <type text>[: <value>][: <detail>]`).

import { goQuote } from '../util/go-format.js';

export type FieldErrorType = 'Required' | 'Forbidden' | 'Invalid' | 'NotSupported' | 'Duplicate' | 'NotFound' | 'TooLong' | 'TooMany' | 'Internal';

export interface FieldError {
  type: FieldErrorType;
  /** The field path as a string, e.g. `spec.containers[0].livenessProbe`. */
  field: string;
  /** The offending value; absent for types that never print one (Required, Forbidden, …). */
  value?: unknown;
  detail?: string;
}

/** A path into an object, built like field.NewPath("spec").Child("containers").Index(0). */
export class FieldPath {
  private constructor(private readonly parts: readonly string[]) {}

  static root(name: string, ...more: string[]): FieldPath {
    return new FieldPath([name, ...more].map((n, i) => (i === 0 ? n : `.${n}`)));
  }

  child(name: string, ...more: string[]): FieldPath {
    return new FieldPath([...this.parts, ...[name, ...more].map((n) => (this.parts.length ? `.${n}` : n))]);
  }

  index(i: number): FieldPath {
    return new FieldPath([...this.parts, `[${i}]`]);
  }

  key(k: string): FieldPath {
    return new FieldPath([...this.parts, `[${k}]`]);
  }

  toString(): string {
    return this.parts.join('');
  }
}

/** Shorthand for FieldPath.root. */
export function newPath(name: string, ...more: string[]): FieldPath {
  return FieldPath.root(name, ...more);
}

type PathLike = FieldPath | string;
const str = (p: PathLike) => (typeof p === 'string' ? p : p.toString());

export function required(path: PathLike, detail = ''): FieldError {
  return { type: 'Required', field: str(path), detail };
}

export function forbidden(path: PathLike, detail = ''): FieldError {
  return { type: 'Forbidden', field: str(path), detail };
}

export function invalid(path: PathLike, value: unknown, detail = ''): FieldError {
  return { type: 'Invalid', field: str(path), value, detail };
}

export function notSupported(path: PathLike, value: unknown, supported: readonly string[]): FieldError {
  const detail = supported.length ? `supported values: ${supported.map(goQuote).join(', ')}` : '';
  return { type: 'NotSupported', field: str(path), value, detail };
}

export function duplicate(path: PathLike, value: unknown): FieldError {
  return { type: 'Duplicate', field: str(path), value, detail: '' };
}

export function notFound(path: PathLike, value: unknown): FieldError {
  return { type: 'NotFound', field: str(path), value, detail: '' };
}

export function tooLong(path: PathLike, value: unknown, maxLength: number): FieldError {
  return { type: 'TooLong', field: str(path), value, detail: `must have at most ${maxLength} bytes` };
}

export function tooMany(path: PathLike, actual: number, max: number): FieldError {
  return {
    type: 'TooMany',
    field: str(path),
    value: actual,
    detail: max >= 0 ? `must have at most ${max} items` : 'has too many items',
  };
}

export function internalError(path: PathLike, err: Error | string): FieldError {
  return { type: 'Internal', field: str(path), detail: typeof err === 'string' ? err : err.message };
}

const typeText: Record<FieldErrorType, string> = {
  NotFound: 'Not found',
  Required: 'Required value',
  Duplicate: 'Duplicate value',
  Invalid: 'Invalid value',
  NotSupported: 'Unsupported value',
  Forbidden: 'Forbidden',
  TooLong: 'Too long',
  TooMany: 'Too many',
  Internal: 'Internal error',
};

/** Renders a bad value as the API server does: numbers and booleans bare, strings %q, nil `null`. */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  // A YAML merge key (`<<`) used as a value parses to a symbol.
  if (typeof v === 'symbol') return goQuote(v.description ?? '');
  if (typeof v === 'function') return 'null';
  if (typeof v === 'object' && typeof (v as { toString?: unknown }).toString === 'function' && (v as object).toString !== Object.prototype.toString) {
    return String(v);
  }
  return JSON.stringify(v) ?? 'null';
}

/** The error text without the field path (field.Error.ErrorBody). */
export function formatFieldErrorBody(e: FieldError): string {
  let s = typeText[e.type];
  const printsValue = !(e.type === 'Required' || e.type === 'Forbidden' || e.type === 'TooLong' || e.type === 'Internal');
  if (printsValue) s += `: ${formatValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `<field>: <body>`, as field.Error.Error(). */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${formatFieldErrorBody(e)}`;
}

/** Drops errors whose printed text repeats an earlier one, as ErrorList.ToAggregate does. */
export function dedupeFieldErrors(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    const msg = formatFieldError(e);
    if (seen.has(msg)) continue;
    seen.add(msg);
    out.push(e);
  }
  return out;
}

/** Stable sort by field path (then by message), so reports read top-down. */
export function sortFieldErrors(errors: readonly FieldError[]): FieldError[] {
  return [...errors].sort((a, b) => comparePaths(a.field, b.field));
}

/** Compares field paths segment by segment, with indices compared numerically. */
export function comparePaths(a: string, b: string): number {
  const sa = splitPath(a);
  const sb = splitPath(b);
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const x = sa[i]!;
    const y = sb[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return sa.length - sb.length;
}

function splitPath(p: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of p.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    if (m[1] !== undefined) out.push(m[1]);
    else out.push(/^[0-9]+$/.test(m[2]!) ? Number(m[2]) : m[2]!);
  }
  return out;
}

/** Aggregated text as utilerrors.NewAggregate prints: the one message, or `[a, b]`. */
export function aggregateMessage(messages: readonly string[]): string {
  return messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`;
}

/** Thrown with every field error of an object at once. */
export class ValidationError extends Error {
  readonly errors: FieldError[];
  /** The object the errors are about, e.g. `{ kind: 'Pod', name: 'web' }`. */
  readonly kind?: string;
  readonly objectName?: string;

  constructor(errors: FieldError[], opts: { kind?: string; name?: string } = {}) {
    const text = aggregateMessage(errors.map(formatFieldError));
    super(opts.kind ? `${opts.kind} ${goQuote(opts.name ?? '')} is invalid: ${text}` : text);
    this.name = 'ValidationError';
    this.errors = errors;
    if (opts.kind !== undefined) this.kind = opts.kind;
    if (opts.name !== undefined) this.objectName = opts.name;
  }
}
