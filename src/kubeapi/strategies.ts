// How each kind kept as a plain object is checked on its way into storage: schema type, defaults,
// validation and update rules (the apiserver's per-kind strategy.go, e.g. pkg/registry/core/configmap).
// A new kind stored by the agent's object store adds its strategy here.

import type { ConfigMap, Secret } from '../api/types.js';
import { canonicalJSON, defaultSecret } from '../api/defaults.js';
import type { FieldError } from '../api/field-errors.js';
import { kindTypes } from '../api/schema.js';
import { validateConfigMap, validateSecret } from '../api/validation/index.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

/** ValidateConfigMapUpdate / ValidateSecretUpdate: an immutable object's content may not change. */
function immutableContent(next: KubeObject, old: KubeObject): FieldError[] {
  if ((old as { immutable?: boolean }).immutable !== true) return [];
  const { metadata: _a, ...was } = old;
  const { metadata: _b, ...now } = next;
  return canonicalJSON(was) === canonicalJSON(now) ? [] : [{ type: 'Forbidden', field: 'data', detail: 'field is immutable when `immutable` is set' }];
}

export const configMapStrategy: ObjectStrategy = {
  kind: 'ConfigMap',
  resource: 'configmaps',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.ConfigMap,
  validate: (o) => validateConfigMap(o as ConfigMap),
  validateUpdate: immutableContent,
};

export const secretStrategy: ObjectStrategy = {
  kind: 'Secret',
  resource: 'secrets',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.Secret,
  defaults: (o) => defaultSecret(o as Secret) as KubeObject,
  validate: (o) => validateSecret(o as Secret),
  validateUpdate: immutableContent,
};

/** Every kind the agent's object store keeps. */
export const objectStrategies: readonly ObjectStrategy[] = [configMapStrategy, secretStrategy];
