// What one row of the resource table says about a kind: group/version/kind, resource and short names,
// scope, verbs, storage, field selectors, Table columns, strategic-merge keys, and its subresources
// (status, scale, connect-style ones such as pods/log). The generic REST handler (rest.ts) and
// discovery (discovery.ts) read nothing else. Upstream: the APIResource of apimachinery's discovery
// types and the per-kind REST storage the apiserver's registry (registry/generic/registry.Store) carries.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Table, TableOptions } from '../printers/tables.js';
import type { KubeBackend, KubeObject, Storage } from './backend.js';
import type { MergeSchema } from './patch.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** What the table's storage and printers may read of the server. */
export interface ApiContext {
  /** ms since epoch, for Table ages and metrics timestamps. */
  now(): number;
}

/** A request addressed to one object's connect-style subresource (pods/log, pods/exec). */
export interface ConnectRequest<T> {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  namespace: string;
  name: string;
  /** The object, already found. */
  object: T;
}

/** A subresource served by its own code (the apiserver's rest.Connecter, or a Getter of another kind). */
export interface ConnectSubresource<T> {
  /** The kind discovery names (`PodExecOptions`; `Pod` for pods/log). */
  kind: string;
  /** get (GET) and/or create (POST). */
  verbs: ReadonlyArray<'get' | 'create'>;
  /** The group and version of the kind when not the resource's (pods/eviction: policy/v1 Eviction). */
  groupVersion?: { group: string; version: string };
  serve(r: ConnectRequest<T>, backend: KubeBackend): void | Promise<void>;
}

/** Where a kind keeps its replica counts, for the autoscaling/v1 Scale subresource (as a CRD's scale subresource names them). */
export interface ScaleSubresource {
  /** Dot path of the desired replicas, e.g. `spec.replicas`. */
  specReplicasPath: string;
  /** Dot path of the observed replicas, e.g. `status.replicas`. */
  statusReplicasPath: string;
  /** Dot path of the label selector: serialized (a CRD's `status.selector`) or a LabelSelector (`spec.selector`). */
  labelSelectorPath?: string;
  /** The selector at labelSelectorPath is a plain map of labels (a ReplicationController's), not a LabelSelector. */
  labelSelectorIsMap?: true;
}

/**
 * A further version a kind is served at beside the stored one (autoscaling/v1 beside v2), its objects
 * converted on the way in and out (the apiserver's conversion through the internal version).
 */
export interface VersionConversion {
  version: string;
  /** The stored object as this version serves it. */
  fromStored(obj: KubeObject): KubeObject;
  /** An object of this version as stored (its Table is printed from that; writes are converted by the storage's strategy). */
  toStored(obj: KubeObject): KubeObject;
}

export interface ResourceDef<T extends KubeObject = KubeObject> {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The plural resource name in paths (`pods`). */
  resource: string;
  singular: string;
  shortNames?: readonly string[];
  categories?: readonly string[];
  namespaced: boolean;
  /** The verbs served on the resource itself; a verb not listed is 405. */
  verbs: readonly Verb[];
  /** The kind's storage on this backend; undefined when the backend does not keep the kind (404). */
  storage(backend: KubeBackend, ctx: ApiContext): Storage<T> | undefined;
  /** Field selectors beyond metadata.name and metadata.namespace (which every kind has), in the order errors list them. */
  fieldSelectors?: Readonly<Record<string, (obj: T) => string>>;
  /** The kind's Table (kubectl get's columns); without one, a Table request gets the objects. */
  table?(items: readonly T[], opts: TableOptions): Table;
  /** Strategic-merge patch keys (ObjectMeta's when unset). */
  mergeSchema?: MergeSchema;
  /** DELETE answers with the object (as it is now, or as it was) instead of a Success Status (Store.ReturnDeletedObject). */
  returnDeletedObject?: boolean;
  /** The status subresource's verbs: get; update and patch replace the status alone (storage.updateStatus). */
  status?: ReadonlyArray<'get' | 'patch' | 'update'>;
  scale?: ScaleSubresource;
  /** Further subresources by name (log, exec, attach, portforward). */
  connect?: Readonly<Record<string, ConnectSubresource<T>>>;
  /** The other versions the kind is served at (the table lists a row for each: versions.ts servedVersions). */
  otherVersions?: readonly VersionConversion[];
  /** A CustomResourceDefinition's resource: merge and JSON patches only (a strategic merge patch is 415, as upstream). */
  customResource?: true;
}

/** The group/version an object of the kind carries in apiVersion (`v1`, `apps/v1`). */
export function groupVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** Declares a table row with its object type checked and kept (the table holds rows of many kinds). */
export function resource<T extends KubeObject>(def: ResourceDef<T>): ResourceDef {
  return def as unknown as ResourceDef;
}
