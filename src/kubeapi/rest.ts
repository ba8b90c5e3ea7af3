// The one REST handler of the Kubernetes API, for every kind in the resource table: get, list (label
// and field selectors, resourceVersion), watch (bookmarks, timeoutSeconds, resourceVersion), create,
// update, JSON / merge / strategic-merge / apply patch, delete (propagationPolicy, preconditions),
// deletecollection, Tables, and the status, scale and connect subresources.
// Upstream: apiserver's endpoints/handlers (get.go, create.go, update.go, patch.go, delete.go, watch.go)
// over the storage each row names (registry/generic/registry.Store).

import { randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { typeMetaError } from '../api/decode.js';
import type { TableOptions } from '../printers/tables.js';
import { readObjectBody } from '../http/body.js';
import { addWarnings, sendObject } from '../http/negotiate.js';
import { requestInfo } from '../http/router.js';
import { badRequest, conflict, invalid, methodNotAllowed, notFound, notFoundPath, sendJSON, successStatus, unsupportedMediaType } from '../http/status.js';
import type { CreateOptions, DeleteOptions, KubeBackend, KubeObject, ListResult, PropagationPolicy, Storage } from './backend.js';
import { applyConfig, managerOf, updateManagedFields, type WriteContext } from './managed-fields.js';
import { applyPatch, objectMetaMergeSchema, patchTypeOf, type PatchType } from './patch.js';
import { boolParam, dryRunOf, includeObjectOf, intParam, wantsTable, writeOptionsOf } from './query.js';
import { groupVersionOf, type ApiContext, type ResourceDef, type ScaleSubresource, type Verb } from './resource-def.js';
import { scaleOf, withReplicas } from './scale.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { serveWatch } from './watch.js';

export interface RestOptions extends ApiContext {
  /** How often a watch that allows bookmarks gets one. */
  bookmarkMs: number;
}

/** One request, resolved to a row of the table and its storage. */
export interface RestRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  def: ResourceDef;
  storage: Storage;
  /** The namespace of a namespaced request; undefined across all namespaces; '' for cluster-scoped kinds. */
  namespace: string | undefined;
}

type Obj = KubeObject & { metadata: NonNullable<KubeObject['metadata']> };

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 5; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}

/**
 * Times a patch that names no resourceVersion is applied before its conflict is returned: each
 * attempt loses only to a write stored after it read, so with writes of one object one at a time
 * it loses at most as many times as writes were sent with it (the apiserver retries until it wins).
 */
const maxPatchAttempts = 100;

/** The request body as an object (by its Content-Type: JSON, YAML or Kubernetes protobuf; YAML for apply patches). */
async function readObject(req: IncomingMessage): Promise<unknown> {
  return (await readObjectBody(req)).value;
}

/** A PATCH body with its type (by Content-Type); 415 for other types, 400 when empty. */
async function readPatch(req: IncomingMessage, def: ResourceDef): Promise<{ type: PatchType; patch: unknown; duplicates: string[] }> {
  const type = patchTypeOf(req.headers['content-type']);
  if (!type || (type === 'strategic' && def.customResource)) throw unsupportedMediaType(req.headers['content-type'] ?? '');
  const { value: patch, duplicates } = await readObjectBody(req, type === 'apply' ? { yaml: true } : {});
  if (patch === undefined) throw badRequest('the body of the request was empty');
  return { type, patch, duplicates };
}

/** A write's options: the query's fieldValidation and dryRun, the body's duplicate keys, warnings as the response's Warning headers. */
function writeOptions(r: RestRequest, duplicates: readonly string[] = []): CreateOptions {
  const user = requestInfo(r.req)?.user;
  return { ...writeOptionsOf(r.query), duplicateFields: duplicates, warn: (m) => addWarnings(r.res, [m]), ...(user ? { user } : {}) };
}

/** The verb of a request on a subresource that is read and written (status, scale). */
function subresourceVerb(method: string): 'get' | 'update' | 'patch' {
  if (method === 'GET') return 'get';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  throw methodNotAllowed();
}

function requireVerb(def: ResourceDef, verb: Verb): void {
  if (!def.verbs.includes(verb)) throw methodNotAllowed();
}

function need<K extends keyof Storage>(storage: Storage, op: K): NonNullable<Storage[K]> {
  const fn = storage[op];
  if (!fn) throw methodNotAllowed();
  return (fn as (...a: unknown[]) => unknown).bind(storage) as NonNullable<Storage[K]>;
}

