// core/v1 Namespace as the API server defaults and validates it (pkg/apis/core/v1/defaults.go
// SetDefaults_Namespace and SetDefaults_NamespaceStatus, pkg/registry/core/namespace's strategy,
// pkg/apis/core/validation ValidateNamespace): the `kubernetes.io/metadata.name` label, the
// `kubernetes` finalizer, phase Active, a DNS-1123 label for a name. What the API's store and the
// manifest loader both read.

import type { FieldError } from './field-errors.js';
import { invalid, newPath, required } from './field-errors.js';
import { isDNS1123Label } from './validation/names.js';
import { validateAnnotations, validateLabels } from './validation/pod.js';
import type { ObjectMeta } from './types.js';

export const namespaceNameLabel = 'kubernetes.io/metadata.name';
/** The finalizer the namespace controller removes once the namespace's content is gone. */
export const kubernetesFinalizer = 'kubernetes';

export interface NamespaceObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };
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

/** A Namespace as the API server stores it when created with only its name. */
export function defaultNamespaceObject(input: NamespaceObject): NamespaceObject {
  const ns = structuredClone(input);
  const meta = (ns.metadata ??= {});
  if (meta.name) meta.labels = { ...(meta.labels ?? {}), [namespaceNameLabel]: meta.name };
  ns.spec = { ...(ns.spec ?? {}), finalizers: ns.spec?.finalizers ?? [kubernetesFinalizer] };
  ns.status = { ...(ns.status ?? {}), phase: ns.status?.phase ?? 'Active' };
  return ns;
}

/** ValidateNamespace: the name (a DNS-1123 label), labels and annotations. */
export function validateNamespace(o: NamespaceObject): FieldError[] {
  const meta = o.metadata ?? {};
  const path = newPath('metadata');
  const errs: FieldError[] = [];
  if (!meta.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Label(meta.name).map((detail) => invalid(path.child('name'), meta.name, detail)));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  return errs;
}
