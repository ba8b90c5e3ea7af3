// Kinds kept as plain objects (ConfigMaps, Secrets, Services; any kind with an ObjectStrategy), written through
// the API: decoded, defaulted and validated per the kind's strategy as the API server does (400 for
// unknown fields, 422 Invalid with causes), kept with resourceVersions and a watch history, and —
// given a directory — persisted one file per object (atomic write, 0600) so an agent restart finds
// them. The apiserver's generic registry Store (k8s.io/apiserver/pkg/registry/generic/registry) in small.
// The kubelet's env and volume references resolve against the same store (it is an ObjectLookup).

import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ConfigMap, PersistentVolume, PersistentVolumeClaim, Secret } from '../api/types.js';
import { strictDecode, typeMetaError } from '../api/decode.js';
import { canonicalJSON, defaultNamespace } from '../api/defaults.js';
import type {
  CreateOptions,
  DeleteOptions,
  KubeObject,
  ListResult,
  ObjectsBackend,
  ObjectStrategy,
  Storage,
  Watch,
  WatchEvent,
  WritableObjectMeta,
} from '../kubeapi/backend.js';
import { checkFields } from '../kubeapi/field-validation.js';
import { objectStrategies } from '../kubeapi/strategies.js';
import type { ServiceForEnv } from '../kuberuntime/envvars.js';
import { alreadyExists, ApiError, badRequest, conflict, invalid, notFound, staleObject } from '../http/status.js';
import { syncDir, writeFileAtomic } from '../util/atomic-write.js';
import { storing } from './storage-full.js';
import { OneAtATime } from '../util/one-at-a-time.js';

/** A stored object: name and namespace always set ('' for cluster-scoped kinds). */
type Stored = KubeObject & { metadata: WritableObjectMeta & { name: string } };

export interface ObjectStoreOptions {
  /** Where objects are persisted (none: memory only). */
  dir?: string;
  now?: () => number;
  /** The kinds kept (default: every strategy in kubeapi/strategies.ts). */
  kinds?: readonly ObjectStrategy[];
}

/** Watch events kept for clients resuming from a resourceVersion. */
const historyLimit = 1000;

type Watcher = { kind: string; onEvent: (ev: WatchEvent<KubeObject>) => void };

/** Metadata the server keeps whatever a client sends (the rest — labels, annotations, ownerReferences, finalizers — is the client's). */
export const serverMetadata = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'managedFields',
  'selfLink',
] as const;

/** An object's managedFields as the write leaves them (none: the field is absent). */
function setManagedFields(obj: KubeObject, entries: unknown[] | undefined): void {
  const meta = (obj.metadata ??= {}) as { managedFields?: unknown[] };
  if (entries && entries.length > 0) meta.managedFields = entries;
  else delete meta.managedFields;
}

export class ObjectStore implements ObjectsBackend {
  private readonly items = new Map<string, Stored>();
  private rv = 0;
  private readonly history: Array<{ rv: number; kind: string; ev: WatchEvent<KubeObject> }> = [];
  /** The resourceVersion below which the history is gone. */
  private floor = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly now: () => number;
  private readonly strategies = new Map<string, ObjectStrategy>();
  private readonly storages = new Map<string, Storage>();

  constructor(private readonly opts: ObjectStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    for (const s of opts.kinds ?? objectStrategies) this.strategies.set(s.kind, s);
    if (opts.dir) this.loadSync(opts.dir);
  }

  /** One kind's storage for the API layer. */
  storage(kind: string): Storage | undefined {
    if (!this.strategies.has(kind)) return undefined;
    let s = this.storages.get(kind);
    if (!s) {
      s = {
        list: () => this.list(kind),
        get: (ns, name) => this.get(kind, ns, name),
        create: (obj, o) => this.create(kind, obj, o),
        update: (obj, o) => this.update(kind, obj, o),
        ...(this.strategies.get(kind)!.statusSubresource ? { updateStatus: (obj: KubeObject, o: CreateOptions) => this.updateStatus(kind, obj, o) } : {}),
        delete: (ns, name, o) => this.delete(kind, ns, name, o),
        watch: (rv, on) => this.watch(kind, rv, on),
      };
      this.storages.set(kind, s);
    }
    return s;
  }

  private strategy(kind: string): ObjectStrategy {
    const s = this.strategies.get(kind);
    if (!s) throw new ApiError(500, 'InternalError', `Internal error occurred: no storage for kind ${kind}`);
    return s;
  }

