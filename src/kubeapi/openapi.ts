// The API's OpenAPI documents, cut from upstream's (the vendored api/openapi-spec/swagger.json of the
// release this server reports, openapi-spec/README.md) to what the resource table serves: the paths
// of each served resource and subresource (collection, item, watch, namespaced and across
// namespaces), the discovery paths of the served groups, and the definitions those paths reach.
// A kind added to the table appears here once its group/version/kind is in the vendored document.
// The v3 documents are one per group/version (`api/v1`, `apis/apps/v1`; `api`, `apis`, `apis/<group>`
// and `version` for the discovery paths), laid out as kube-openapi's builder3 lays out the same
// routes: parameters inline, bodies as requestBody, responses by media type, `$ref`s with siblings
// wrapped in `allOf`, schemas under components.
// Upstream: kube-openapi's builder (v2) and builder3 (v3) over the apiserver's routes; the
// apiserver's openapi/v3 handler splits them per group/version.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { ResourceDef } from './resource-def.js';
import type { ResourceIndex } from './resource-table.js';

type Json = unknown;
type JsonObject = Record<string, Json>;

export interface SwaggerDocument {
  swagger: string;
  info: JsonObject;
  paths: Record<string, JsonObject>;
  definitions: Record<string, JsonObject>;
  parameters?: Record<string, JsonObject>;
  security?: Json[];
  securityDefinitions?: JsonObject;
}

/** The vendored document's file beside this module (a bundle) or in the source tree (dist/src/… → src/…). */
function specFile(): string {
  const candidates = [
    new URL('./openapi-spec/swagger.json.gz', import.meta.url),
    new URL('../../../src/kubeapi/openapi-spec/swagger.json.gz', import.meta.url),
  ];
  for (const c of candidates) if (existsSync(c)) return fileURLToPath(c);
  throw new Error('the vendored OpenAPI document (src/kubeapi/openapi-spec/swagger.json.gz) is not found');
}

let vendored: SwaggerDocument | undefined;

/** Upstream's whole document, read on the first request for one. */
export function vendoredSwagger(): SwaggerDocument {
  vendored ??= JSON.parse(gunzipSync(readFileSync(specFile())).toString('utf8')) as SwaggerDocument;
  return vendored;
}

const isObject = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The subresource names a row serves (status, scale, its connect-style ones). */
function servedSubresources(def: ResourceDef): Set<string> {
  const subs = new Set(Object.keys(def.connect ?? {}));
  if (def.status) subs.add('status');
  if (def.scale) subs.add('scale');
  return subs;
}

/** The group/version prefix of a path (`/api/v1`, `/apis/apps/v1`) and the rest, or undefined. */
function splitPrefix(path: string): { group: string; version: string; rest: string[] } | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts[0] === 'api' && parts.length >= 2) return { group: '', version: parts[1]!, rest: parts.slice(2) };
  if (parts[0] === 'apis' && parts.length >= 3) return { group: parts[1]!, version: parts[2]!, rest: parts.slice(3) };
  return undefined;
}

/** Whether a resource path of upstream's document addresses something the index serves. */
function servesPath(index: ResourceIndex, path: string): boolean {
  const split = splitPrefix(path);
  if (!split) return false;
  let rest = split.rest;
  if (rest.length === 0) return index.servesGroupVersion(split.group, split.version);
  if (rest[0] === 'watch') rest = rest.slice(1);
  if (rest[0] === 'namespaces' && rest[1] === '{namespace}' && rest.length >= 3) rest = rest.slice(2);
  const def = index.lookup(split.group, split.version, rest[0]!);
  if (!def) return false;
  if (rest.length <= 2) return true;
  return rest.length === 3 && servedSubresources(def).has(rest[2]!);
}

/** Whether a discovery path (`/api/`, `/apis/`, `/apis/<group>/`, `/version/`) belongs in the document. */
function servesDiscoveryPath(index: ResourceIndex, path: string): boolean {
  if (path === '/api/' || path === '/apis/' || path === '/version/') return true;
  const m = /^\/apis\/([^/]+)\/$/.exec(path);
  return m !== null && index.groups.some((g) => g.group === m[1]);
}

/** Every `$ref` under a value, as the names it points at (`#/definitions/X` → X, `#/parameters/Y` → Y). */
function collectRefs(value: Json, prefix: string, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, prefix, into);
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) into.add(v.slice(prefix.length));
      else collectRefs(v, prefix, into);
    }
  }
}

