// Query parameters and headers as the API server reads them: booleans by Go's strconv.ParseBool (the
// Python client sends `watch=True`), integers strictly, dryRun, fieldValidation, includeObject and the
// Accept header's Table request; errors as 400 BadRequest.

import type { IncomingMessage } from 'node:http';
import type { IncludeObject } from '../printers/tables.js';
import { badRequest } from '../http/status.js';
import type { CreateOptions } from './backend.js';

const trueWords = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const falseWords = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** strconv.ParseBool; an absent parameter is `dflt`. */
export function boolParam(q: URLSearchParams, name: string, dflt = false): boolean {
  const v = q.get(name);
  if (v === null) return dflt;
  if (trueWords.has(v)) return true;
  if (falseWords.has(v)) return false;
  throw badRequest(`invalid boolean value "${v}" for parameter ${name}: strconv.ParseBool: parsing "${v}": invalid syntax`);
}

/** An integer parameter, undefined when absent or empty. */
export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?[0-9]+$/.test(v)) throw badRequest(`invalid value "${v}" for parameter ${name}: strconv.ParseInt: parsing "${v}": invalid syntax`);
  return Number.parseInt(v, 10);
}

/** Whether the Accept header asks for a meta.k8s.io Table. */
export function wantsTable(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  for (const part of accept.split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (params.includes('as=Table') && params.some((p) => p === 'g=meta.k8s.io') && params.some((p) => p === 'v=v1' || p === 'v=v1beta1')) return true;
  }
  return false;
}

export function includeObjectOf(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === 'None' || v === 'Object' || v === 'Metadata') return v;
  if (v) throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "None", "Metadata", "Object"`);
  return 'Metadata';
}

/** The request's fieldValidation; Warn when absent or empty, as the API server's (handlers/rest.go fieldValidation). */
function fieldValidationOf(q: URLSearchParams): 'Strict' | 'Warn' | 'Ignore' {
  const v = q.get('fieldValidation') || 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${v}"`);
}

export function dryRunOf(q: URLSearchParams): boolean {
  const v = q.getAll('dryRun');
  if (v.length === 0) return false;
  if (v.every((x) => x === 'All')) return true;
  throw badRequest(`dryRun: Unsupported value: "${v.find((x) => x !== 'All')}": supported values: "All"`);
}

/** The options of a create, update or patch: fieldValidation and dryRun. */
export function writeOptionsOf(q: URLSearchParams): CreateOptions {
  return { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) };
}
