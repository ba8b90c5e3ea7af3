// Query parameters as the API server reads them: booleans by Go's strconv.ParseBool (the Python
// client sends `watch=True`), integers strictly, errors as 400 BadRequest.

import { badRequest } from './status.js';

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
