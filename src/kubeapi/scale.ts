// The autoscaling/v1 Scale of an object with replicas, read and written at the paths its table row
// names (as apiextensions-apiserver's scale subresource reads a CRD's specReplicasPath,
// statusReplicasPath and labelSelectorPath; built-in kinds' ScaleREST serve the same shape).

import type { LabelSelector } from '../api/types.js';
import { selectorString } from '../api/label-selector.js';
import type { KubeObject, WritableObjectMeta } from './backend.js';
import type { ScaleSubresource } from './resource-def.js';

type Obj = KubeObject & { metadata: WritableObjectMeta };

function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** The Scale of an object: its metadata's identity, the desired and observed replicas, the selector. */
export function scaleOf(obj: Obj, paths: ScaleSubresource): KubeObject {
  const m = obj.metadata;
  const at = paths.labelSelectorPath ? getPath(obj, paths.labelSelectorPath) : undefined;
  // A built-in kind's spec.selector is a LabelSelector; the Scale carries its string form.
  const asSelector = (o: object): LabelSelector => (paths.labelSelectorIsMap ? { matchLabels: o as Record<string, string> } : (o as LabelSelector));
  const selector = at !== null && typeof at === 'object' ? selectorString(asSelector(at)) : at;
  const replicas = (path: string) => {
    const v = getPath(obj, path);
    return typeof v === 'number' ? v : 0;
  };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: replicas(paths.specReplicasPath) },
    status: { replicas: replicas(paths.statusReplicasPath), ...(typeof selector === 'string' ? { selector } : {}) },
  } as KubeObject;
}

/** A copy of the object with its desired replicas set. */
export function withReplicas<T extends Obj>(obj: T, paths: ScaleSubresource, replicas: number): T {
  const next = structuredClone(obj);
  const keys = paths.specReplicasPath.split('.');
  let cur = next as unknown as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    if (cur[k] === null || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]!] = replicas;
  return next;
}