/** The object with the row's apiVersion and kind first. */
function withKind(def: ResourceDef, obj: KubeObject): KubeObject {
  return { apiVersion: groupVersionOf(def), kind: def.kind, ...obj };
}

/** A body checked against the row: an object of its kind and group/version, in the request's namespace, with the URL's name. */
function checkBody(def: ResourceDef, body: unknown, namespace: string, name?: string): Obj {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`the request body must be a ${def.kind} object`);
  const typeError = typeMetaError(body as Record<string, unknown>, def.kind);
  if (typeError) throw badRequest(typeError);
  const obj = body as Obj;
  const gv = groupVersionOf(def);
  if (obj.kind !== undefined && obj.kind !== def.kind) {
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${gv}) or kind ${obj.kind} is not ${def.kind}`);
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv)
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${gv})`);
  obj.metadata ??= {};
  if (def.namespaced) {
    if (obj.metadata.namespace && obj.metadata.namespace !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    obj.metadata.namespace = namespace;
  }
  if (name !== undefined) {
    if (obj.metadata.name && obj.metadata.name !== name)
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    obj.metadata.name = name;
  }
  return obj;
}

export class RestHandler {
  constructor(
    private readonly backend: KubeBackend,
    private readonly opts: RestOptions,
  ) {}

  /** Who writes and with which merge schema, for managedFields: the fieldManager, or the user agent's first token. */
  private writeContext(r: RestRequest, subresource?: string): WriteContext {
    return {
      ...(subresource ? { subresource } : {}),
      manager: managerOf(r.query.get('fieldManager'), r.req.headers['user-agent']),
      apiVersion: groupVersionOf(r.def),
      schema: r.def.mergeSchema ?? objectMetaMergeSchema,
      now: () => this.opts.now(),
    };
  }

  /** Write options whose managedFields record an Update by the request's manager; `sent` the managedFields the request carries. */
  private tracked(r: RestRequest, opts: CreateOptions, sent: unknown, subresource?: string): CreateOptions {
    const ctx = this.writeContext(r, subresource);
    return { ...opts, managedFields: (next, current) => updateManagedFields(current, next, sent, ctx) };
  }

  /** The object written, with the backend's warnings about it set as Warning headers (create, update, patch). */
  private warned(r: RestRequest, written: KubeObject): KubeObject {
    if (this.backend.writeWarnings) addWarnings(r.res, this.backend.writeWarnings(written));
    return written;
  }

  // ---- collections ----

  /** /…/<resource>: list or watch (GET), create (POST), deletecollection (DELETE). */
  async collection(r: RestRequest): Promise<void> {
    const method = r.req.method ?? 'GET';
    // Across all namespaces a namespaced kind is only listed and watched.
    if (r.def.namespaced && r.namespace === undefined && method !== 'GET') throw methodNotAllowed();
    switch (method) {
      case 'GET':
        return this.listOrWatch(r);
      case 'POST':
        return this.create(r);
      case 'DELETE':
        return this.deleteCollection(r);
      default:
        throw methodNotAllowed();
    }
  }

  /** The predicate of a list or watch: namespace, label selector, field selector. */
  private selector(r: RestRequest): (o: KubeObject) => boolean {
    const { def, query: q, namespace } = r;
    const labels = parseLabelSelector(q.get('labelSelector'));
    const extra = def.fieldSelectors ?? {};
    const known = ['metadata.name', 'metadata.namespace', ...Object.keys(extra)];
    const values = (o: KubeObject): Record<string, string> => {
      const v: Record<string, string> = { 'metadata.name': o.metadata?.name ?? '', 'metadata.namespace': o.metadata?.namespace ?? '' };
      for (const [f, get] of Object.entries(extra)) v[f] = get(o);
      return v;
    };
    const fields = parseFieldSelector(q.get('fieldSelector'), values, known, def.kind);
    const inNamespace = (o: KubeObject) => !namespace || o.metadata?.namespace === namespace;
    return (o) => inNamespace(o) && labels(o.metadata?.labels ?? {}) && fields(o);
  }

  /** Table options when the request asks for a Table and the row has one; includeObject checked either way. */
  private tableRequest(r: RestRequest): Omit<TableOptions, 'resourceVersion'> | undefined {
    if (!r.def.table) return undefined;
    const includeObject = includeObjectOf(r.query);
    return wantsTable(r.req) ? { now: this.opts.now(), includeObject } : undefined;
  }

