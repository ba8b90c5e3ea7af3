// What the Kubernetes API layer needs from the node it serves: the pods and events it holds, with
// resourceVersions and watches, and the container streams (logs, exec, attach, port-forward).
// The agent implements it; the API layer (discovery, REST, tables, watch framing) is written against it.

import type { Duplex, Readable } from 'node:stream';
import type { Pod } from '../api/types.js';
import type { ExecSession, LogOptions } from '../runtime/streams.js';

/** A core/v1 Event as the API serves it (involvedObject, reason, message, counts, times). */
export type KubeEvent = Record<string, unknown> & {
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string; creationTimestamp?: string };
};

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** A Status failure the API layer returns as is (reason and code as the API server's). */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: {
      name?: string;
      kind?: string;
      group?: string;
      causes?: Array<{ reason?: string; message?: string; field?: string }>;
      retryAfterSeconds?: number;
    },
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Watch {
  stop(): void;
}

export interface ListResult<T> {
  items: T[];
  /** The store's resourceVersion at the time of the list. */
  resourceVersion: string;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface CreateOptions {
  dryRun?: boolean;
  /** Strict (default), Warn or Ignore, as the API server's fieldValidation. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface StreamOptions {
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The kinds kept as plain objects (no lifecycle): ConfigMaps and Secrets. */
export type ObjectKind = 'ConfigMap' | 'Secret';

/** A core/v1 object kept as is (ConfigMap, Secret). */
export type KubeObject = Record<string, unknown> & {
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string; creationTimestamp?: string };
};

/** ConfigMaps and Secrets: create (409 AlreadyExists, 422 Invalid), get, list, replace, delete (404). */
export interface ObjectsBackend {
  list(kind: ObjectKind): ListResult<KubeObject>;
  get(kind: ObjectKind, namespace: string, name: string): KubeObject | undefined;
  create(kind: ObjectKind, obj: unknown, opts?: CreateOptions): Promise<KubeObject>;
  update(kind: ObjectKind, obj: unknown, opts?: CreateOptions): Promise<KubeObject>;
  delete(kind: ObjectKind, namespace: string, name: string): Promise<KubeObject>;
  /** Watches one kind from a resourceVersion, as watchPods; 410 Expired when too old. */
  watch(kind: ObjectKind, resourceVersion: string, onEvent: (ev: WatchEvent<KubeObject>) => void): Watch;
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
  /**
   * Watches pods from a resourceVersion ('' or '0': the current state first, as ADDED events).
   * Throws ApiError 410 (Expired) when the version is older than the history kept.
   */
  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch;

  listEvents(): ListResult<KubeEvent>;
  watchEvents(resourceVersion: string, onEvent: (ev: WatchEvent<KubeEvent>) => void): Watch;

  /** Namespaces in use (every pod's, plus `default`). */
  namespaces(): string[];

  /** The container's log as the kubelet's /containerLogs serves it; 404/400 ApiError as the API server words them. */
  podLog(namespace: string, name: string, opts: LogOptions): Promise<Readable>;
  exec(namespace: string, name: string, opts: StreamOptions): Promise<ExecSession>;
  attach(namespace: string, name: string, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession>;
  /** A connection to the pod's port (the process runtime: 127.0.0.1:port). */
  portForward(namespace: string, name: string, port: number): Promise<Duplex>;

  /** ConfigMaps and Secrets, when the backend keeps them (pods' env and volumes resolve against them). */
  readonly objects?: ObjectsBackend;

  /** CPU (cores) and memory (bytes) per container, for metrics.k8s.io; undefined when not measured. */
  podMetrics(namespace: string, name: string): { timestamp: string; window: string; containers: Array<{ name: string; cpuCores: number; memoryBytes: number }> } | undefined;
}
