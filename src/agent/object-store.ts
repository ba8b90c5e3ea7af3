// ConfigMaps and Secrets written through the API: decoded, defaulted and validated as the API server
// does (400 for unknown fields, 422 Invalid with causes), kept with resourceVersions, and — given a
// directory — persisted one file per object (atomic write, 0600) so an agent restart finds them.
// The kubelet's env and volume references resolve against the same store (it is an ObjectLookup).

import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ConfigMap, Secret } from '../api/types.js';
import { strictDecode, typeMetaError } from '../api/decode.js';
import { kindTypes } from '../api/schema.js';
import { canonicalJSON, defaultNamespace, defaultSecret } from '../api/defaults.js';
import { formatFieldError, formatFieldErrorBody, sortFieldErrors, type FieldError } from '../api/field-errors.js';
import { validateConfigMap, validateSecret } from '../api/validation/index.js';
import { ApiError, type CreateOptions, type KubeObject, type ListResult, type ObjectKind, type ObjectsBackend, type Watch, type WatchEvent } from '../kubeapi/backend.js';
import { syncDir, writeFileAtomic } from '../util/atomic-write.js';

const resourceOf: Record<ObjectKind, string> = { ConfigMap: 'configmaps', Secret: 'secrets' };

function notFound(kind: ObjectKind, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${resourceOf[kind]} ${JSON.stringify(name)} not found`, { name, kind: resourceOf[kind] });
}

function invalid(kind: ObjectKind, name: string, errors: readonly FieldError[]): ApiError {
  const sorted = sortFieldErrors(errors);
  const texts = sorted.map(formatFieldError);
  return new ApiError(422, 'Invalid', `${kind} ${JSON.stringify(name)} is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`, {
    name,
    kind,
    causes: sorted.map((e) => ({ reason: `FieldValue${e.type}`, message: formatFieldErrorBody(e), field: e.field })),
  });
}

export interface ObjectStoreOptions {
  /** Where objects are persisted (none: memory only). */
  dir?: string;
  now?: () => number;
}

/** Watch events kept for clients resuming from a resourceVersion. */
const historyLimit = 1000;

type Watcher = { kind: ObjectKind; onEvent: (ev: WatchEvent<KubeObject>) => void };

export class ObjectStore implements ObjectsBackend {
  private readonly items = new Map<string, KubeObject>();
  private rv = 0;
  private readonly history: Array<{ rv: number; kind: ObjectKind; ev: WatchEvent<KubeObject> }> = [];
  /** The resourceVersion below which the history is gone. */
  private floor = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly now: () => number;

  constructor(private readonly opts: ObjectStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    if (opts.dir) this.loadSync(opts.dir);
  }

  private key(kind: ObjectKind, ns: string, name: string): string {
    return `${kind}/${ns}/${name}`;
  }

  private file(kind: ObjectKind, ns: string, name: string): string {
    return join(this.opts.dir!, resourceOf[kind], `${ns}_${name}.json`);
  }

  private loadSync(dir: string): void {
    for (const kind of ['ConfigMap', 'Secret'] as const) {
      const d = join(dir, resourceOf[kind]);
      let names: string[];
      try {
        names = readdirSync(d).filter((n) => n.endsWith('.json'));
      } catch {
        continue;
      }
      for (const n of names) {
        try {
          const obj = JSON.parse(readFileSync(join(d, n), 'utf8')) as KubeObject;
          const rv = Number(obj.metadata.resourceVersion);
          if (Number.isFinite(rv) && rv > this.rv) this.rv = this.floor = rv;
          this.items.set(this.key(kind, obj.metadata.namespace, obj.metadata.name), obj);
        } catch {
          // an unreadable file is left alone
        }
      }
    }
  }

  private async persist(kind: ObjectKind, obj: KubeObject | undefined, ns: string, name: string): Promise<void> {
    if (!this.opts.dir) return;
    const path = this.file(kind, ns, name);
    if (obj) {
      await mkdir(join(this.opts.dir, resourceOf[kind]), { recursive: true, mode: 0o700 });
      await writeFileAtomic(path, JSON.stringify(obj), 0o600);
      return;
    }
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await syncDir(join(this.opts.dir, resourceOf[kind]));
  }

  /** Decodes, defaults and validates an object sent to the API. */
  private decode(kind: ObjectKind, raw: unknown, opts: CreateOptions): KubeObject {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ApiError(400, 'BadRequest', 'the body of the request was not a JSON object');
    const obj = structuredClone(raw) as Record<string, unknown>;
    const typeError = typeMetaError(obj, kind);
    if (typeError) throw new ApiError(400, 'BadRequest', typeError);
    if (obj.kind !== undefined && obj.kind !== kind) throw new ApiError(400, 'BadRequest', `the kind ${JSON.stringify(obj.kind)} is not ${kind}`);
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink']) delete meta[k];
    obj.metadata = meta;
    const decoded = strictDecode<Record<string, unknown>>(obj, kindTypes[kind]);
    if (decoded.typeErrors.length > 0) {
      throw new ApiError(400, 'BadRequest', `${kind} in version "v1" cannot be handled as a ${kind}: ${decoded.typeErrors.map((p) => p.message).join('; ')}`);
    }
    if (decoded.unknownFields.length > 0 && (opts.fieldValidation ?? 'Strict') === 'Strict') {
      throw new ApiError(400, 'BadRequest', `strict decoding error: ${decoded.unknownFields.map((p) => p.message).join(', ')}`);
    }
    let value = decoded.value as ConfigMap | Secret;
    value.metadata ??= {};
    value.metadata.namespace ||= defaultNamespace;
    if (kind === 'Secret') value = defaultSecret(value as Secret);
    const errs = kind === 'ConfigMap' ? validateConfigMap(value as ConfigMap) : validateSecret(value as Secret);
    if (errs.length > 0) throw invalid(kind, value.metadata?.name ?? '', errs);
    return { ...value, apiVersion: 'v1', kind } as unknown as KubeObject;
  }

  list(kind: ObjectKind): ListResult<KubeObject> {
    const items = [...this.items.entries()].filter(([k]) => k.startsWith(`${kind}/`)).map(([, v]) => v);
    return { items, resourceVersion: String(this.rv) };
  }

  get(kind: ObjectKind, namespace: string, name: string): KubeObject | undefined {
    return this.items.get(this.key(kind, namespace, name));
  }

  async create(kind: ObjectKind, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    const obj = this.decode(kind, raw, opts);
    const { namespace, name } = obj.metadata;
    if (this.get(kind, namespace, name)) {
      throw new ApiError(409, 'AlreadyExists', `${resourceOf[kind]} ${JSON.stringify(name)} already exists`, { name, kind: resourceOf[kind] });
    }
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (opts.dryRun) return obj;
    obj.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, obj, namespace, name);
    this.items.set(this.key(kind, namespace, name), obj);
    this.publish(kind, this.rv, { type: 'ADDED', object: obj });
    return obj;
  }

  async update(kind: ObjectKind, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    const sentRV = (raw as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion;
    const obj = this.decode(kind, raw, opts);
    const { namespace, name } = obj.metadata;
    const current = this.get(kind, namespace, name);
    if (!current) throw notFound(kind, name);
    if (sentRV && sentRV !== current.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${resourceOf[kind]} ${JSON.stringify(name)}: the object has been modified; please apply your changes to the latest version and try again`, { name, kind: resourceOf[kind] });
    }
    if ((current as { immutable?: boolean }).immutable === true) {
      const { metadata: _a, ...was } = current;
      const { metadata: _b, ...now } = obj;
      if (canonicalJSON(was) !== canonicalJSON(now)) throw invalid(kind, name, [{ type: 'Forbidden', field: 'data', detail: 'field is immutable when `immutable` is set' }]);
    }
    obj.metadata.uid = current.metadata.uid;
    obj.metadata.creationTimestamp = current.metadata.creationTimestamp;
    const strip = (o: KubeObject) => canonicalJSON({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
    if (strip(obj) === strip(current) || opts.dryRun) return current;
    obj.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, obj, namespace, name);
    this.items.set(this.key(kind, namespace, name), obj);
    this.publish(kind, this.rv, { type: 'MODIFIED', object: obj });
    return obj;
  }

  async delete(kind: ObjectKind, namespace: string, name: string): Promise<KubeObject> {
    const current = this.get(kind, namespace, name);
    if (!current) throw notFound(kind, name);
    await this.persist(kind, undefined, namespace, name);
    this.items.delete(this.key(kind, namespace, name));
    const gone = { ...current, metadata: { ...current.metadata, resourceVersion: String(++this.rv) } };
    this.publish(kind, this.rv, { type: 'DELETED', object: gone });
    return gone;
  }

  watch(kind: ObjectKind, resourceVersion: string, onEvent: (ev: WatchEvent<KubeObject>) => void): Watch {
    if (resourceVersion === '' || resourceVersion === '0') {
      for (const object of this.list(kind).items) onEvent({ type: 'ADDED', object });
    } else {
      if (!/^[0-9]+$/.test(resourceVersion)) throw new ApiError(400, 'BadRequest', `invalid resource version "${resourceVersion}"`);
      const from = Number(resourceVersion);
      if (from < this.floor) throw new ApiError(410, 'Expired', `too old resource version: ${from} (${this.floor})`);
      for (const h of this.history) if (h.kind === kind && h.rv > from) onEvent(h.ev);
    }
    const w: Watcher = { kind, onEvent };
    this.watchers.add(w);
    return { stop: () => void this.watchers.delete(w) };
  }

  private publish(kind: ObjectKind, rv: number, ev: WatchEvent<KubeObject>): void {
    this.history.push({ rv, kind, ev });
    if (this.history.length > historyLimit) this.floor = this.history.splice(0, this.history.length - historyLimit).pop()!.rv;
    for (const w of [...this.watchers]) if (w.kind === kind) w.onEvent(ev);
  }

  // --- the kubelet's ObjectLookup ---

  configMap(namespace: string, name: string): ConfigMap | undefined {
    return this.get('ConfigMap', namespace, name) as unknown as ConfigMap | undefined;
  }

  secret(namespace: string, name: string): Secret | undefined {
    return this.get('Secret', namespace, name) as unknown as Secret | undefined;
  }
}

/** Creates the directory of a persisted store (the agent's root dir owns it). */
export function objectStoreDir(rootDir: string): string {
  const dir = join(rootDir, 'api-objects');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
