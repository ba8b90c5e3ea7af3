// fieldValidation (Strict, Warn, Ignore) applied to what decoding found: unknown fields and the keys
// a JSON body repeats. Strict refuses the request with every finding in one 400, as the API server's
// strict decoding error (`strict decoding error: unknown field "spec.foo", duplicate field
// "spec.replicas"`); Warn sends each as a Warning header; Ignore drops them.
// Upstream: apiserver's endpoints/handlers (create.go, update.go, patch.go) over runtime.StrictDecodingError.

import { badRequest } from '../http/status.js';
import type { CreateOptions } from './backend.js';

/** Applies the request's fieldValidation to the paths of the unknown fields (`spec.foo`) and the body's duplicate keys. */
export function checkFields(opts: CreateOptions, unknownFields: readonly string[]): void {
  const findings = [
    ...unknownFields.map((p) => `unknown field ${JSON.stringify(p)}`),
    ...(opts.duplicateFields ?? []).map((p) => `duplicate field ${JSON.stringify(p)}`),
  ];
  if (findings.length === 0) return;
  const mode = opts.fieldValidation ?? 'Strict';
  if (mode === 'Strict') throw badRequest(`strict decoding error: ${findings.join(', ')}`);
  if (mode === 'Warn') for (const f of findings) opts.warn?.(f);
}
