// Names taken from a request path (namespace, pod, container) are checked before anything looks them
// up or builds a path from them: DNS-1123 as the API server requires, so no `..`, `/` or NUL gets through.

import { isDNS1123Label, isDNS1123Subdomain } from '../api/validation/names.js';
import { ApiError } from '../http/status.js';

export type PathName = 'namespace' | 'pod' | 'container';

/** Throws 400 BadRequest unless value is a valid name of its kind. */
export function checkPathName(kind: PathName, value: string): string {
  const errs = kind === 'pod' ? isDNS1123Subdomain(value) : isDNS1123Label(value);
  if (errs.length > 0 || value.includes('/') || value.includes('..')) {
    throw new ApiError(400, 'BadRequest', `invalid ${kind} name ${JSON.stringify(value)}: ${errs.join('; ') || 'must not contain "/" or ".."'}`);
  }
  return value;
}
