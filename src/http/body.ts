// Request bodies, capped as the API server caps them (3 MiB): more is refused with 413 before it is
// buffered, and a body that is not JSON is a 400 in the API server's words.

import type { IncomingMessage } from 'node:http';
import { ApiError } from './status.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  const tooLarge = () => new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

export async function readJSONBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, limit);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new ApiError(
      400,
      'BadRequest',
      `the body of the request was in an unknown format - accepted media types include: application/json (${(err as Error).message})`,
    );
  }
}
