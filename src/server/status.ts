// The API server's error body: every failed request gets a v1 Status (kind, status Failure, message,
// reason, details, code), whatever the route, so clients print the message as they would a cluster's.

import type { ServerResponse } from 'node:http';

export interface StatusDetails {
  name?: string;
  kind?: string;
  group?: string;
  causes?: Array<{ reason?: string; message?: string; field?: string }>;
  retryAfterSeconds?: number;
}

/** An HTTP failure carrying what its Status says. Any error with a numeric code and a reason is treated alike. */
export class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export function statusBody(code: number, reason: string, message: string, details?: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** The Status an error maps to: its own code and reason when it has them, else 500 InternalError. */
export function statusOf(err: unknown): Status {
  const e = err as { code?: unknown; reason?: unknown; message?: unknown; details?: StatusDetails };
  if (typeof e?.code === 'number' && typeof e.reason === 'string' && e.code >= 400 && e.code <= 599) {
    return statusBody(e.code, e.reason, String(e.message ?? ''), e.details);
  }
  return statusBody(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
}

export function sendJSON(res: ServerResponse, code: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

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
    `HTTP/1.1 ${status.code} ${status.reason}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
