// The server's one error type and one v1 Status module: every failed request — API, kubelet route,
// refused upgrade — answers with a Status (kind, status Failure, message, reason, details, code) as
// the API server writes it (k8s.io/apimachinery/pkg/api/errors and apiserver's responsewriters).

import type { ServerResponse } from 'node:http';
import { formatFieldError, formatFieldErrorBody, sortFieldErrors, type FieldError } from '../api/field-errors.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  /** The resource (plural, `pods`) or, for Invalid, the kind (`Pod`), as the API server words it. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A failure carrying what its Status says (apimachinery's StatusError). Anything with a numeric code and a reason is treated alike. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export function statusBody(code: number, reason: string, message: string, details?: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** The Status of a completed deletion (the object is gone; details name it). */
export function successStatus(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}

/** Any thrown value as an ApiError: its own code and reason when it has them (4xx/5xx), else 500 InternalError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: unknown; reason?: unknown; message?: unknown; details?: StatusDetails } | undefined;
  if (typeof e?.code === 'number' && typeof e.reason === 'string' && e.code >= 400 && e.code <= 599) {
    return new ApiError(e.code, e.reason, String(e.message ?? ''), e.details);
  }
  return new ApiError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
}

/** The Status an error maps to. */
export function statusOf(err: unknown): Status {
  const e = toApiError(err);
  return statusBody(e.code, e.reason, e.message, e.details);
}

export function sendJSON(res: ServerResponse, code: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

/** Writes a Status; once headers are out (a stream that failed midway) the connection is cut instead. */
export function sendStatus(res: ServerResponse, status: Status): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJSON(res, status.code, status);
}

export function sendError(res: ServerResponse, err: unknown): void {
  sendStatus(res, statusOf(err));
}

export function sendText(res: ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The raw HTTP response written to an upgrade socket that is refused. */
export function rawStatusResponse(status: Status): string {
  const body = JSON.stringify(status);
  return (
    `HTTP/1.1 ${status.code} ${status.reason ?? ''}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

// ---- the API server's errors (apimachinery/pkg/api/errors) ----

/** `<resource>[.<group>] "<name>" not found`. */
export const notFound = (resource: string, name: string, group = ''): ApiError =>
  new ApiError(404, 'NotFound', `${group ? `${resource}.${group}` : resource} ${JSON.stringify(name)} not found`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });

/** A path no route serves. */
export const notFoundPath = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource');

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError => new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const alreadyExists = (resource: string, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${resource} ${JSON.stringify(name)} already exists`, { name, kind: resource });

/** `Operation cannot be fulfilled on <resource> "<name>": <why>`. */
export const conflict = (resource: string, name: string, why: string): ApiError =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} ${JSON.stringify(name)}: ${why}`, { name, kind: resource });

/** NewTooManyRequests: 429, with the seconds to wait when said (0: not said) and the causes. */
export const tooManyRequests = (message: string, retryAfterSeconds: number, causes?: StatusCause[]): ApiError =>
  new ApiError(429, 'TooManyRequests', message, { ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}), ...(causes ? { causes } : {}) });

/** NewForbidden: `<resource>[.<group>] "<name>" is forbidden: <why>`. */
export const forbiddenObject = (resource: string, group: string, name: string, why: string): ApiError =>
  new ApiError(403, 'Forbidden', `${group ? `${resource}.${group}` : resource} ${JSON.stringify(name)} is forbidden: ${why}`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });

/** NewInternalError: `Internal error occurred: <why>`, the reason as the one cause. */
export const internalError = (why: string): ApiError => new ApiError(500, 'InternalError', `Internal error occurred: ${why}`, { causes: [{ message: why }] });

export const staleObject = 'the object has been modified; please apply your changes to the latest version and try again';

export const unsupportedMediaType = (type: string): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got ${type})`,
  );

const causeReason: Record<FieldError['type'], string> = {
  NotFound: 'FieldValueNotFound',
  Required: 'FieldValueRequired',
  Duplicate: 'FieldValueDuplicate',
  Invalid: 'FieldValueInvalid',
  NotSupported: 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
  Internal: 'InternalError',
};

/** The API server's 422 (NewInvalid): `<Kind> "<name>" is invalid: <err>` or `[<err>, <err>]`, one cause per error. */
export function invalid(kind: string, name: string, errors: readonly FieldError[]): ApiError {
  const sorted = sortFieldErrors(errors);
  const texts = sorted.map(formatFieldError);
  return new ApiError(422, 'Invalid', `${kind} ${JSON.stringify(name)} is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`, {
    name,
    kind,
    causes: sorted.map((e) => ({ reason: causeReason[e.type], message: formatFieldErrorBody(e), field: e.field })),
  });
}