  private key(kind: string, ns: string, name: string): string {
    return `${kind}/${ns}/${name}`;
  }

  private file(kind: string, ns: string, name: string): string {
    return join(this.opts.dir!, this.strategy(kind).resource, `${ns}_${name}.json`);
  }

  private loadSync(dir: string): void {
    for (const { kind, resource } of this.strategies.values()) this.loadKindSync(dir, kind, resource);
  }

  private loadKindSync(dir: string, kind: string, resource: string): void {
    const d = join(dir, resource);
    let names: string[];
    try {
      names = readdirSync(d).filter((n) => n.endsWith('.json'));
    } catch {
      return;
    }
    for (const n of names) {
      try {
        const obj = JSON.parse(readFileSync(join(d, n), 'utf8')) as Stored;
        const rv = Number(obj.metadata.resourceVersion);
        if (Number.isFinite(rv) && rv > this.rv) this.rv = this.floor = rv;
        this.items.set(this.key(kind, obj.metadata.namespace ?? '', obj.metadata.name), obj);
      } catch {
        // an unreadable file is left alone
      }
    }
  }

  private async persist(kind: string, obj: Stored | undefined, ns: string, name: string): Promise<void> {
    if (!this.opts.dir) return;
    const path = this.file(kind, ns, name);
    const dir = join(this.opts.dir, this.strategy(kind).resource);
    if (obj) {
      await storing(this.strategy(kind).resource, name, async () => {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomic(path, JSON.stringify(obj), 0o600);
      });
      return;
    }
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await syncDir(dir);
  }

  /** Decodes, defaults and validates an object sent to the API, by its kind's strategy. */
  private decode(kind: string, raw: unknown, opts: CreateOptions, prepare?: (obj: KubeObject) => KubeObject): Stored {
    const strategy = this.strategy(kind);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('the body of the request was not a JSON object');
    const obj = structuredClone(raw) as Record<string, unknown>;
    const typeError = typeMetaError(obj, kind);
    if (typeError) throw badRequest(typeError);
    if (obj.kind !== undefined && obj.kind !== kind) throw badRequest(`the kind ${JSON.stringify(obj.kind)} is not ${kind}`);
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    for (const k of serverMetadata) delete meta[k];
    obj.metadata = meta;
    // An object written in a further version of its kind is decoded in that version, then converted.
    const version = typeof obj.apiVersion === 'string' && obj.apiVersion !== strategy.apiVersion ? strategy.versions?.[obj.apiVersion] : undefined;
    const decoded = strictDecode<KubeObject>(obj, version?.schemaType ?? strategy.schemaType, strategy.schema);
    if (decoded.typeErrors.length > 0) {
      const apiVersion = version ? (obj.apiVersion as string) : strategy.apiVersion;
      throw badRequest(`${kind} in version "${apiVersion}" cannot be handled as a ${kind}: ${decoded.typeErrors.map((p) => p.message).join('; ')}`);
    }
    checkFields(
      opts,
      decoded.unknownFields.map((p) => p.path),
    );
    let value = version ? version.toStored(decoded.value) : decoded.value;
    value.metadata ??= {};
    if (strategy.namespaced) value.metadata.namespace ||= defaultNamespace;
    else delete value.metadata.namespace;
    if (strategy.defaults) value = strategy.defaults(value);
    if (prepare) value = prepare(value);
    const errs = strategy.validate(value);
    if (errs.length > 0) throw invalid(kind, value.metadata?.name ?? '', errs);
    return { ...value, apiVersion: strategy.apiVersion, kind } as Stored;
  }

  /** The kind's server-assigned fields (ClusterIPs, NodePorts); 422 when they conflict. */
  private allocate(kind: string, obj: Stored, old: Stored | undefined): void {
    const errs = this.strategy(kind).allocate?.(obj, old, this.list(kind).items) ?? [];
    if (errs.length > 0) throw invalid(kind, obj.metadata.name, errs);
  }

