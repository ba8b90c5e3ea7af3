// PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge patch with a
// kind's merge keys (a Pod's containers, env, volumes… merged by name, ports by containerPort; each
// kind's keys come from its entry in the resource table) and its directives ($patch,
// $setElementOrder, $retainKeys, $deleteFromPrimitiveList). apimachinery's strategicpatch and
// apiserver's endpoints/handlers/patch.go.

import { ApiError } from '../http/status.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

/** RFC 7386: objects merge recursively, null removes, anything else replaces. */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Obj = isObj(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v) as Json;
  }
  return out;
}

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/'))
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function bad(msg: string): ApiError {
  return new ApiError(422, 'Invalid', msg);
}

function parentOf(doc: Json, segs: string[], path: string): { parent: Obj | Json[]; key: string } {
  let cur: Json = doc;
  for (const s of segs.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(s)] as Json;
    else if (isObj(cur)) cur = cur[s] as Json;
    else cur = undefined as unknown as Json;
    if (cur === undefined) throw bad(`doc is missing path: "${path}": missing value`);
  }
  if (!Array.isArray(cur) && !isObj(cur)) throw bad(`doc is missing path: "${path}": missing value`);
  return { parent: cur, key: segs[segs.length - 1]! };
}

function getAt(doc: Json, path: string): Json {
  let cur: Json | undefined = doc;
  for (const s of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (isObj(cur)) cur = cur[s];
    else cur = undefined;
    if (cur === undefined) throw bad(`doc is missing path: "${path}": missing value`);
  }
  return cur;
}

function index(arr: Json[], key: string, path: string, forAdd: boolean): number {
  if (forAdd && key === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw bad(`invalid index "${key}" in "${path}"`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i === arr.length)) throw bad(`unable to access invalid index: ${i}: "${path}"`);
  return i;
}

function addAt(doc: Json, path: string, value: Json): Json {
  const segs = pointer(path);
  if (segs.length === 0) return value;
  const { parent, key } = parentOf(doc, segs, path);
  if (Array.isArray(parent)) parent.splice(index(parent, key, path, true), 0, value);
  else parent[key] = value;
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  const segs = pointer(path);
  const { parent, key } = parentOf(doc, segs, path);
  if (Array.isArray(parent)) parent.splice(index(parent, key, path, false), 1);
  else {
    if (!(key in parent)) throw bad(`unable to remove nonexistent key: ${key}: missing value`);
    delete parent[key];
  }
  return doc;
}

/** RFC 6902 operations applied in order; any failure rejects the whole patch. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError(400, 'BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(target) as Json;
  for (const raw of ops as Op[]) {
    if (!isObj(raw as unknown)) throw bad('invalid JSON patch operation');
    const { op, path } = raw;
    if (typeof path !== 'string') throw bad(`missing "path" in operation ${op}`);
    switch (op) {
      case 'add':
        doc = addAt(doc, path, clone(raw.value as Json));
        break;
      case 'remove':
        doc = removeAt(doc, path);
        break;
      case 'replace':
        getAt(doc, path);
        doc = pointer(path).length === 0 ? clone(raw.value as Json) : addAt(removeAt(doc, path), path, clone(raw.value as Json));
        break;
      case 'move': {
        const v = clone(getAt(doc, raw.from ?? ''));
        doc = addAt(removeAt(doc, raw.from ?? ''), path, v);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, clone(getAt(doc, raw.from ?? '')));
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, path)) !== JSON.stringify(raw.value)) throw bad(`testing value ${path} failed: test failed`);
        break;
      default:
        throw bad(`Unexpected kind: ${String(op)}`);
    }
  }
  return doc;
}

// ---- strategic merge patch ----

/**
 * Where a kind's lists merge element-wise: list path (dot-joined field names, `[]` for list elements)
 * to the field its patchMergeKey names; primitive lists merged as sets. Lists named in neither are replaced.
 */
export interface MergeSchema {
  mergeKeys: Readonly<Record<string, string>>;
  primitiveLists?: ReadonlySet<string>;
}

/** What every kind's ObjectMeta merges: ownerReferences by uid, finalizers as a set. */
export const objectMetaMergeSchema: MergeSchema = {
  mergeKeys: { 'metadata.ownerReferences': 'uid' },
  primitiveLists: new Set(['metadata.finalizers']),
};

