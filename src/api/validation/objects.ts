// Validation of the ConfigMaps and Secrets a manifest may carry alongside its pods
// (ValidateConfigMap, ValidateSecret): metadata, data keys, and base64 secret values.

import type { ConfigMap, Secret } from '../types.js';
import { type FieldError, invalid, newPath, sortFieldErrors, tooLong } from '../field-errors.js';
import { isConfigMapKey } from './names.js';
import { validateObjectMeta } from './pod.js';

/** Index of the first byte Go's base64.StdEncoding rejects, or -1 when s decodes. */
export function base64ErrorOffset(s: string): number {
  const body = s.replace(/=+$/, '');
  for (let i = 0; i < body.length; i++) {
    if (!/[A-Za-z0-9+/]/.test(body[i]!)) return i;
  }
  const padding = s.length - body.length;
  if (s.length % 4 !== 0 || padding > 2 || (padding > 0 && body.length % 4 < 2)) return s.length % 4 === 0 ? body.length : s.length - (s.length % 4);
  if (padding === 0 && body.length % 4 === 1) return body.length - 1;
  return -1;
}

function validateKeys(data: Record<string, string> | undefined, other: Record<string, string> | undefined, field: string, otherField: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(data ?? {})) {
    const p = newPath(field).key(key);
    errs.push(...isConfigMapKey(key).map((m) => invalid(p, key, m)));
    if (other && key in other) errs.push(invalid(p, key, `duplicate of key present in ${otherField}`));
  }
  return errs;
}

/** core.MaxSecretSize: the most data a ConfigMap or a Secret may hold. */
export const maxSecretSize = 1024 * 1024;

export function validateConfigMap(cm: ConfigMap): FieldError[] {
  const errs = validateObjectMeta(cm.metadata);
  let total = 0;
  for (const v of Object.values(cm.data ?? {})) total += Buffer.byteLength(v);
  for (const v of Object.values(cm.binaryData ?? {})) total += Buffer.byteLength(v, 'base64');
  // The API server reports it against the whole object: an empty path, printed `[]`.
  if (total > maxSecretSize) errs.push(tooLong('[]', '', maxSecretSize));
  errs.push(...validateKeys(cm.data, cm.binaryData, 'data', 'binaryData'));
  errs.push(...validateKeys(cm.binaryData, undefined, 'binaryData', 'data'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) {
    const at = base64ErrorOffset(v);
    if (at >= 0) errs.push(invalid(newPath('binaryData').key(k), '<binary>', `illegal base64 data at input byte ${at}`));
  }
  return sortFieldErrors(errs);
}

/** Secret data as stored (stringData already merged in as base64). */
export function validateSecret(secret: Secret): FieldError[] {
  const errs = validateObjectMeta(secret.metadata);
  errs.push(...validateKeys(secret.data, undefined, 'data', ''));
  let total = 0;
  for (const v of Object.values(secret.data ?? {})) total += Buffer.byteLength(v, 'base64');
  if (total > maxSecretSize) errs.push(tooLong(newPath('data'), '', maxSecretSize));
  for (const [k, v] of Object.entries(secret.data ?? {})) {
    const at = base64ErrorOffset(v);
    if (at >= 0) errs.push(invalid(newPath('data').key(k), '<secret contents redacted>', `illegal base64 data at input byte ${at}`));
  }
  return sortFieldErrors(errs);
}
