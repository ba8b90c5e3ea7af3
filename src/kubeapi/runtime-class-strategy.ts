// How a node.k8s.io/v1 RuntimeClass is kept by the object store (pkg/registry/node/runtimeclass
// strategy): decoded against its schema, validated by ValidateRuntimeClass, its handler immutable
// (ValidateRuntimeClassUpdate).

import { kindTypes } from '../api/schema.js';
import { validateRuntimeClass, validateRuntimeClassUpdate, type RuntimeClass } from '../api/validation/node.js';
import type { ObjectStrategy } from './backend.js';

export const runtimeClassStrategy: ObjectStrategy = {
  kind: 'RuntimeClass',
  resource: 'runtimeclasses',
  apiVersion: 'node.k8s.io/v1',
  namespaced: false,
  schemaType: kindTypes.RuntimeClass,
  validate: (o) => validateRuntimeClass(o as RuntimeClass),
  validateUpdate: (next, old) => validateRuntimeClassUpdate(next as RuntimeClass, old as RuntimeClass),
};