/** An object's merge schema: ObjectMeta's keys plus the kind's own. */
export function mergeSchema(mergeKeys: Readonly<Record<string, string>>): MergeSchema {
  return { mergeKeys: { ...objectMetaMergeSchema.mergeKeys, ...mergeKeys }, primitiveLists: objectMetaMergeSchema.primitiveLists! };
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function mergeList(orig: Json[] | undefined, patch: Json[], path: string, order: Json[] | undefined, schema: MergeSchema): Json[] {
  const key = schema.mergeKeys[path];
  if (!key) {
    if (schema.primitiveLists?.has(path)) {
      const out = [...(orig ?? [])];
      for (const v of patch) if (!out.includes(v)) out.push(v);
      return out;
    }
    return clone(patch);
  }
  // `$patch: replace` anywhere in the list replaces the list with the rest of it.
  if (patch.some((e) => isObj(e) && e.$patch === 'replace')) {
    return patch.filter((e) => !(isObj(e) && e.$patch === 'replace')).map((e) => strip(e));
  }
  const out: Json[] = clone(orig ?? []);
  for (const el of patch) {
    if (!isObj(el)) throw new ApiError(422, 'Invalid', `unable to merge list ${path}: element is not an object`);
    const id = el[key];
    const at = out.findIndex((o) => isObj(o) && o[key] === id);
    if (el.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = strategicMerge(out[at], el, schema, `${path}[]`) as Json;
    else out.push(strip(el));
  }
  if (order) {
    const rank = new Map(order.map((o, i) => [isObj(o) ? o[key] : o, i]));
    const indexed = out.map((o, i) => ({ o, i, r: rank.get(isObj(o) ? o[key] : o) }));
    indexed.sort((a, b) => (a.r ?? Number.MAX_SAFE_INTEGER) - (b.r ?? Number.MAX_SAFE_INTEGER) || a.i - b.i);
    return indexed.map((x) => x.o);
  }
  return out;
}

/** A patch fragment as plain data: directives removed. */
function strip(v: Json): Json {
  if (Array.isArray(v)) return v.map(strip);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (x === null) continue;
    out[k] = strip(x);
  }
  return out;
}

/** Strategic merge of patch into original at path (dot-joined field names, `[]` for list elements), by the kind's merge schema. */
export function strategicMerge(original: unknown, patch: unknown, schema: MergeSchema = objectMetaMergeSchema, path = ''): unknown {
  if (!isObj(patch)) return clone(patch);
  if (patch.$patch === 'replace') return strip(patch);
  if (patch.$patch === 'delete') return undefined;
  const out: Obj = isObj(original) ? clone(original) : {};
  const retain = patch.$retainKeys;
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.includes(x));
      continue;
    }
    const p = join(path, k);
    if (v === null) delete out[k];
    else if (Array.isArray(v)) {
      const order = patch[`$setElementOrder/${k}`];
      out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as Json[]) : undefined, v, p, Array.isArray(order) ? order : undefined, schema);
    } else if (isObj(v)) {
      const merged = strategicMerge(out[k], v, schema, p);
      if (merged === undefined) delete out[k];
      else out[k] = merged as Json;
    } else out[k] = v;
  }
  // $setElementOrder for a list the patch leaves alone still reorders it.
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith('$setElementOrder/') || !Array.isArray(order)) continue;
    const field = k.slice('$setElementOrder/'.length);
    if (field in patch || !Array.isArray(out[field])) continue;
    out[field] = mergeList(out[field] as Json[], [], join(path, field), order, schema);
  }
  if (Array.isArray(retain)) {
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** The patch type a Content-Type names, undefined for anything else. */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (t) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      return undefined;
  }
}

/** The patched object; strategic merge and apply by the kind's merge schema. */
export function applyPatch(type: PatchType, original: unknown, patch: unknown, schema: MergeSchema = objectMetaMergeSchema): unknown {
  switch (type) {
    case 'json':
      return jsonPatch(original, patch);
    case 'merge':
      return jsonMergePatch(original, patch);
    case 'strategic':
    case 'apply':
      return strategicMerge(original, patch, schema);
  }
}
