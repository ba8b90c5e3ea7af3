// Request bodies, capped as the API server caps them (3 MiB): more is refused with 413 before it is
// buffered, a body nested deeper than the manifests' limit is a 400 naming it (before any parser
// recurses into it), and a body that is not JSON (or YAML or Kubernetes protobuf, by its
// Content-Type) is a 400 in the API server's words. readObjectBody is the one decoder of an object
// sent to the API, whatever its media type.

import type { IncomingMessage } from 'node:http';
import { parseSource } from '../config/documents.js';
import { findExcessiveNesting, maxNestingDepth } from '../config/limits.js';
import { duplicateJSONFields } from './json-duplicates.js';
import { decodeProtobuf, protobufMediaType, ProtobufDecodeError } from './protobuf.js';
import { ApiError } from './status.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** True for the media types kube-apiserver decodes as YAML. */
export function isYAMLMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/yaml' || type === 'application/apply-patch+yaml';
}

/** True for Kubernetes protobuf (`application/vnd.kubernetes.protobuf`). */
export function isProtobufMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase() === protobufMediaType;
}

function tooDeep(depth: number): ApiError {
  return new ApiError(400, 'BadRequest', `the request body is nested deeper than ${depth} levels, the most this API accepts`);
}

/** A JSON body as a value; 400 when it nests deeper than the limit or is not JSON. */
export function parseJSONText(text: string): unknown {
  if (findExcessiveNesting(text, maxNestingDepth)) throw tooDeep(maxNestingDepth);
  return JSON.parse(text);
}

/** A YAML body (one document, read as kubectl reads manifests) as a value; undefined when empty. */
export function parseYAMLText(text: string): unknown {
  const parsed = parseSource({ name: 'request body', text });
  if (parsed.errors.length > 0) throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${parsed.errors.join('; ')}`);
  if (parsed.documents.length > 1) throw new ApiError(400, 'BadRequest', 'the request body holds more than one YAML document');
  return parsed.documents[0]?.value;
}

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
    return parseJSONText(body.toString('utf8'));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      400,
      'BadRequest',
      `the body of the request was in an unknown format - accepted media types include: application/json (${(err as Error).message})`,
    );
  }
}

/** An object sent to the API, decoded; `duplicates` are the paths of keys a JSON body repeats. */
export interface DecodedBody {
  /** undefined for an empty body. */
  value: unknown;
  duplicates: string[];
}

/**
 * The request body as an object, by its Content-Type: Kubernetes protobuf, YAML (or `yaml` for an
 * apply patch), else JSON; 400 in the API server's words when it cannot be decoded.
 */
export async function readObjectBody(req: IncomingMessage, opts: { yaml?: boolean } = {}): Promise<DecodedBody> {
  const raw = await readBody(req);
  const contentType = req.headers['content-type'];
  try {
    if (!opts.yaml && isProtobufMediaType(contentType)) return { value: raw.length === 0 ? undefined : decodeProtobuf(raw), duplicates: [] };
    const text = raw.toString('utf8');
    if (text.trim() === '') return { value: undefined, duplicates: [] };
    if (opts.yaml || isYAMLMediaType(contentType)) return { value: parseYAMLText(text), duplicates: [] };
    const value = parseJSONText(text);
    return { value, duplicates: duplicateJSONFields(text) };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof ProtobufDecodeError) throw new ApiError(400, 'BadRequest', `the body of the request was in an unknown format - ${err.message}`);
    throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${(err as Error).message}`);
  }
}
