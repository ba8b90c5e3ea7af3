// Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), the wire format client-go's typed
// clients send built-in objects in: the 4-byte magic `k8s\0`, then a runtime.Unknown whose typeMeta
// names the apiVersion and kind and whose raw bytes are the object's message (k8s.io/api's
// generated.proto). Decoded into the object's JSON form, as the API server's JSON would show it, and
// encoded back from it for clients that ask for protobuf first.
// Upstream: apimachinery's runtime/serializer/protobuf (protobuf.go) and the Go types' JSON tags.
//
// The messages are read from the vendored generated.proto files (proto/, Kubernetes 1.30); which
// fields are Go pointers and which are inlined in their parent's JSON comes from proto/go-fields.json
// (scripts/vendor-k8s-proto.mjs). A non-pointer field is always on the wire, so its zero value there
// means unset and is left out, as `omitempty` leaves it out of JSON; a pointer's zero is a value.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type * as Protobuf from 'protobufjs';
import type goFieldsJson from './proto/go-fields.json';
import { parseGoDuration } from '../util/go-duration.js';
import { formatGoDuration } from '../util/go-format.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

/** The prefix of every Kubernetes protobuf body. */
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Json = unknown;
type JsonObject = Record<string, Json>;

interface GoFields {
  pointers?: string[];
  inline?: string[];
}

const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const timeType = `${meta}.Time`;
const microTimeType = `${meta}.MicroTime`;
const durationType = `${meta}.Duration`;
const fieldsV1Type = `${meta}.FieldsV1`;
const intOrStringType = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const quantityType = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const rawExtensionType = 'k8s.io.apimachinery.pkg.runtime.RawExtension';
const unknownType = 'k8s.io.apimachinery.pkg.runtime.Unknown';

/** The proto directory beside this module (a copied build) or in the source tree (dist/src/… → src/…). */
function protoDir(): string {
  const candidates = [new URL('./proto/', import.meta.url), new URL('../../../src/http/proto/', import.meta.url)];
  for (const c of candidates) if (existsSync(new URL('k8s.io/api/core/v1/generated.proto', c))) return fileURLToPath(c);
  throw new Error('the Kubernetes protobuf schemas (src/http/proto) are not found');
}

interface Schemas {
  root: Protobuf.Root;
  fields: Record<string, GoFields>;
}

let loaded: Schemas | undefined;
let library: typeof Protobuf | undefined;

/** protobufjs, loaded with the schemas on the first protobuf request (not when the API loads). */
function protobufjs(): typeof Protobuf {
  library ??= createRequire(import.meta.url)('protobufjs') as typeof Protobuf;
  return library;
}

/** The vendored schemas, parsed on the first protobuf request. */
function schemas(): Schemas {
  if (loaded) return loaded;
  const dir = protoDir();
  const root = new (protobufjs().Root)();
  root.resolvePath = (_origin, target) => (target.startsWith(dir) ? target : `${dir}${target}`);
  const files = (goFields().packages ?? []).map((p) => `${p}/generated.proto`);
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  loaded = { root, fields: goFields().messages };
  return loaded;
}

function goFields(): { messages: Record<string, GoFields>; packages?: string[] } {
  const json = createRequire(import.meta.url)(`${protoDir()}go-fields.json`) as typeof goFieldsJson;
  return json as unknown as { messages: Record<string, GoFields>; packages?: string[] };
}

/** The proto package of an apiVersion's group (`apps/v1` → k8s.io.api.apps.v1; `rbac.authorization.k8s.io/v1` → …rbac.v1). */
function packageOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? 'core' : apiVersion.slice(0, slash).split('.')[0]!;
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group === 'meta') return `${meta.slice(0, -3)}.${version}`;
  return `k8s.io.api.${group}.${version}`;
}

/** The message of a kind in an apiVersion; the options kinds (DeleteOptions…) of any group are meta/v1's. */
function messageOf(apiVersion: string, kind: string): Protobuf.Type | undefined {
  const { root } = schemas();
  for (const name of [`${packageOf(apiVersion)}.${kind}`, `${meta}.${kind}`]) {
    const t = root.lookup(name);
    if (t instanceof protobufjs().Type) return t;
  }
  return undefined;
}

/** Whether a message type of this name is known for the apiVersion and kind (so it can be encoded). */
export function hasProtobufMessage(apiVersion: string, kind: string): boolean {
  return messageOf(apiVersion, kind) !== undefined;
}