/** The definitions reached from `roots`, transitively (in the vendored document's order). */
function reachableDefinitions(all: Record<string, JsonObject>, roots: Json): Record<string, JsonObject> {
  const seen = new Set<string>();
  const queue: string[] = [];
  const start = new Set<string>();
  collectRefs(roots, '#/definitions/', start);
  queue.push(...start);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name) || !all[name]) continue;
    seen.add(name);
    const next = new Set<string>();
    collectRefs(all[name], '#/definitions/', next);
    for (const n of next) if (!seen.has(n)) queue.push(n);
  }
  return Object.fromEntries(Object.entries(all).filter(([name]) => seen.has(name)));
}

/** Whether a definition is the schema of a served kind or its List (by x-kubernetes-group-version-kind). */
function isServedKind(index: ResourceIndex, schema: JsonObject): boolean {
  const gvks = schema['x-kubernetes-group-version-kind'];
  if (!Array.isArray(gvks) || gvks.length !== 1) return false;
  const g = gvks[0] as { group: string; version: string; kind: string };
  return index.inGroupVersion(g.group, g.version).some((d) => g.kind === d.kind || g.kind === `${d.kind}List`);
}

/** The OpenAPI v2 document of what the index serves, cut from upstream's. */
export function servedSwagger(index: ResourceIndex, source: SwaggerDocument = vendoredSwagger()): SwaggerDocument {
  const paths = Object.fromEntries(Object.entries(source.paths).filter(([p]) => servesPath(index, p) || servesDiscoveryPath(index, p)));
  const usedParams = new Set<string>();
  collectRefs(paths, '#/parameters/', usedParams);
  const parameters = Object.fromEntries(Object.entries(source.parameters ?? {}).filter(([name]) => usedParams.has(name)));
  const kinds = Object.fromEntries(Object.entries(source.definitions).filter(([, s]) => isServedKind(index, s)));
  const definitions = reachableDefinitions(source.definitions, [paths, parameters, kinds]);
  return { ...source, paths, definitions, parameters };
}

// ---- v3 ----

export interface OpenAPIV3Document {
  openapi: string;
  info: JsonObject;
  paths: Record<string, JsonObject>;
  components: { schemas: Record<string, JsonObject>; securitySchemes?: JsonObject };
  security?: Json[];
}

const v2DefinitionRef = '#/definitions/';
const v3SchemaRef = '#/components/schemas/';

/** A v2 schema as v3 has it: refs under components, and a `$ref` with siblings wrapped in allOf (builder3). */
export function schemaV3(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(schemaV3);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string') out[k] = v.startsWith(v2DefinitionRef) ? v3SchemaRef + v.slice(v2DefinitionRef.length) : v;
    else if (k.startsWith('x-') || k === 'enum' || k === 'default' || k === 'example' || k === 'required') out[k] = v;
    else if (k === 'properties' && isObject(v)) out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, schemaV3(s)]));
    else out[k] = schemaV3(v);
  }
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    return sortKeys({ allOf: [{ $ref }], ...rest });
  }
  return out;
}

/**
 * The definitions whose Go types give v3 a oneOf of types where v2 has one `type` (their
 * OpenAPIV3OneOfTypes, in apimachinery 1.30): IntOrString and Quantity.
 */
const v3OneOfTypes: Record<string, string[]> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': ['integer', 'string'],
  'io.k8s.apimachinery.pkg.api.resource.Quantity': ['string', 'number'],
};

/** A definition as the v3 documents carry it. */
function definitionV3(name: string, schema: JsonObject): JsonObject {
  const oneOf = v3OneOfTypes[name];
  if (!oneOf) return schemaV3(schema) as JsonObject;
  const { type: _type, ...rest } = schema;
  return sortKeys({ ...rest, oneOf: oneOf.map((type) => ({ type })) });
}

const sortKeys = (o: JsonObject): JsonObject => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** A non-body v2 parameter as a v3 one: its type and constraints move into `schema`. */
function parameterV3(p: JsonObject): JsonObject {
  const { description, in: where, name, required, type, uniqueItems, items, format, ...rest } = p;
  const schema: JsonObject = { type, ...(uniqueItems !== undefined ? { uniqueItems } : {}), ...(format ? { format } : {}), ...(items ? { items } : {}) };
  const extensions = Object.fromEntries(Object.entries(rest).filter(([k]) => k.startsWith('x-')));
  return sortKeys({ ...(description !== undefined ? { description } : {}), in: where, name, ...(required ? { required } : {}), schema, ...extensions });
}