  list(kind: string): ListResult<KubeObject> {
    // In key order (namespace, then name), as the API server lists from etcd.
    const items = [...this.items.entries()]
      .filter(([k]) => k.startsWith(`${kind}/`))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => v);
    return { items, resourceVersion: String(this.rv) };
  }

  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.items.get(this.key(kind, namespace, name));
  }

  /**
   * The writes of one kind, one at a time: each reads the stored object, checks its resourceVersion
   * and stores the result before the next reads (etcd's compare-and-swap). Without it a write whose
   * file write is still under way could be overwritten by one that read the object before it.
   */
  private readonly writes = new OneAtATime();

  private oneAtATime<T>(kind: string, write: () => Promise<T>): Promise<T> {
    return this.writes.run(kind, write);
  }

  create(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    return this.oneAtATime(kind, () => this.createNow(kind, raw, opts));
  }

  private async createNow(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    const strategy = this.strategy(kind);
    const uid = randomUUID();
    const obj = this.decode(kind, raw, opts, (o) => {
      (o.metadata ??= {}).uid = uid;
      return strategy.prepareForCreate ? strategy.prepareForCreate(o) : o;
    });
    const { namespace = '', name } = obj.metadata;
    if (strategy.namespaced) this.admitToNamespace(strategy, namespace, name);
    if (this.get(kind, namespace, name)) throw alreadyExists(strategy.resource, name);
    const read = (k: string) => this.list(k).items;
    if (strategy.admit) Object.assign(obj, strategy.admit(obj, read));
    obj.metadata.uid = uid;
    obj.metadata.creationTimestamp = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    setManagedFields(obj, opts.managedFields?.(obj, undefined));
    if (strategy.statusSubresource) {
      if (!strategy.noGeneration) obj.metadata.generation = 1;
      if (strategy.initialStatus) (obj as { status?: unknown }).status = strategy.initialStatus(obj.metadata.creationTimestamp);
      else delete (obj as { status?: unknown }).status;
    }
    // After the status is reset: what the server assigns may include a status (a LoadBalancer's ingress).
    this.allocate(kind, obj, undefined);
    if (strategy.namespaced && this.createAdmission) {
      try {
        await this.createAdmission(strategy, obj, opts);
      } catch (err) {
        strategy.release?.(obj);
        throw err;
      }
    }
    if (opts.dryRun) {
      strategy.release?.(obj);
      return obj;
    }
    obj.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, obj, namespace, name);
    this.items.set(this.key(kind, namespace, name), obj);
    this.publish(kind, Number(obj.metadata.resourceVersion), { type: 'ADDED', object: obj });
    return obj;
  }

  update(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    return this.oneAtATime(kind, () => this.updateNow(kind, raw, opts));
  }

  private async updateNow(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    const sentRV = (raw as KubeObject | undefined)?.metadata?.resourceVersion;
    let obj = this.decode(kind, raw, opts);
    const { namespace = '', name } = obj.metadata;
    const strategy = this.strategy(kind);
    const current = this.items.get(this.key(kind, namespace, name));
    if (!current) throw notFound(strategy.resource, name);
    if (sentRV && sentRV !== current.metadata.resourceVersion) throw conflict(strategy.resource, name, staleObject);
    const errs = strategy.validateUpdate?.(obj, current) ?? [];
    if (errs.length > 0) throw invalid(kind, name, errs);
    const read = (k: string) => this.list(k).items;
    if (strategy.admit) obj = strategy.admit(obj, read, current) as Stored;
    if (strategy.prepareForUpdate) obj = strategy.prepareForUpdate(obj, current) as Stored;
    obj.metadata.uid = current.metadata.uid;
    obj.metadata.creationTimestamp = current.metadata.creationTimestamp;
    setManagedFields(obj, opts.managedFields ? opts.managedFields(obj, current) : current.metadata.managedFields);
    if (current.metadata.deletionTimestamp) {
      obj.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
      obj.metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds ?? 0;
      if (strategy.markTerminating) obj = strategy.markTerminating(obj) as Stored;
    }
    if (strategy.statusSubresource) {
      const { status } = current as { status?: unknown };
      if (status === undefined) delete (obj as { status?: unknown }).status;
      else (obj as { status?: unknown }).status = status;
    }
    // After the stored status is kept: what the server assigns may include a status (a LoadBalancer's ingress).
    this.allocate(kind, obj, current);
    if (strategy.namespaced && this.updateAdmission) {
      try {
        await this.updateAdmission(strategy, obj, current, opts);
      } catch (err) {
        strategy.release?.(obj);
        throw err;
      }
    }
    if (opts.dryRun) strategy.release?.(obj);
    if (strategy.statusSubresource && !strategy.noGeneration) {
      const specOf = (o: KubeObject) => canonicalJSON((o as { spec?: unknown }).spec);
      const generation = current.metadata.generation ?? 1;
      obj.metadata.generation = specOf(obj) === specOf(current) ? generation : generation + 1;
    }
    const strip = (o: Stored) => canonicalJSON({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
    if (strip(obj) === strip(current) || opts.dryRun) return current;
    // The last finalizer of an object being deleted is gone: the object goes (the registry's finalization).
    if (obj.metadata.deletionTimestamp && this.finalizersOf(kind, obj).length === 0) return this.remove(kind, obj);
    obj.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, obj, namespace, name);
    this.items.set(this.key(kind, namespace, name), obj);
    this.publish(kind, Number(obj.metadata.resourceVersion), { type: 'MODIFIED', object: obj });
    return obj;
  }

  /** The status subresource: the stored object with the status sent, everything else kept. */
  updateStatus(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    return this.oneAtATime(kind, () => this.updateStatusNow(kind, raw, opts));
  }

  private async updateStatusNow(kind: string, raw: unknown, opts: CreateOptions = {}): Promise<KubeObject> {
    const strategy = this.strategy(kind);
    const given = raw as KubeObject;
    const version = given.apiVersion && given.apiVersion !== strategy.apiVersion ? strategy.versions?.[given.apiVersion] : undefined;
    const sent = (version ? version.toStored(given) : given) as KubeObject & { status?: unknown };
    const ns = strategy.namespaced ? sent.metadata?.namespace || defaultNamespace : '';
    const name = sent.metadata?.name ?? '';
    const current = this.items.get(this.key(kind, ns, name));
    if (!current) throw notFound(strategy.resource, name);
    const sentRV = sent.metadata?.resourceVersion;
    if (sentRV && sentRV !== current.metadata.resourceVersion) throw conflict(strategy.resource, name, staleObject);
    const next = structuredClone(current) as Stored & { status?: unknown };
    if (sent.status === undefined) delete next.status;
    else next.status = structuredClone(sent.status);
    // The status is decoded against the kind's schema as the whole object is.
    const decoded = strictDecode<KubeObject>(next, strategy.schemaType, strategy.schema);
    if (decoded.typeErrors.length > 0) {
      throw badRequest(`${kind} in version "${strategy.apiVersion}" cannot be handled as a ${kind}: ${decoded.typeErrors.map((p) => p.message).join('; ')}`);
    }
    const same = canonicalJSON((current as { status?: unknown }).status) === canonicalJSON(next.status);
    if (same || opts.dryRun) return current;
    next.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, next, ns, name);
    this.items.set(this.key(kind, ns, name), next);
    this.publish(kind, Number(next.metadata.resourceVersion), { type: 'MODIFIED', object: next });
    return next;
  }

  /**
   * Deletes an object, or — when finalizers hold it (its own, or those the propagation policy adds:
   * `orphan`, `foregroundDeletion`) — marks it with a deletionTimestamp and keeps it until an update
   * removes the last of them (the generic registry's graceful deletion and finalizers).
   */
  delete(kind: string, namespace: string, name: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    return this.oneAtATime(kind, () => this.deleteNow(kind, namespace, name, opts));
  }

  private async deleteNow(kind: string, namespace: string, name: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    const current = this.items.get(this.key(kind, namespace, name));
    const strategy = this.strategy(kind);
    if (!current) throw notFound(strategy.resource, name);
    strategy.admitDelete?.(current);
    if (opts.dryRun) return current;
    const finalizers = withPolicyFinalizers(current.metadata.finalizers ?? [], opts.propagationPolicy);
    const next = structuredClone(current);
    if (finalizers.length > 0) next.metadata.finalizers = finalizers;
    else delete next.metadata.finalizers;
    if (this.finalizersOf(kind, next).length === 0) return this.remove(kind, current);
    if (!next.metadata.deletionTimestamp) {
      next.metadata.deletionTimestamp = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      next.metadata.deletionGracePeriodSeconds = 0;
    }
    const marked = (strategy.markTerminating?.(next) ?? next) as Stored;
    if (canonicalJSON(marked) === canonicalJSON(current)) return current;
    marked.metadata.resourceVersion = String(++this.rv);
    await this.persist(kind, marked, namespace, name);
    this.items.set(this.key(kind, namespace, name), marked);
    this.publish(kind, Number(marked.metadata.resourceVersion), { type: 'MODIFIED', object: marked });
    return marked;
  }

  /** What still holds an object being deleted: its metadata.finalizers and the kind's own (a Namespace's spec.finalizers). */
  private finalizersOf(kind: string, obj: KubeObject): readonly string[] {
    return [...(obj.metadata?.finalizers ?? []), ...(this.strategy(kind).specFinalizers?.(obj) ?? [])];
  }

  /** Removes an object for good: the file, the entry, a DELETED event. */
  private async remove(kind: string, current: Stored): Promise<KubeObject> {
    const namespace = current.metadata.namespace ?? '';
    const name = current.metadata.name;
    await this.persist(kind, undefined, namespace, name);
    this.items.delete(this.key(kind, namespace, name));
    const gone = { ...current, metadata: { ...current.metadata, resourceVersion: String(++this.rv) } };
    this.publish(kind, Number(gone.metadata.resourceVersion), { type: 'DELETED', object: gone });
    return gone;
  }

  // --- the validating admission of created and updated objects (ResourceQuota) ---

  private createAdmission?: (strategy: ObjectStrategy, obj: KubeObject, opts: CreateOptions) => Promise<void>;

  private updateAdmission?: (strategy: ObjectStrategy, obj: KubeObject, old: KubeObject, opts: CreateOptions) => Promise<void>;

  /** Sets the check every created namespaced object passes after validation and before it is stored (quota). */
  admitCreates(check: (strategy: ObjectStrategy, obj: KubeObject, opts: CreateOptions) => Promise<void>): void {
    this.createAdmission = check;
  }

  /** Sets the check every update of a namespaced object passes after validation and before it is stored (quota). */
  admitUpdates(check: (strategy: ObjectStrategy, obj: KubeObject, old: KubeObject, opts: CreateOptions) => Promise<void>): void {
    this.updateAdmission = check;
  }

  // --- namespaces (the NamespaceLifecycle admission) ---

  private namespacesInUse?: () => readonly string[];

  /**
   * Turns on the NamespaceLifecycle rule for namespaced kinds: an object is created only in a
   * namespace that exists (a stored Namespace, one of the system ones, or one `inUse` names, such as
   * a static pod's) and is not being terminated.
   */
  enforceNamespaceLifecycle(inUse: () => readonly string[]): void {
    this.namespacesInUse = inUse;
  }

  /** 404 for a namespace that does not exist, 403 for one being terminated; nothing when the rule is off. */
  admitToNamespace(strategy: { resource: string }, namespace: string, name: string): void {
    if (!this.namespacesInUse || !this.strategies.has('Namespace')) return;
    const ns = this.get('Namespace', '', namespace);
    if (ns?.metadata?.deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `${strategy.resource} ${JSON.stringify(name)} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          name,
          kind: strategy.resource,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
        },
      );
    }
    if (!ns && !systemNamespaces.includes(namespace) && !this.namespacesInUse().includes(namespace)) throw notFound('namespaces', namespace);
  }

  /**
   * Stores each system namespace not stored yet (kube-apiserver's system namespaces controller), so it
   * has a uid and creationTimestamp of its own; a store that keeps no Namespaces is left alone.
   */
  async createSystemNamespaces(): Promise<void> {
    if (!this.strategies.has('Namespace')) return;
    for (const name of systemNamespaces) {
      if (this.get('Namespace', '', name)) continue;
      await this.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  /** The RuntimeClasses every agent has (name: handler), made on the first start; one deleted is made again on the next. */
  async createBuiltinRuntimeClasses(classes: Readonly<Record<string, string>>): Promise<void> {
    if (!this.strategies.has('RuntimeClass')) return;
    for (const [name, handler] of Object.entries(classes)) {
      if (this.get('RuntimeClass', '', name)) continue;
      await this.create('RuntimeClass', { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler });
    }
  }

  /**
   * Keeps a further kind from now on (a CustomResourceDefinition's objects), or takes the new strategy of
   * one defined before (the CRD changed); its persisted objects are read the first time.
   */
  defineKind(strategy: ObjectStrategy): void {
    const known = this.strategies.get(strategy.kind);
    this.strategies.set(strategy.kind, strategy);
    this.storages.delete(strategy.kind);
    if (!known && this.opts.dir) this.loadKindSync(this.opts.dir, strategy.kind, strategy.resource);
  }

  /** Stops keeping a kind defined by defineKind: its objects are deleted (watchers see them go) and their files removed. */
  async removeKind(kind: string): Promise<void> {
    const strategy = this.strategies.get(kind);
    if (!strategy) return;
    await this.oneAtATime(kind, async () => {
      for (const obj of this.list(kind).items) {
        this.items.delete(this.key(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''));
        this.publish(kind, ++this.rv, { type: 'DELETED', object: { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } } });
      }
      if (this.opts.dir) await rm(join(this.opts.dir, strategy.resource), { recursive: true, force: true });
    });
    this.strategies.delete(kind);
    this.storages.delete(kind);
  }

  /** The kinds kept: kind, plural resource, apiVersion and scope (what a namespace's deletion goes through). */
  kinds(): Array<{ kind: string; resource: string; apiVersion: string; namespaced: boolean }> {
    return [...this.strategies.values()].map((s) => ({ kind: s.kind, resource: s.resource, apiVersion: s.apiVersion, namespaced: s.namespaced }));
  }

  watch(kind: string, resourceVersion: string, onEvent: (ev: WatchEvent<KubeObject>) => void): Watch {
    if (resourceVersion === '' || resourceVersion === '0') {
      for (const object of this.list(kind).items) onEvent({ type: 'ADDED', object });
    } else {
      if (!/^[0-9]+$/.test(resourceVersion)) throw badRequest(`invalid resource version "${resourceVersion}"`);
      const from = Number(resourceVersion);
      if (from < this.floor) throw new ApiError(410, 'Expired', `too old resource version: ${from} (${this.floor})`);
      for (const h of this.history) if (h.kind === kind && h.rv > from) onEvent(h.ev);
    }
    const w: Watcher = { kind, onEvent };
    this.watchers.add(w);
    return { stop: () => void this.watchers.delete(w) };
  }

  /** rv is the event's object's own version: writes of other kinds may have taken later ones while this one was persisted. */
  private publish(kind: string, rv: number, ev: WatchEvent<KubeObject>): void {
    this.history.push({ rv, kind, ev });
    if (this.history.length > historyLimit) this.floor = this.history.splice(0, this.history.length - historyLimit).pop()!.rv;
    for (const w of [...this.watchers]) if (w.kind === kind) w.onEvent(ev);
  }

  // --- the kubelet's ObjectLookup ---

  configMap(namespace: string, name: string): ConfigMap | undefined {
    return this.get('ConfigMap', namespace, name) as ConfigMap | undefined;
  }

  secret(namespace: string, name: string): Secret | undefined {
    return this.get('Secret', namespace, name) as Secret | undefined;
  }

  persistentVolumeClaim(namespace: string, name: string): PersistentVolumeClaim | undefined {
    return this.get('PersistentVolumeClaim', namespace, name) as PersistentVolumeClaim | undefined;
  }

  persistentVolume(name: string): PersistentVolume | undefined {
    return this.get('PersistentVolume', '', name) as PersistentVolume | undefined;
  }

  /** A RuntimeClass, for the kubelet's runtime handler of a pod. */
  runtimeClass(name: string): { handler: string } | undefined {
    return this.get('RuntimeClass', '', name) as { handler: string } | undefined;
  }

  /** The namespace's Services, for the pods' service-link variables. */
  services(namespace: string): ServiceForEnv[] {
    return this.list('Service').items.filter((s) => s.metadata?.namespace === namespace) as ServiceForEnv[];
  }
}

/** The namespaces that always exist (the API server's system namespaces). */
export const systemNamespaces: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * The finalizers a delete's propagation policy asks for (deletionFinalizersForGarbageCollection):
 * Orphan adds `orphan`, Foreground adds `foregroundDeletion`, Background drops both; unset keeps them.
 */
export function withPolicyFinalizers(finalizers: readonly string[], policy: DeleteOptions['propagationPolicy']): string[] {
  if (policy === undefined) return [...finalizers];
  const rest = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
  if (policy === 'Orphan') return [...rest, 'orphan'];
  if (policy === 'Foreground') return [...rest, 'foregroundDeletion'];
  return rest;
}

/** Creates the directory of a persisted store (the agent's root dir owns it). */
export function objectStoreDir(rootDir: string): string {
  const dir = join(rootDir, 'api-objects');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
