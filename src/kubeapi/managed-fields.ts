// Server-side apply's field ownership: metadata.managedFields kept per field manager and operation
// (Apply, Update), field sets in the FieldsV1 format (`f:` fields, `k:` list-map keys from the kind's
// merge keys, `v:` set members; atomic lists owned whole), conflicts between managers, `force`, and
// fields an applier stops applying removed when no one else owns them.
// Upstream: sigs.k8s.io/structured-merge-diff (fieldpath, typed, merge.Updater) and apiserver's
// endpoints/handlers/fieldmanager (managedfields encoding, conflict.go's messages).

import { ApiError } from '../http/status.js';
import { strategicMerge, type MergeSchema } from './patch.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export type Operation = 'Apply' | 'Update';

/** One manager's entry (meta/v1 ManagedFieldsEntry). */
export interface ManagedFieldsEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

/** A set of field paths; a path is its elements (`f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`) joined by newlines. */
export type FieldSet = Set<string>;

const sep = '\n';

/** Metadata the server owns: never in a manager's set (upstream's stripMetaManager). */
const serverOwned = new Set([
  'f:apiVersion',
  'f:kind',
  'f:status',
  ['f:metadata', 'f:name'].join(sep),
  ['f:metadata', 'f:namespace'].join(sep),
  ['f:metadata', 'f:uid'].join(sep),
  ['f:metadata', 'f:resourceVersion'].join(sep),
  ['f:metadata', 'f:generation'].join(sep),
  ['f:metadata', 'f:creationTimestamp'].join(sep),
  ['f:metadata', 'f:deletionTimestamp'].join(sep),
  ['f:metadata', 'f:deletionGracePeriodSeconds'].join(sep),
  ['f:metadata', 'f:selfLink'].join(sep),
  ['f:metadata', 'f:managedFields'].join(sep),
]);

/**
 * A node of an object: leaves carry their value (compared for changes); list items are members of
 * an applier's set; maps are members only of an updater's set, when the update adds them.
 */
interface Member {
  type: 'leaf' | 'item' | 'map';
  value: string;
}

/** A value's selector fields (meta/v1 LabelSelector) are atomic: owned whole. */
function isLabelSelector(v: Obj): boolean {
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k === 'matchLabels' || k === 'matchExpressions');
}

/**
 * Fields that are struct values rather than pointers or maps: an object decoded from nothing has
 * them already, so an update that fills them does not add them (upstream compares typed objects).
 */
const valueStructs = new Set(['f:metadata', 'f:spec', 'f:template', 'f:strategy', 'f:updateStrategy', 'f:jobTemplate']);

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** The key element of a list-map item: its merge key as JSON. */
function keyElement(key: string, item: Obj): string {
  return `k:${JSON.stringify({ [key]: item[key] ?? null })}`;
}

function walk(v: Json, path: string[], at: string, schema: MergeSchema, out: Map<string, Member>): void {
  const p = path.join(sep);
  if (path.length > 0 && serverOwned.has(p)) return;
  if (isObj(v) && !isLabelSelector(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0 && path.length > 0) out.set(p, { type: 'leaf', value: '{}' });
    else if (path.length > 0 && !valueStructs.has(path[path.length - 1]!)) out.set(p, { type: 'map', value: '' });
    for (const k of keys) walk(v[k]!, [...path, `f:${k}`], join(at, k), schema, out);
    return;
  }
  if (Array.isArray(v)) {
    const key = schema.mergeKeys[at];
    if (key) {
      for (const item of v) {
        if (!isObj(item)) continue;
        const ip = [...path, keyElement(key, item)];
        out.set(ip.join(sep), { type: 'item', value: '' });
        for (const k of Object.keys(item)) walk(item[k]!, [...ip, `f:${k}`], join(`${at}[]`, k), schema, out);
      }
      return;
    }
    if (schema.primitiveLists?.has(at)) {
      for (const x of v) out.set([...path, `v:${JSON.stringify(x)}`].join(sep), { type: 'leaf', value: JSON.stringify(x) });
      return;
    }
  }
  // Scalars, nulls and atomic lists: the field is owned whole.
  out.set(p, { type: 'leaf', value: JSON.stringify(v) });
}

