// How the object store keeps apiextensions.k8s.io/v1 CustomResourceDefinitions: defaulted, validated
// as upstream validates them, their status (NamesAccepted, Established, acceptedNames, storedVersions)
// given on every write as the naming and establishing controllers give it; the x-kubernetes-validations
// rules this server does not evaluate said in a Warning.
// Upstream: apiextensions-apiserver pkg/registry/customresourcedefinition/strategy.go.

import { apiSchema, type Schema } from '../../api/schema.js';
import type { KubeObject, ObjectStrategy } from '../backend.js';
import { crdStatus, defaultCRD, validateCRD, validateCRDUpdate, type CustomResourceDefinition } from './crd.js';
import { celRulePaths } from './structural-schema.js';

export const crdApiVersion = 'apiextensions.k8s.io/v1';
const crdType = 'apiextensions/v1.CustomResourceDefinition';

/** The CRD's decoding schema: its metadata checked as every object's, spec and status by validateCRD. */
const crdSchema: Schema = {
  source: apiSchema.source,
  types: {
    ...apiSchema.types,
    [crdType]: {
      fields: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
        spec: { type: 'any' },
        status: { type: 'any' },
      },
    },
  },
};

function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The CRD strategy, with the clock its conditions' transition times are read from. */
export function customResourceDefinitionStrategy(now: () => number = Date.now): ObjectStrategy {
  const withStatus = (o: KubeObject, read: (kind: string) => readonly KubeObject[], old?: KubeObject): KubeObject => {
    const crd = o as CustomResourceDefinition;
    crd.status = crdStatus(crd, read('CustomResourceDefinition') as CustomResourceDefinition[], timestamp(now()), old as CustomResourceDefinition | undefined);
    return crd;
  };
  return {
    kind: 'CustomResourceDefinition',
    resource: 'customresourcedefinitions',
    apiVersion: crdApiVersion,
    namespaced: false,
    schemaType: crdType,
    schema: crdSchema,
    defaults: (o) => defaultCRD(o as CustomResourceDefinition),
    validate: (o) => validateCRD(o as CustomResourceDefinition),
    validateUpdate: (next, old) => validateCRDUpdate(next as CustomResourceDefinition, old as CustomResourceDefinition),
    admit: withStatus,
  };
}

/** The Warning a CRD with x-kubernetes-validations gets: its CEL rules are stored but not evaluated here. */
export function crdWarnings(obj: KubeObject): string[] {
  if (obj.kind !== 'CustomResourceDefinition' || obj.apiVersion !== crdApiVersion) return [];
  const crd = obj as CustomResourceDefinition;
  const out: string[] = [];
  for (const v of crd.spec?.versions ?? []) {
    const rules = celRulePaths(v.schema?.openAPIV3Schema);
    if (rules.length > 0)
      out.push(`version ${v.name}: the x-kubernetes-validations rules at ${rules.join(', ')} are not evaluated by this server (no CEL evaluator)`);
  }
  return out;
}