export class ProtobufDecodeError extends Error {}

function fullName(t: Protobuf.Type): string {
  return t.fullName.replace(/^\./, '');
}

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'toNumber' in v) return (v as { toNumber(): number }).toNumber();
  return Number(v);
}

function isZero(v: unknown): boolean {
  if (v === '' || v === false || v === 0) return true;
  if (v && typeof v === 'object' && 'isZero' in v) return (v as { isZero(): boolean }).isZero();
  return false;
}

/** RFC 3339 as metav1.Time marshals it (seconds) or MicroTime (microseconds). */
function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

function parseTime(s: string): { seconds: number; nanos: number } {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return { seconds: 0, nanos: 0 };
  const frac = /\.(\d+)/.exec(s)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: Number((frac + '000000000').slice(0, 9)) };
}

/** A message's JSON form (fields absent on the wire stay absent), with the parent's inlined fields merged in. */
function messageToJson(type: Protobuf.Type, msg: Protobuf.Message): Json {
  const name = fullName(type);
  const m = msg as unknown as Record<string, unknown>;
  switch (name) {
    case timeType:
    case microTimeType:
      return formatTime(toNumber(m.seconds ?? 0), toNumber(m.nanos ?? 0), name === microTimeType);
    case durationType:
      return formatGoDuration(toNumber(m.duration ?? 0) / 1e6);
    case intOrStringType:
      return toNumber(m.type ?? 0) === 1 ? (m.strVal ?? '') : toNumber(m.intVal ?? 0);
    case quantityType:
      return m.string ?? '';
    case rawExtensionType:
    case fieldsV1Type: {
      const raw = (name === rawExtensionType ? m.raw : m.Raw) as Uint8Array | undefined;
      if (!raw || raw.length === 0) return null;
      try {
        return JSON.parse(Buffer.from(raw).toString('utf8'));
      } catch {
        throw new ProtobufDecodeError(`${name === rawExtensionType ? 'a RawExtension' : 'FieldsV1'} holds bytes that are not JSON`);
      }
    }
  }
  // A Go slice type given a message to be a map value (authentication's and authorization's ExtraValue): a JSON list.
  if (isListWrapper(name)) return ((m.items as Json[] | undefined) ?? []).map((x) => x);
  const go = schemas().fields[name] ?? {};
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(m, field.name) || m[field.name] === null || m[field.name] === undefined) continue;
    const v = m[field.name];
    // An empty list or map is not on the wire (Go decodes it as nil, which omitempty leaves out).
    if (field.map) {
      if (Object.keys(v as object).length === 0) continue;
      const obj: JsonObject = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) obj[k] = valueToJson(field, x);
      out[field.name] = obj;
      continue;
    }
    if (field.repeated) {
      if ((v as unknown[]).length === 0) continue;
      out[field.name] = (v as unknown[]).map((x) => valueToJson(field, x));
      continue;
    }
    if (!field.resolvedType && !go.pointers?.includes(field.name) && isZero(v)) continue;
    const value = valueToJson(field, v);
    if (field.resolvedType && (fullName(field.resolvedType as Protobuf.Type) === timeType || fullName(field.resolvedType as Protobuf.Type) === microTimeType)) {
      // A non-pointer Time at zero is unset (JSON null).
      const t = v as { seconds?: unknown; nanos?: unknown };
      if (!go.pointers?.includes(field.name) && toNumber(t.seconds ?? 0) === 0 && toNumber(t.nanos ?? 0) === 0) continue;
    }
    if (go.inline?.includes(field.name) && value && typeof value === 'object' && !Array.isArray(value)) Object.assign(out, value);
    else out[field.name] = value;
  }
  return out;
}

/** ExtraValue ([]string in Go, `{items}` on the wire). */
function isListWrapper(name: string): boolean {
  return name.endsWith('.ExtraValue');
}

