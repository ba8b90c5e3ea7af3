// What the Kubernetes API layer needs from the node it serves: a storage per kind (list, get, create,
// update, delete, watch, with resourceVersions; the apiserver's registry/rest interfaces), the pods
// with their lifecycle, events, and the container streams (logs, exec, attach, port-forward).
// The agent implements it; the API layer (discovery, REST, tables, watch framing) is written against it.

import type { Duplex, Readable } from 'node:stream';
import type { ObjectMeta, Pod } from '../api/types.js';
import type { Event } from '../api/types.js';
import type { FieldError } from '../api/field-errors.js';
import type { Schema } from '../api/schema.js';
import type { ExecSession, LogOptions } from '../runtime/streams.js';
import type { ServiceAccountTokens } from './serviceaccount/tokens.js';
import type { UserInfo } from '../http/router.js';

/** ObjectMeta as the server writes it (kubernetes-types declares it read-only). */
export type WritableObjectMeta = { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };

/** Any API object: what the generic handler reads of it is its metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: WritableObjectMeta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface Watch {
  stop(): void;
}

export interface ListResult<T> {
  items: T[];
  /** The store's resourceVersion at the time of the list; absent for lists that have none (metrics). */
  resourceVersion?: string;
}

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** What becomes of dependents (ownerReferences); checked by the handler, applied by stores that keep dependents. */
  propagationPolicy?: PropagationPolicy;
  dryRun?: boolean;
}

export interface CreateOptions {
  dryRun?: boolean;
  /** Strict (the default of callers inside the agent), Warn or Ignore, as the API server's fieldValidation; an API request without one is Warn (query.ts). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Paths of the keys the request's JSON body repeats (field-validation.ts applies fieldValidation to them). */
  duplicateFields?: readonly string[];
  /** Receives what fieldValidation=Warn reports, for the response's Warning headers. */
  warn?(message: string): void;
  /** Who makes the request: the reviews of authorization.k8s.io answer for them, SelfSubjectReview names them. */
  user?: UserInfo;
  /** The written object's managedFields, from the object about to be stored and the stored one (kubeapi/managed-fields.ts); absent: the stored ones are kept. */
  managedFields?(next: KubeObject, current: KubeObject | undefined): unknown[];
}

/**
 * One kind's storage (the apiserver's rest.Getter, Lister, Creater, Updater, GracefulDeleter,
 * Watcher): what a storage lacks, the kind does not serve. Cluster-scoped kinds use namespace ''.
 * Errors are ApiErrors (404, 409 AlreadyExists/Conflict, 422 Invalid, 410 Expired for watches).
 */
export interface Storage<T extends KubeObject = KubeObject> {
  list(): ListResult<T>;
  get(namespace: string, name: string): T | undefined;
  /** Decodes, defaults, validates and stores; resolves to the stored object. */
  create?(obj: T, opts: CreateOptions): Promise<T>;
  /** Replaces the object; 409 Conflict on a stale metadata.resourceVersion. */
  update?(obj: T, opts: CreateOptions): Promise<T>;
  /** Replaces the object's status alone (the status subresource). */
  updateStatus?(obj: T, opts: CreateOptions): Promise<T>;
  /** Deletes (gracefully where the kind has a lifecycle); resolves to the object as it is now or was when gone. */
  delete?(namespace: string, name: string, opts: DeleteOptions): Promise<T>;
  /** Watches from a resourceVersion ('' or '0': the current state first, as ADDED events); 410 Expired when too old. */
  watch?(resourceVersion: string, onEvent: (ev: WatchEvent<T>) => void): Watch;
}

/**
 * How a kind kept as a plain object is checked on the way in (the apiserver's RESTCreateStrategy and
 * RESTUpdateStrategy): its schema type for strict decoding, its defaults and its validation.
 */