/** The members of an object's field set with their values. */
export function members(obj: unknown, schema: MergeSchema): Map<string, Member> {
  const out = new Map<string, Member>();
  if (isObj(obj)) walk(obj, [], '', schema, out);
  return out;
}

/** The field set of an object (what an applier of it owns). */
export function fieldSetOf(obj: unknown, schema: MergeSchema): FieldSet {
  return new Set([...members(obj, schema)].filter(([, m]) => m.type !== 'map').map(([p]) => p));
}

/** What a write changes: members added or with a new value (`changed`), and members gone (`removed`). */
export function compare(before: unknown, after: unknown, schema: MergeSchema): { changed: FieldSet; removed: FieldSet } {
  const a = members(before, schema);
  const b = members(after, schema);
  const changed: FieldSet = new Set();
  for (const [p, m] of b) {
    const old = a.get(p);
    if (!old || (m.type === 'leaf' && old.value !== m.value)) changed.add(p);
  }
  const removed: FieldSet = new Set([...a.keys()].filter((p) => !b.has(p)));
  return { changed, removed };
}

// ---- FieldsV1 ----

function order(k: string): string {
  return `${k === '.' ? '0' : (({ f: '1', k: '2', v: '3', i: '4' } as Record<string, string>)[k[0]!] ?? '5')}${k}`;
}

/** A field set in the FieldsV1 format: a tree of path elements, `.` marking a member that has children. */
export function toFieldsV1(set: FieldSet): Obj {
  interface Node {
    member: boolean;
    children: Map<string, Node>;
  }
  const root: Node = { member: false, children: new Map() };
  for (const p of set) {
    let n = root;
    for (const e of p.split(sep)) {
      let c = n.children.get(e);
      if (!c) n.children.set(e, (c = { member: false, children: new Map() }));
      n = c;
    }
    n.member = true;
  }
  const render = (n: Node): Obj => {
    const out: Obj = {};
    if (n.member && n.children.size > 0) out['.'] = {};
    for (const k of [...n.children.keys()].sort((x, y) => (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0))) out[k] = render(n.children.get(k)!);
    return out;
  };
  return render(root);
}

/** The field set a FieldsV1 tree holds. */
export function fromFieldsV1(tree: unknown): FieldSet {
  const out: FieldSet = new Set();
  const visit = (n: unknown, path: string[]): void => {
    if (!isObj(n)) return;
    const keys = Object.keys(n);
    if (path.length > 0 && (keys.length === 0 || '.' in n)) out.add(path.join(sep));
    for (const k of keys) if (k !== '.') visit(n[k], [...path, k]);
  };
  visit(tree, []);
  return out;
}