function operationV3(op: JsonObject, params: Record<string, JsonObject>): JsonObject {
  const out: JsonObject = {};
  const resolve = (p: JsonObject): JsonObject => (typeof p.$ref === 'string' ? (params[p.$ref.slice('#/parameters/'.length)] ?? p) : p);
  const parameters: JsonObject[] = [];
  for (const raw of (op.parameters as JsonObject[] | undefined) ?? []) {
    const p = resolve(raw);
    if (p.in === 'body') {
      const consumes = (op.consumes as string[] | undefined) ?? ['*/*'];
      out.requestBody = {
        content: Object.fromEntries(consumes.map((mt) => [mt, { schema: schemaV3(p.schema) }])),
        ...(p.required ? { required: true } : {}),
      };
    } else {
      parameters.push(parameterV3(p));
    }
  }
  if (parameters.length > 0) out.parameters = parameters;
  const produces = (op.produces as string[] | undefined) ?? [];
  const responses: JsonObject = {};
  for (const [code, r] of Object.entries((op.responses as Record<string, JsonObject> | undefined) ?? {})) {
    responses[code] = {
      description: r.description,
      ...(r.schema ? { content: Object.fromEntries(produces.map((mt) => [mt, { schema: schemaV3(r.schema) }])) } : {}),
    };
  }
  out.responses = responses;
  for (const [k, v] of Object.entries(op)) {
    if (k === 'description' || k === 'operationId' || k === 'tags' || k.startsWith('x-')) out[k] = v;
  }
  return sortKeys(out);
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function pathItemV3(item: JsonObject, params: Record<string, JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(item)) {
    if (methods.includes(k) && isObject(v)) out[k] = operationV3(v, params);
    else if (k === 'parameters' && Array.isArray(v)) {
      out[k] = (v as JsonObject[]).map((p) => parameterV3(typeof p.$ref === 'string' ? (params[p.$ref.slice('#/parameters/'.length)] ?? p) : p));
    }
  }
  return out;
}

/** The v3 discovery key of a path (`api/v1`, `apis/apps/v1`, `apis/apps`, `api`, `apis`, `version`). */
export function v3GroupOf(path: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts[0] === 'api') return parts.length >= 2 ? `api/${parts[1]}` : 'api';
  if (parts[0] === 'apis') return parts.length >= 3 ? `apis/${parts[1]}/${parts[2]}` : parts.length === 2 ? `apis/${parts[1]}` : 'apis';
  return parts[0] ?? '';
}

/** The v3 documents of a v2 document, one per group/version (and per discovery path), by their discovery key. */
export function openapiV3Documents(doc: SwaggerDocument): Map<string, OpenAPIV3Document> {
  const byGroup = new Map<string, Record<string, JsonObject>>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const key = v3GroupOf(path);
    if (!byGroup.has(key)) byGroup.set(key, {});
    byGroup.get(key)![path] = pathItemV3(item, doc.parameters ?? {});
  }
  const out = new Map<string, OpenAPIV3Document>();
  for (const key of [...byGroup.keys()].sort()) {
    const paths = byGroup.get(key)!;
    const schemas = Object.fromEntries(
      Object.entries(reachableDefinitions(doc.definitions, doc.paths && pathsOf(doc, key))).map(([n, s]) => [n, definitionV3(n, s)]),
    );
    out.set(key, {
      openapi: '3.0.0',
      info: doc.info,
      paths,
      components: {
        schemas,
        ...(doc.securityDefinitions ? { securitySchemes: Object.fromEntries(Object.entries(doc.securityDefinitions).map(([n, s]) => [n, s])) } : {}),
      },
      ...(doc.security ? { security: doc.security } : {}),
    });
  }
  return out;
}

/** The v2 paths (and the global parameters they use) of one v3 group key, for the definitions they reach. */
function pathsOf(doc: SwaggerDocument, key: string): Json {
  const paths = Object.entries(doc.paths).filter(([p]) => v3GroupOf(p) === key);
  const used = new Set<string>();
  collectRefs(paths, '#/parameters/', used);
  return [paths, [...used].map((u) => doc.parameters?.[u])];
}
