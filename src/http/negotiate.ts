// The media type of a response, as the API server negotiates it from the Accept header: the first
// type it serves in the client's order, JSON when none is named (apiserver's
// endpoints/handlers/negotiation). Kubernetes protobuf for the kinds with a known message; Warning
// headers (RFC 7234's `299 - "text"`, as apiserver's warning recorder writes them).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeProtobuf, protobufMediaType } from './protobuf.js';
import { sendJSON } from './status.js';

/** Whether the first media type of the Accept header this server answers in is Kubernetes protobuf. */
export function prefersProtobuf(req: IncomingMessage): boolean {
  for (const part of (req.headers.accept ?? '').split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    // A Table or other transformed form is JSON.
    if (params.some((p) => p.startsWith('as='))) return false;
    if (type === protobufMediaType) return true;
    if (type === 'application/json' || type === 'application/yaml' || type === '*/*' || type === 'application/*') return false;
  }
  return false;
}

/** An API object in the media type the client prefers (protobuf when asked for first and its kind has a message). */
export function sendObject(req: IncomingMessage, res: ServerResponse, code: number, body: { apiVersion?: string; kind?: string }): void {
  if (prefersProtobuf(req)) {
    const data = encodeProtobuf(body);
    if (data) {
      res.writeHead(code, { 'Content-Type': protobufMediaType, 'Content-Length': data.length });
      res.end(data);
      return;
    }
  }
  sendJSON(res, code, body);
}

/** Adds a Warning header per message, before the response's head is written. */
export function addWarnings(res: ServerResponse, messages: readonly string[]): void {
  if (messages.length === 0 || res.headersSent) return;
  const had = res.getHeader('Warning');
  const prior = had === undefined ? [] : Array.isArray(had) ? had : [String(had)];
  res.setHeader('Warning', [...prior, ...messages.map((m) => `299 - ${JSON.stringify(m)}`)]);
}
