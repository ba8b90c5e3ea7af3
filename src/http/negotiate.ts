// The media type of a response, as the API server negotiates it from the Accept header: the first
// type it serves in the client's order, JSON when none is named (apiserver's
// endpoints/handlers/negotiation). Kubernetes protobuf for the kinds with a known message; Warning
// headers (RFC 7234's `299 - "text"`, as apiserver's warning recorder writes them).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeProtobuf, protobufMediaType } from './protobuf.js';
import { sendJSON } from './status.js';
import { goQuote } from '../util/go-format.js';

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

/**
 * The header value of one warning: `299 - "<text>"` (RFC 7234 warn-code 299, no agent), the text
 * quoted as Go's strconv.Quote does and what is not ASCII escaped as \\u (a header carries bytes, not
 * text). Upstream: apimachinery's util/net NewWarningHeader.
 */
export function warningHeader(text: string): string {
  return `299 - ${goQuote(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`;
}

/** Adds a Warning header per message (each text once, in order), before the response's head is written. */
export function addWarnings(res: ServerResponse, messages: readonly string[]): void {
  if (messages.length === 0 || res.headersSent) return;
  const had = res.getHeader('Warning');
  const prior = had === undefined ? [] : Array.isArray(had) ? had.map(String) : [String(had)];
  const added = messages.map(warningHeader).filter((h, i, all) => !prior.includes(h) && all.indexOf(h) === i);
  if (added.length > 0) res.setHeader('Warning', [...prior, ...added]);
}
