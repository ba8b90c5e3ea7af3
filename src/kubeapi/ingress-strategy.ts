// How networking.k8s.io/v1 Ingresses and IngressClasses are kept by the object store
// (pkg/registry/networking/ingress, pkg/registry/networking/ingressclass): validation, the Ingress's
// status subresource (the ingress controller's loadBalancer), an IngressClass's immutable controller,
// and the DefaultIngressClass admission plugin (plugin/pkg/admission/network/defaultingressclass): an
// Ingress created with neither spec.ingressClassName nor the kubernetes.io/ingress.class annotation
// gets the class marked default.

import { kindTypes } from '../api/schema.js';
import {
  defaultIngressClass,
  defaultIngressClassAnnotation,
  ingressClassAnnotation,
  validateIngress,
  validateIngressClass,
  validateIngressClassUpdate,
  type Ingress,
  type IngressClass,
} from '../api/validation/networking.js';
import { ApiError } from '../http/status.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

/** The IngressClass marked default; undefined when none is; a Forbidden error when several are (getDefaultClass). */
export function defaultClassOf(classes: readonly KubeObject[]): string | undefined {
  const marked = classes.filter((c) => c.metadata?.annotations?.[defaultIngressClassAnnotation] === 'true');
  if (marked.length > 1) {
    const message = `${marked.length} default IngressClasses were found, only 1 allowed`;
    throw new ApiError(403, 'Forbidden', `ingresses.networking.k8s.io is forbidden: Internal error occurred: ${message}`, {
      group: 'networking.k8s.io',
      kind: 'ingresses',
    });
  }
  return marked[0]?.metadata?.name;
}

/** The DefaultIngressClass admission: the default class for an Ingress that names none. */
export function admitDefaultIngressClass(ing: Ingress, classes: readonly KubeObject[]): Ingress {
  if (ing.spec?.ingressClassName !== undefined && ing.spec.ingressClassName !== null) return ing;
  if (ing.metadata?.annotations && Object.hasOwn(ing.metadata.annotations, ingressClassAnnotation)) return ing;
  const name = defaultClassOf(classes);
  if (name === undefined) return ing;
  return { ...ing, spec: { ...ing.spec, ingressClassName: name } };
}

/** The Ingress strategy; classes lists the stored IngressClasses (for the DefaultIngressClass admission). */
export function ingressStrategy(classes: () => readonly KubeObject[]): ObjectStrategy {
  return {
    kind: 'Ingress',
    resource: 'ingresses',
    apiVersion: 'networking.k8s.io/v1',
    namespaced: true,
    schemaType: kindTypes.Ingress,
    statusSubresource: true,
    initialStatus: () => ({ loadBalancer: {} }),
    prepareForCreate: (o) => admitDefaultIngressClass(o as Ingress, classes()) as KubeObject,
    validate: (o) => validateIngress(o as Ingress),
  };
}

export const ingressClassStrategy: ObjectStrategy = {
  kind: 'IngressClass',
  resource: 'ingressclasses',
  apiVersion: 'networking.k8s.io/v1',
  namespaced: false,
  schemaType: kindTypes.IngressClass,
  defaults: (o) => defaultIngressClass(o as IngressClass) as KubeObject,
  validate: (o) => validateIngressClass(o as IngressClass),
  validateUpdate: (next, old) => validateIngressClassUpdate(next as IngressClass, old as IngressClass),
};