  private listOrWatch(r: RestRequest): void {
    const { def, storage, query: q } = r;
    const match = this.selector(r);
    const table = this.tableRequest(r);
    if (boolParam(q, 'watch')) {
      requireVerb(def, 'watch');
      const watch = need(storage, 'watch');
      let first = true;
      return serveWatch<KubeObject>(r.req, r.res, {
        resourceVersion: q.get('resourceVersion') ?? '',
        start: (rv, on) => watch(rv, on),
        matches: match,
        key: (o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`,
        render: (o) => {
          if (!table) return withKind(def, o);
          const t = def.table!([o], { ...table, resourceVersion: o.metadata?.resourceVersion ?? '', noColumns: !first });
          first = false;
          return t;
        },
        timeoutSeconds: intParam(q, 'timeoutSeconds'),
        bookmarkMs: boolParam(q, 'allowWatchBookmarks') ? this.opts.bookmarkMs : undefined,
        bookmark: (rv) => ({ kind: def.kind, apiVersion: groupVersionOf(def), metadata: { resourceVersion: rv } }),
      });
    }
    requireVerb(def, 'list');
    const list = storage.list();
    const items = list.items.filter(match);
    if (table) return sendJSON(r.res, 200, def.table!(items, { ...table, resourceVersion: list.resourceVersion ?? '' }));
    sendObject(r.req, r.res, 200, this.listBody(def, list, items));
  }

  private listBody(def: ResourceDef, list: ListResult<KubeObject>, items: KubeObject[]): KubeObject & { items: KubeObject[] } {
    const metadata = list.resourceVersion !== undefined ? { resourceVersion: list.resourceVersion } : {};
    return { kind: `${def.kind}List`, apiVersion: groupVersionOf(def), metadata, items: items.map((o) => withKind(def, o)) };
  }

  private async create(r: RestRequest): Promise<void> {
    const { def } = r;
    requireVerb(def, 'create');
    const create = need(r.storage, 'create');
    const body = await readObjectBody(r.req);
    const obj = checkBody(def, body.value, r.namespace ?? '');
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = obj.metadata.generateName + randomSuffix();
    const opts = this.tracked(r, writeOptions(r, body.duplicates), obj.metadata.managedFields);
    sendObject(r.req, r.res, 201, this.warned(r, withKind(def, await create(obj, opts))));
  }

  private async deleteCollection(r: RestRequest): Promise<void> {
    const { def, storage } = r;
    requireVerb(def, 'deletecollection');
    const del = need(storage, 'delete');
    const opts = await this.deleteOptions(r);
    const match = this.selector(r);
    const list = storage.list();
    const deleted: KubeObject[] = [];
    for (const o of list.items.filter(match)) {
      deleted.push(await del(o.metadata?.namespace ?? '', o.metadata?.name ?? '', opts));
    }
    sendObject(r.req, r.res, 200, this.listBody(def, list, deleted));
  }

  // ---- one object ----

  private current(r: RestRequest, name: string): Obj {
    const o = r.storage.get(r.namespace ?? '', name);
    if (!o) throw notFound(r.def.resource, name, r.def.group);
    return o as Obj;
  }

  /** /…/<resource>/<name>: get, update (PUT), patch, delete. */
  async item(r: RestRequest, name: string): Promise<void> {
    switch (r.req.method ?? 'GET') {
      case 'GET':
        return this.get(r, name);
      case 'PUT':
        return this.update(r, name);
      case 'PATCH':
        return this.patch(r, name);
      case 'DELETE':
        return this.delete(r, name);
      default:
        throw methodNotAllowed();
    }
  }

  private get(r: RestRequest, name: string): void {
    requireVerb(r.def, 'get');
    const table = this.tableRequest(r);
    const obj = this.current(r, name);
    if (table) return sendJSON(r.res, 200, r.def.table!([obj], { ...table, resourceVersion: obj.metadata.resourceVersion ?? '' }));
    sendObject(r.req, r.res, 200, withKind(r.def, obj));
  }

  private async update(r: RestRequest, name: string): Promise<void> {
    requireVerb(r.def, 'update');
    const update = need(r.storage, 'update');
    const body = await readObjectBody(r.req);
    const obj = checkBody(r.def, body.value, r.namespace ?? '', name);
    this.current(r, name);
    const opts = this.tracked(r, writeOptions(r, body.duplicates), obj.metadata.managedFields);
    sendObject(r.req, r.res, 200, this.warned(r, withKind(r.def, await update(obj, opts))));
  }

  /**
   * A patch body of any type applied to the current object and written with `write`; an apply patch
   * to an object that does not exist creates it with `create`, when given.
   */
  private async patched(
    r: RestRequest,
    name: string,
    write: (next: Obj, opts: CreateOptions) => Promise<KubeObject>,
    create?: (obj: Obj, opts: CreateOptions) => Promise<KubeObject>,
  ): Promise<{ object: KubeObject; created: boolean }> {
    const { def } = r;
    const { type, patch, duplicates } = await readPatch(r.req, r.def);
    const opts = writeOptions(r, duplicates);
    if (type === 'apply' && !r.query.get('fieldManager'))
      throw badRequest('PATCH requests with apply-patch content type must have a fieldManager query parameter');
    const patchRV = (patch as KubeObject | undefined)?.metadata?.resourceVersion;
    const force = type === 'apply' && boolParam(r.query, 'force');
    const config = type === 'apply' ? checkBody(def, patch, r.namespace ?? '', name) : undefined;
    for (let attempt = 1; ; attempt++) {
      const current = r.storage.get(r.namespace ?? '', name) as Obj | undefined;
      if (!current) {
        // Server-side apply of an object that does not exist creates it.
        if (config && create) {
          const applied = applyConfig(undefined, config, this.writeContext(r), force);
          const obj = checkBody(def, applied.object, r.namespace ?? '', name);
          return { object: await create(obj, { ...opts, managedFields: () => applied.managedFields }), created: true };
        }
        throw notFound(def.resource, name, def.group);
      }
      let next: Obj;
      let writeOpts: CreateOptions;
      if (config) {
        // Server-side apply: the configuration merged in, field ownership and conflicts as structured-merge-diff keeps them.
        const applied = applyConfig(current, config, this.writeContext(r), force);
        next = checkBody(def, applied.object, r.namespace ?? '', name);
        writeOpts = { ...opts, managedFields: () => applied.managedFields };
      } else {
        next = checkBody(def, applyPatch(type, current, patch, def.mergeSchema ?? objectMetaMergeSchema), r.namespace ?? '', name);
        writeOpts = this.tracked(r, opts, next.metadata.managedFields);
      }
      // A patch applies to the current object unless it names the version it was made against.
      next.metadata.resourceVersion = typeof patchRV === 'string' ? patchRV : current.metadata.resourceVersion;
      try {
        return { object: await write(next, writeOpts), created: false };
      } catch (err) {
        // Another write stored a newer version after this patch read it: the patch is applied again
        // to that one, as the apiserver's patcher does, unless the patch named its version.
        if (typeof patchRV === 'string' || attempt >= maxPatchAttempts || (err as { code?: number }).code !== 409) throw err;
      }
    }
  }

  private async patch(r: RestRequest, name: string): Promise<void> {
    const { def, storage } = r;
    requireVerb(def, 'patch');
    const update = need(storage, 'update');
    const create = def.verbs.includes('create') && storage.create ? (o: Obj, opts: CreateOptions) => storage.create!(o, opts) : undefined;
    const { object, created } = await this.patched(r, name, (next, opts) => update(next, opts), create);
    sendObject(r.req, r.res, created ? 201 : 200, this.warned(r, withKind(def, object)));
  }

  /** DeleteOptions from the query and the body (either may carry them). */
  private async deleteOptions(r: RestRequest): Promise<DeleteOptions> {
    const body = ((await readObject(r.req)) ?? {}) as {
      gracePeriodSeconds?: unknown;
      preconditions?: { uid?: string; resourceVersion?: string };
      propagationPolicy?: unknown;
      orphanDependents?: unknown;
      dryRun?: unknown;
    };
    const opts: DeleteOptions = {};
    const grace = intParam(r.query, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
    if (grace !== undefined) opts.gracePeriodSeconds = grace;
    if (body.preconditions) opts.preconditions = body.preconditions;
    const policy = r.query.get('propagationPolicy') ?? body.propagationPolicy;
    if (policy !== undefined && policy !== null) {
      if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
        throw badRequest(`propagationPolicy: Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan"`);
      }
      if (body.orphanDependents !== undefined) throw badRequest('orphanDependents: Invalid value: "": Cannot both set OrphanDependents and PropagationPolicy');
      opts.propagationPolicy = policy as PropagationPolicy;
    } else if (typeof body.orphanDependents === 'boolean') {
      opts.propagationPolicy = body.orphanDependents ? 'Orphan' : 'Background';
    }
    opts.dryRun = dryRunOf(r.query) || (Array.isArray(body.dryRun) && body.dryRun.includes('All'));
    return opts;
  }

  private async delete(r: RestRequest, name: string): Promise<void> {
    const { def } = r;
    requireVerb(def, 'delete');
    const del = need(r.storage, 'delete');
    const opts = await this.deleteOptions(r);
    const current = this.current(r, name);
    // Preconditions (rest.BeforeDelete): the object deleted is the one the client saw.
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw conflict(def.resource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        def.resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
    const gone = await del(r.namespace ?? '', name, opts);
    if (def.returnDeletedObject) return sendObject(r.req, r.res, 200, withKind(def, gone));
    // Kept for its finalizers (marked with a deletionTimestamp): the API server answers with the object.
    if (gone.metadata?.deletionTimestamp && r.storage.get(r.namespace ?? '', name)) return sendObject(r.req, r.res, 200, withKind(def, gone));
    // Deleted at once: the API server answers with a Status naming the object, not the object.
    sendObject(r.req, r.res, 200, successStatus({ name, ...(def.group ? { group: def.group } : {}), kind: def.resource, uid: gone.metadata?.uid ?? '' }));
  }

  // ---- subresources ----

  /** /…/<resource>/<name>/<subresource>: status, scale, or one of the row's connect subresources. */
  async subresource(r: RestRequest, name: string, sub: string): Promise<void> {
    const { def } = r;
    const method = r.req.method ?? 'GET';
    if (sub === 'status' && def.status) return this.status(r, name, def.status);
    if (sub === 'scale' && def.scale) return this.scale(r, name, def.scale);
    const c = def.connect?.[sub];
    if (!c) throw notFoundPath();
    const verb = method === 'GET' ? 'get' : method === 'POST' ? 'create' : undefined;
    if (!verb || !c.verbs.includes(verb)) throw methodNotAllowed();
    const object = this.current(r, name);
    await c.serve({ req: r.req, res: r.res, query: r.query, namespace: r.namespace ?? '', name, object }, this.backend);
  }

  private async status(r: RestRequest, name: string, verbs: ReadonlyArray<'get' | 'patch' | 'update'>): Promise<void> {
    const verb = subresourceVerb(r.req.method ?? 'GET');
    if (!verbs.includes(verb)) throw methodNotAllowed();
    if (verb === 'get') return sendObject(r.req, r.res, 200, withKind(r.def, this.current(r, name)));
    const updateStatus = need(r.storage, 'updateStatus');
    if (verb === 'update') {
      const body = await readObjectBody(r.req);
      const obj = checkBody(r.def, body.value, r.namespace ?? '', name);
      this.current(r, name);
      return sendObject(r.req, r.res, 200, withKind(r.def, await updateStatus(obj, writeOptions(r, body.duplicates))));
    }
    const { object } = await this.patched(r, name, (next, opts) => updateStatus(next, opts));
    sendObject(r.req, r.res, 200, withKind(r.def, object));
  }

  /** autoscaling/v1 Scale of an object with replicas (the apiserver's ScaleREST, as a CRD's scale subresource reads its paths). */
  private async scale(r: RestRequest, name: string, paths: ScaleSubresource): Promise<void> {
    const verb = subresourceVerb(r.req.method ?? 'GET');
    if (verb !== 'get' && !r.def.verbs.includes('update')) throw methodNotAllowed();
    const current = this.current(r, name);
    if (verb === 'get') return sendObject(r.req, r.res, 200, scaleOf(current, paths));
    const update = need(r.storage, 'update');
    // The replicas a scale writes are the writer's (an Update of the scale subresource), as upstream keeps them.
    const opts = this.tracked(r, writeOptions(r), current.metadata.managedFields, 'scale');
    const write = async (scale: KubeObject, obj: Obj): Promise<KubeObject> => {
      const replicas = (scale as { spec?: { replicas?: unknown } }).spec?.replicas;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw invalid('Scale.autoscaling', name, [
          { type: 'Invalid', field: 'spec.replicas', value: replicas ?? null, detail: 'must be greater than or equal to 0' },
        ]);
      }
      const next = withReplicas(obj, paths, replicas);
      const sentRV = scale.metadata?.resourceVersion;
      if (sentRV) next.metadata.resourceVersion = sentRV;
      return scaleOf((await update(next, opts)) as Obj, paths);
    };
    if (verb === 'update') {
      const body = await readObject(r.req);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a Scale object');
      return sendObject(r.req, r.res, 200, await write(body as KubeObject, current));
    }
    const { type, patch } = await readPatch(r.req, r.def);
    const scale = applyPatch(type, scaleOf(current, paths), patch) as KubeObject;
    sendObject(r.req, r.res, 200, await write(scale, current));
  }
}
