// The API paths of the kinds a manifest may hold beyond the core ones kube-client.ts names
// (Services and the workloads: `/apis/apps/v1/namespaces/NS/deployments/NAME`), and the reference
// to an object a command applied.

import type { ManifestObject } from '../config/object-kinds.js';

/** An object applied to the agent: what `run`, `up` and `apply --wait` then wait for and tear down. */
export interface AppliedRef {
  kind: string;
  ns: string;
  name: string;
  /** The object as applied (apiVersion, kind, metadata). */
  object: ManifestObject;
}

/** The cluster-scoped kinds among them (their test holds this equal to the kinds' scope). */
const clusterScoped = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'IngressClass',
  'PriorityClass',
  'StorageClass',
  'PersistentVolume',
  'RuntimeClass',
]);

/** A kind's plural resource as apimachinery's UnsafeGuessKindToResource makes it (`networkpolicies`, `ingresses`, `deployments`). */
function guessResource(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

/** `/apis/<group>/<version>[/namespaces/NS]/<resource>[/NAME]` (`/api/v1/…` for the core group); no namespace = all. */
export function objectPath(apiVersion: string, kind: string, ns: string | undefined, name?: string): string {
  // Every kind of config/object-kinds.ts names its resource so (its test holds them equal): this module
  // leaves the kinds' defaults and validation, and the schema behind them, to the commands that apply.
  const resource = guessResource(kind);
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  // A cluster-scoped kind's path has no namespace whatever ns says.
  const base = ns === undefined || clusterScoped.has(kind) ? root : `${root}/namespaces/${encodeURIComponent(ns)}`;
  return `${base}/${resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}
