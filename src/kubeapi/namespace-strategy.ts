// How a core/v1 Namespace is kept by the object store (pkg/registry/core/namespace): strict decoding
// against its schema, its defaults and validation (api/namespace.ts), status.phase Active on create,
// and deletion as Terminating until its spec.finalizers are gone.

import { defaultNamespaceObject, validateNamespace, type NamespaceObject } from '../api/namespace.js';
import { kindTypes } from '../api/schema.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

export { kubernetesFinalizer, namespaceNameLabel, defaultNamespaceObject, type NamespaceCondition, type NamespaceObject } from '../api/namespace.js';

export const namespaceStrategy: ObjectStrategy = {
  kind: 'Namespace',
  resource: 'namespaces',
  apiVersion: 'v1',
  namespaced: false,
  schemaType: kindTypes.Namespace,
  defaults: (o) => defaultNamespaceObject(o as NamespaceObject) as KubeObject,
  // PrepareForCreate: a new namespace is Active whatever status the body carries.
  prepareForCreate: (o) => ({ ...o, status: { phase: 'Active' } }) as KubeObject,
  validate: (o) => validateNamespace(o as NamespaceObject),
  specFinalizers: (o) => (o as NamespaceObject).spec?.finalizers ?? [],
  markTerminating: (o) => ({ ...o, status: { ...((o as NamespaceObject).status ?? {}), phase: 'Terminating' } }) as KubeObject,
};