export interface ObjectStrategy {
  kind: string;
  /** The plural resource name (`configmaps`): Status details and the persisted directory. */
  resource: string;
  apiVersion: string;
  /** Namespaced kinds are kept per namespace (`default` when the body names none); cluster-scoped ones under ''. */
  namespaced: boolean;
  /** The type strict decoding checks the body against (api/schema.ts). */
  schemaType: string;
  /** The schema that holds schemaType, when not the API schema (a kind the generated schema lacks). */
  schema?: Schema;
  /**
   * Further versions an object may be written in (autoscaling/v1 beside v2), by apiVersion: the type
   * it is strictly decoded against, and its conversion to the stored version.
   */
  versions?: Readonly<Record<string, { schemaType: string; toStored(obj: KubeObject): KubeObject }>>;
  /** Fills in defaults after decoding. */
  defaults?(obj: KubeObject): KubeObject;
  /** What create adds once the object has its uid, before validation (PrepareForCreate: a Job's generated selector). */
  prepareForCreate?(obj: KubeObject): KubeObject;
  /** What an update keeps or derives from the stored version (PrepareForUpdate: a DaemonSet's template generation). */
  prepareForUpdate?(next: KubeObject, old: KubeObject): KubeObject;
  /**
   * The kind has a status subresource: updates keep the stored status, updateStatus writes the status
   * alone, and metadata.generation counts changes of the spec (the workloads' PrepareForUpdate).
   */
  statusSubresource?: boolean;
  /** The kind's registry keeps no metadata.generation (PersistentVolumes and their claims). */
  noGeneration?: boolean;
  /**
   * The status a created object of a kind with a status subresource starts with: what the API
   * server's PrepareForCreate leaves, as its JSON shows it (the fields without omitempty, at zero).
   */
  initialStatus?(creationTimestamp: string): Record<string, unknown>;
  validate(obj: KubeObject): FieldError[];
  /** The rules of a change (immutability); empty when allowed. */
  validateUpdate?(next: KubeObject, old: KubeObject): FieldError[];
  /**
   * Fills in what the server assigns from what is stored (a Service's ClusterIP and NodePorts: the
   * registry's BeginCreate/BeginUpdate), after validation; old is the stored version on update.
   */
  allocate?(obj: KubeObject, old: KubeObject | undefined, stored: readonly KubeObject[]): FieldError[];
  /** Refuses a deletion the kind forbids (a system PriorityClass); throws the ApiError. */
  admitDelete?(obj: KubeObject): void;
  /** Gives back what allocate chose for an object that is not stored after all (a dry run): nothing stays allocated. */
  release?(obj: KubeObject): void;
  /**
   * Admission with the store's kinds at hand, after defaults and validation (the DefaultStorageClass
   * admission on create; PersistentVolumeClaimResize on update, old set; the Priority plugin's single
   * global default PriorityClass): the object to store, or an ApiError.
   */
  admit?(obj: KubeObject, read: (kind: string) => readonly KubeObject[], old?: KubeObject): KubeObject;
  /** Finalizers the kind keeps outside metadata.finalizers (a Namespace's spec.finalizers): a deleted object stays until they are gone too. */
  specFinalizers?(obj: KubeObject): readonly string[];
  /** What a deletion held by finalizers marks beside the deletionTimestamp (a Namespace's phase Terminating). */
  markTerminating?(obj: KubeObject): KubeObject;
}

/** Kinds kept as plain objects (no lifecycle): ConfigMaps, Secrets and whatever has an ObjectStrategy. */
export interface ObjectsBackend {
  /** The storage of one kind, undefined when the store does not keep it. */
  storage(kind: string): Storage | undefined;
  /** The kinds kept: kind, plural resource, apiVersion and scope (what a namespace's deletion goes through). */
  kinds?(): Array<{ kind: string; resource: string; apiVersion: string; namespaced: boolean }>;
  /** Keeps a kind defined at run time (a CustomResourceDefinition's), where the store can. */
  defineKind?(strategy: ObjectStrategy): void;
  /** Stops keeping a kind defined at run time, deleting its objects. */
  removeKind?(kind: string): Promise<void>;
}

export interface StreamOptions {
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface KubeBackend {
  readonly nodeName: string;

  /** Pods with metadata.resourceVersion set, and their current status. */
  listPods(): ListResult<Pod>;
  getPod(namespace: string, name: string): Pod | undefined;
  /** Validates (422 ApiError with causes), defaults, admits and starts the pod; resolves to the stored pod. */
  createPod(pod: Pod, opts?: CreateOptions): Promise<Pod>;
  /** Replaces the pod; 409 Conflict on a stale metadata.resourceVersion, 422 for a forbidden change. */
  updatePod(pod: Pod, opts?: CreateOptions): Promise<Pod>;
  /** Starts graceful deletion; resolves to the pod as it is now (with deletionTimestamp), or as it was when gone. */
  deletePod(namespace: string, name: string, opts?: DeleteOptions): Promise<Pod>;
  /** pods/eviction: deletePod with the DisruptionTarget condition (EvictionByEvictionAPI) where the backend keeps pod status; deletePod otherwise. */
  evictPod?(namespace: string, name: string, opts?: DeleteOptions): Promise<Pod>;
  /**
   * Watches pods from a resourceVersion ('' or '0': the current state first, as ADDED events).
   * Throws ApiError 410 (Expired) when the version is older than the history kept.
   */
  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch;

  /** core/v1 Events with metadata.resourceVersion and uid set. */
  listEvents(): ListResult<Event>;
  watchEvents(resourceVersion: string, onEvent: (ev: WatchEvent<Event>) => void): Watch;

  /** Namespaces in use (every pod's, plus `default`). */
  namespaces(): string[];

  /** The container's log as the kubelet's /containerLogs serves it; 404/400 ApiError as the API server words them. */
  podLog(namespace: string, name: string, opts: LogOptions): Promise<Readable>;
  exec(namespace: string, name: string, opts: StreamOptions): Promise<ExecSession>;
  attach(namespace: string, name: string, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession>;
  /** A connection to the pod's port (the process runtime: 127.0.0.1:port). */
  portForward(namespace: string, name: string, port: number): Promise<Duplex>;

  /**
   * What a client is told beside a write that succeeded (create, update, patch of any kind), as the API
   * server's WarningsOnCreate/WarningsOnUpdate and admission warnings: each text a Warning header.
   */
  writeWarnings?(written: KubeObject): string[];

  /** Kinds kept as plain objects, when the backend keeps them (pods' env and volumes resolve against ConfigMaps and Secrets). */
  readonly objects?: ObjectsBackend;

  /** Bound service-account tokens (serviceaccounts/token, TokenReview), where the backend signs them. */
  readonly serviceAccountTokens?: ServiceAccountTokens;

  /** CPU (cores) and memory (bytes) per container, for metrics.k8s.io; undefined when not measured. */
  podMetrics(
    namespace: string,
    name: string,
  ): { timestamp: string; window: string; containers: Array<{ name: string; cpuCores: number; memoryBytes: number }> } | undefined;
}
