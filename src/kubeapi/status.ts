// v1 Status objects as the API server writes them: every failure carries kind Status, a message,
// the reason (NotFound, AlreadyExists, Invalid, Conflict, …), details and the HTTP code.

import type { ServerResponse } from 'node:http';
import { ApiError } from './backend.js';

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: ApiError['details'];
  code: number;
}

export function statusOf(err: ApiError): StatusObject {
  const s: StatusObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason, code: err.code };
  if (err.details) s.details = err.details;
  return s;
}

/** Any thrown value as an ApiError: ApiErrors and objects with a numeric code and reason as they are, the rest 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: unknown; reason?: unknown; message?: unknown; details?: ApiError['details'] };
  if (e && typeof e.code === 'number' && typeof e.reason === 'string') return new ApiError(e.code, e.reason, String(e.message ?? ''), e.details);
  return new ApiError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
}

export function sendJSON(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const e = toApiError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJSON(res, e.code, statusOf(e));
}

export const notFound = (resource: string, name: string, group = ''): ApiError =>
  new ApiError(404, 'NotFound', `${group ? `${resource}.${group}` : resource} "${name}" not found`, { name, kind: resource, ...(group ? { group } : {}) });

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError => new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const notFoundPath = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource');

export const unsupportedMediaType = (type: string): ApiError =>
  new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got ${type})`);

export const invalid = (kind: string, name: string, causes: Array<{ field: string; message: string; reason?: string }>): ApiError =>
  new ApiError(
    422,
    'Invalid',
    `${kind} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
    { name, kind: kind.toLowerCase() + 's', causes: causes.map((c) => ({ reason: c.reason ?? 'FieldValueInvalid', message: c.message, field: c.field })) },
  );