function valueToJson(field: Protobuf.Field, v: unknown): Json {
  if (field.resolvedType instanceof protobufjs().Type) return messageToJson(field.resolvedType, v as Protobuf.Message);
  if (field.type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if (field.type === 'int64' || field.type === 'uint64' || field.type === 'sint64' || field.type === 'fixed64') return toNumber(v);
  return v as Json;
}

/** A message's plain object for protobufjs (fromObject) from its JSON form. */
function jsonToMessage(type: Protobuf.Type, json: Json): unknown {
  const name = fullName(type);
  switch (name) {
    case timeType:
    case microTimeType:
      return typeof json === 'string' ? parseTime(json) : {};
    case durationType:
      return { duration: typeof json === 'string' ? Math.round(parseGoDuration(json) * 1e6) : 0 };
    case intOrStringType:
      return typeof json === 'string' ? { type: 1, strVal: json } : { type: 0, intVal: typeof json === 'number' ? json : 0 };
    case quantityType:
      return { string: typeof json === 'string' ? json : String(json ?? '') };
    case rawExtensionType:
      return json === null || json === undefined ? {} : { raw: Buffer.from(JSON.stringify(json)) };
    case fieldsV1Type:
      return json === null || json === undefined ? {} : { Raw: Buffer.from(JSON.stringify(json)) };
  }
  if (isListWrapper(name)) return { items: Array.isArray(json) ? json : [] };
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return {};
  const obj = json as JsonObject;
  const go = schemas().fields[name] ?? {};
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    if (go.inline?.includes(field.name) && field.resolvedType instanceof protobufjs().Type) {
      out[field.name] = jsonToMessage(field.resolvedType, obj);
      continue;
    }
    const v = obj[field.name];
    if (v === undefined || v === null) continue;
    if (field.map && typeof v === 'object') {
      out[field.name] = Object.fromEntries(Object.entries(v as JsonObject).map(([k, x]) => [k, valueToMessage(field, x)]));
    } else if (field.repeated && Array.isArray(v)) {
      out[field.name] = v.map((x) => valueToMessage(field, x));
    } else if (!field.repeated && !field.map) {
      out[field.name] = valueToMessage(field, v);
    }
  }
  return out;
}

function valueToMessage(field: Protobuf.Field, v: Json): unknown {
  if (field.resolvedType instanceof protobufjs().Type) return jsonToMessage(field.resolvedType, v);
  if (field.type === 'bytes') return typeof v === 'string' ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  return v;
}

/** Whether a body is a Kubernetes protobuf message (by its magic). */
export function isProtobufBody(body: Buffer): boolean {
  return body.length >= magic.length && body.subarray(0, magic.length).equals(magic);
}

/**
 * A Kubernetes protobuf body as the object's JSON form, with the apiVersion and kind of its envelope;
 * throws ProtobufDecodeError for a body that is not one, or names a kind without a known message.
 */
export function decodeProtobuf(body: Buffer): JsonObject {
  if (!isProtobufBody(body)) throw new ProtobufDecodeError('the body does not start with the Kubernetes protobuf prefix');
  const unknown = schemas().root.lookupType(unknownType);
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string };
  try {
    envelope = unknown.decode(body.subarray(magic.length)) as unknown as typeof envelope;
  } catch (err) {
    throw new ProtobufDecodeError(`the envelope is not a runtime.Unknown: ${(err as Error).message}`);
  }
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const kind = envelope.typeMeta?.kind ?? '';
  if (envelope.contentEncoding) throw new ProtobufDecodeError(`content encoding ${JSON.stringify(envelope.contentEncoding)} is not supported`);
  const type = messageOf(apiVersion, kind);
  if (!type) throw new ProtobufDecodeError(`no kind "${kind}" is registered for version "${apiVersion}"`);
  let msg: Protobuf.Message;
  try {
    msg = type.decode(envelope.raw ?? new Uint8Array());
  } catch (err) {
    throw new ProtobufDecodeError(`${kind}: ${(err as Error).message}`);
  }
  const obj = messageToJson(type, msg) as JsonObject;
  return { apiVersion, kind, ...obj };
}

/** An object in its JSON form as a Kubernetes protobuf body; undefined when its kind has no known message. */
export function encodeProtobuf(obj: { apiVersion?: string; kind?: string }): Buffer | undefined {
  const apiVersion = obj.apiVersion ?? '';
  const kind = obj.kind ?? '';
  const type = messageOf(apiVersion, kind);
  if (!type) return undefined;
  const raw = type.encode(type.fromObject(jsonToMessage(type, obj) as Record<string, unknown>)).finish();
  const unknown = schemas().root.lookupType(unknownType);
  const envelope = unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })).finish();
  return Buffer.concat([magic, envelope]);
}
