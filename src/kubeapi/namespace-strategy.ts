// How a core/v1 Namespace is kept by the object store (pkg/registry/core/namespace): its schema for
// strict decoding, the `kubernetes.io/metadata.name` label and the `kubernetes` finalizer it is given,
// status.phase Active, its validation, and deletion as Terminating until its spec.finalizers are gone.

import type { FieldError } from '../api/field-errors.js';
import { invalid, newPath, required } from '../api/field-errors.js';
import { apiSchema, type Schema } from '../api/schema.js';
import { isDNS1123Label } from '../api/validation/names.js';
import { validateAnnotations, validateLabels } from '../api/validation/pod.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

export const namespaceNameLabel = 'kubernetes.io/metadata.name';
/** The finalizer the namespace controller removes once the namespace's content is gone. */
export const kubernetesFinalizer = 'kubernetes';

export interface NamespaceObject extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: NamespaceCondition[] };
}

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The API schema with core/v1 Namespace (the generated schema holds the workload kinds only). */
const namespaceSchema: Schema = {
  source: apiSchema.source,
  types: {
    ...apiSchema.types,
    'core/v1.Namespace': {
      fields: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
        spec: { type: 'object', ref: 'core/v1.NamespaceSpec' },
        status: { type: 'object', ref: 'core/v1.NamespaceStatus' },
      },
    },
    'core/v1.NamespaceSpec': { fields: { finalizers: { type: 'array', items: { type: 'string' } } } },
    'core/v1.NamespaceStatus': {
      fields: { phase: { type: 'string' }, conditions: { type: 'array', items: { type: 'object', ref: 'core/v1.NamespaceCondition' } } },
    },
    'core/v1.NamespaceCondition': {
      fields: {
        type: { type: 'string' },
        status: { type: 'string' },
        lastTransitionTime: { type: 'string' },
        reason: { type: 'string' },
        message: { type: 'string' },
      },
    },
  },
};

/** A Namespace as the API server stores it when created with only its name. */
export function defaultNamespaceObject(input: KubeObject): NamespaceObject {
  const ns = structuredClone(input) as NamespaceObject;
  const meta = (ns.metadata ??= {});
  if (meta.name) meta.labels = { ...(meta.labels ?? {}), [namespaceNameLabel]: meta.name };
  ns.spec = { ...(ns.spec ?? {}), finalizers: ns.spec?.finalizers ?? [kubernetesFinalizer] };
  ns.status = { ...(ns.status ?? {}), phase: ns.status?.phase ?? 'Active' };
  return ns;
}

function validateNamespace(o: KubeObject): FieldError[] {
  const meta = o.metadata ?? {};
  const path = newPath('metadata');
  const errs: FieldError[] = [];
  if (!meta.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Label(meta.name).map((detail) => invalid(path.child('name'), meta.name, detail)));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  return errs;
}

export const namespaceStrategy: ObjectStrategy = {
  kind: 'Namespace',
  resource: 'namespaces',
  apiVersion: 'v1',
  namespaced: false,
  schemaType: 'core/v1.Namespace',
  schema: namespaceSchema,
  defaults: (o) => defaultNamespaceObject(o),
  // PrepareForCreate: a new namespace is Active whatever status the body carries.
  prepareForCreate: (o) => ({ ...o, status: { phase: 'Active' } }) as KubeObject,
  validate: validateNamespace,
  specFinalizers: (o) => (o as NamespaceObject).spec?.finalizers ?? [],
  markTerminating: (o) => ({ ...o, status: { ...((o as NamespaceObject).status ?? {}), phase: 'Terminating' } }) as KubeObject,
};