/** A path as upstream prints it: `.spec.replicas`, `.spec.containers[name="c"].image`. */
export function pathString(path: string): string {
  return path
    .split(sep)
    .map((e) => {
      const body = e.slice(2);
      if (e.startsWith('f:')) return `.${body}`;
      if (e.startsWith('k:')) {
        const key = JSON.parse(body) as Record<string, Json>;
        return `[${Object.entries(key)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (e.startsWith('v:')) return `[=${body}]`;
      return `[${body}]`;
    })
    .join('');
}

// ---- removing fields ----

function itemMatches(item: Json, element: string): boolean {
  if (!isObj(item)) return false;
  const key = JSON.parse(element.slice(2)) as Obj;
  return Object.entries(key).every(([k, v]) => JSON.stringify(item[k] ?? null) === JSON.stringify(v));
}

/** The object with the field at path removed (a list item by its key, a set member by its value), and maps it leaves empty. */
function removePath(obj: Obj, path: string): void {
  const elems = path.split(sep);
  removeAt(obj, elems);
  for (let n = elems.length - 1; n > 0; n--) {
    const parent = elems.slice(0, n);
    if (!parent[parent.length - 1]!.startsWith('f:')) break;
    const v = valueAt(obj, parent);
    if (!isObj(v) || Object.keys(v).length > 0) break;
    removeAt(obj, parent);
  }
}

function valueAt(obj: Obj, elems: string[]): Json | undefined {
  let cur: Json | undefined = obj;
  for (const e of elems) {
    if (e.startsWith('f:') && isObj(cur)) cur = cur[e.slice(2)];
    else if (e.startsWith('k:') && Array.isArray(cur)) cur = cur.find((x) => itemMatches(x, e));
    else return undefined;
  }
  return cur;
}

function removeAt(obj: Obj, elems: string[]): void {
  let cur: Json = obj;
  for (let i = 0; i < elems.length; i++) {
    const e = elems[i]!;
    const last = i === elems.length - 1;
    if (e.startsWith('f:')) {
      if (!isObj(cur)) return;
      if (last) delete cur[e.slice(2)];
      else cur = cur[e.slice(2)] as Json;
    } else if (e.startsWith('k:') || e.startsWith('v:')) {
      if (!Array.isArray(cur)) return;
      const at: number = e.startsWith('k:') ? cur.findIndex((x) => itemMatches(x, e)) : cur.findIndex((x) => JSON.stringify(x) === e.slice(2));
      if (at < 0) return;
      if (last) cur.splice(at, 1);
      else cur = cur[at]!;
    } else return;
    if (cur === undefined) return;
  }
}

// ---- managers ----

interface Managed {
  entry: ManagedFieldsEntry;
  set: FieldSet;
}

function decode(entries: unknown): Managed[] {
  if (!Array.isArray(entries)) return [];
  return entries
    .filter((e): e is ManagedFieldsEntry => isObj(e) && typeof e.manager === 'string' && (e.operation === 'Apply' || e.operation === 'Update'))
    .map((entry) => ({ entry, set: fromFieldsV1(entry.fieldsV1) }));
}

function encode(managed: Managed[]): ManagedFieldsEntry[] {
  return managed.filter((m) => m.set.size > 0).map((m) => ({ ...m.entry, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(m.set) }));
}

function sameManager(e: ManagedFieldsEntry, manager: string, operation: Operation, subresource: string | undefined): boolean {
  return e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? '');
}

function sameSet(a: FieldSet, b: FieldSet): boolean {
  return a.size === b.size && [...a].every((p) => b.has(p));
}

/** Who writes and when: the manager's name, the object's apiVersion, the clock. */
export interface WriteContext {
  manager: string;
  apiVersion: string;
  schema: MergeSchema;
  now: () => number;
  subresource?: string;
}

function timestamp(now: () => number): string {
  return new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A manager's entry set to `set`, its time renewed when the set changes. */
function own(managed: Managed[], ctx: WriteContext, operation: Operation, set: FieldSet): Managed[] {
  const at = managed.findIndex((m) => sameManager(m.entry, ctx.manager, operation, ctx.subresource));
  const prev = at >= 0 ? managed[at]! : undefined;
  if (prev && sameSet(prev.set, set) && prev.entry.apiVersion === ctx.apiVersion) return managed;
  const entry: ManagedFieldsEntry = {
    manager: ctx.manager,
    operation,
    apiVersion: ctx.apiVersion,
    time: timestamp(ctx.now),
    fieldsType: 'FieldsV1',
    fieldsV1: {},
    ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
  };
  const next = { entry, set };
  return at >= 0 ? managed.map((m, i) => (i === at ? next : m)) : [...managed, next];
}

/**
 * managedFields after an Update (create, update, a non-apply patch): the manager takes the fields the
 * write changed, no one keeps the fields it removed. Entries the request sets itself (kubectl's
 * migration from client-side apply) replace the stored ones, as upstream takes them.
 */
export function updateManagedFields(live: unknown, next: unknown, sent: unknown, ctx: WriteContext): ManagedFieldsEntry[] {
  const liveEntries = isObj(live) && isObj(live.metadata) ? live.metadata.managedFields : undefined;
  const base = Array.isArray(sent) && sent.length > 0 ? sent : liveEntries;
  let managed = decode(base);
  const { changed, removed } = compare(live, next, ctx.schema);
  managed = managed.map((m) => {
    if (sameManager(m.entry, ctx.manager, 'Update', ctx.subresource)) return m;
    const set = new Set([...m.set].filter((p) => !changed.has(p) && !removed.has(p)));
    return set.size === m.set.size ? m : { entry: m.entry, set };
  });
  const mine = managed.find((m) => sameManager(m.entry, ctx.manager, 'Update', ctx.subresource))?.set ?? new Set<string>();
  const set = new Set([...mine, ...changed].filter((p) => !removed.has(p)));
  if (set.size > 0 || mine.size > 0) managed = own(managed, ctx, 'Update', set);
  return encode(managed);
}

/** One field two managers set to different values. */
export interface Conflict {
  manager: ManagedFieldsEntry;
  path: string;
}

/** How conflict.go names a manager: Update managers with their apiVersion and time. */
function printManager(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s = `${s} with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') return `${s} using ${e.apiVersion}`;
  return s;
}

/** The 409 an apply with conflicts gets: upstream's message, one FieldManagerConflict cause per field. */
export function conflictError(conflicts: Conflict[]): ApiError {
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const name = printManager(c.manager);
      byManager.set(name, [...(byManager.get(name) ?? []), pathString(c.path)]);
    }
    const lines: string[] = [];
    for (const name of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${name}:`);
      for (const p of byManager.get(name)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) })),
  });
}

/** What an apply does to an object: the object to store and its managedFields. */
export interface Applied {
  object: Obj;
  managedFields: ManagedFieldsEntry[];
}

/**
 * Server-side apply of `config` by ctx.manager to `live` (undefined: the object is created): the
 * configuration merged in, fields others own with other values refused as conflicts unless `force`
 * (then taken from them), fields this manager applied before and no longer applies removed unless
 * another manager owns them; the manager's Apply entry owns exactly what it applied.
 */
export function applyConfig(live: object | undefined, config: object, ctx: WriteContext, force: boolean): Applied {
  const cfg = clone(config) as Obj;
  if (isObj(cfg.metadata)) delete cfg.metadata.managedFields;
  const configSet = fieldSetOf(cfg, ctx.schema);
  const liveObj: Obj = live ? (clone(live) as Obj) : {};
  let managed = decode(isObj(liveObj.metadata) ? liveObj.metadata.managedFields : undefined);
  if (isObj(liveObj.metadata)) delete liveObj.metadata.managedFields;
  const merged = strategicMerge(liveObj, cfg, ctx.schema) as Obj;
  const { changed } = compare(liveObj, merged, ctx.schema);
  const conflicts: Conflict[] = [];
  for (const m of managed) {
    if (sameManager(m.entry, ctx.manager, 'Apply', ctx.subresource)) continue;
    for (const p of m.set) if (changed.has(p) && configSet.has(p)) conflicts.push({ manager: m.entry, path: p });
  }
  if (conflicts.length > 0) {
    if (!force) throw conflictError(conflicts);
    const taken = new Set(conflicts.map((c) => c.path));
    managed = managed.map((m) =>
      sameManager(m.entry, ctx.manager, 'Apply', ctx.subresource) ? m : { entry: m.entry, set: new Set([...m.set].filter((p) => !taken.has(p))) },
    );
  }
  // Fields this manager no longer applies go unless another manager owns them (or something under them).
  const previous = managed.find((m) => sameManager(m.entry, ctx.manager, 'Apply', ctx.subresource))?.set ?? new Set<string>();
  const others = managed.filter((m) => !sameManager(m.entry, ctx.manager, 'Apply', ctx.subresource));
  const ownedByOthers = (p: string) => others.some((m) => [...m.set].some((q) => q === p || q.startsWith(p + sep)));
  const applies = (p: string) => configSet.has(p) || [...configSet].some((q) => q.startsWith(p + sep));
  const gone = [...previous].filter((p) => !applies(p) && !ownedByOthers(p)).sort((a, b) => b.length - a.length);
  for (const p of gone) removePath(merged, p);
  managed = own(managed, ctx, 'Apply', configSet);
  const managedFields = encode(managed);
  return { object: merged, managedFields };
}

/** The manager of a write that names none: the user agent's first token (upstream's prefixFromUserAgent). */
export function managerOf(fieldManager: string | null, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  return (userAgent ?? '').split('/')[0]!.slice(0, 128);
}
