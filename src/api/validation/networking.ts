// Validation and defaults of networking.k8s.io/v1 Ingresses and IngressClasses
// (pkg/apis/networking/validation ValidateIngressCreate, ValidateIngressUpdate, ValidateIngressClass,
// ValidateIngressClassUpdate; pkg/apis/networking/v1 defaults.go): hosts (DNS names, `*.` wildcards, no
// IP addresses), paths by pathType, backends (a Service by port number or name, or a resource), TLS
// secret names, and the class's controller and parameters.

import type {
  HTTPIngressPath,
  Ingress,
  IngressBackend,
  IngressClass,
  IngressClassParametersReference,
  IngressRule,
  IngressSpec,
} from 'kubernetes-types/networking/v1.js';
import type { TypedLocalObjectReference } from 'kubernetes-types/core/v1.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors, tooLong } from '../field-errors.js';
import type { ObjectMeta } from '../types.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum, maxLenError, regexError } from './names.js';
import { validateAnnotations, validateLabels, validateObjectMeta } from './pod.js';
import { isDNS1035Label } from './service.js';

export type { Ingress, IngressBackend, IngressClass, IngressRule, IngressSpec, HTTPIngressPath };

/** The annotation that names an Ingress's class in place of spec.ingressClassName (networking/v1beta1 AnnotationIngressClass). */
export const ingressClassAnnotation = 'kubernetes.io/ingress.class';
/** The annotation that marks an IngressClass the default (networking/v1 AnnotationIsDefaultIngressClass). */
export const defaultIngressClassAnnotation = 'ingressclass.kubernetes.io/is-default-class';

export const pathTypes = ['Exact', 'ImplementationSpecific', 'Prefix'] as const;
const invalidPathSequences = ['//', '/./', '/../', '%2f', '%2F'];
const invalidPathSuffixes = ['/..', '/.'];
const maxLenIngressClassController = 250;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const wildcardFmt = `\\*\\.${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const wildcardRe = new RegExp(`^${wildcardFmt}$`);
const wildcardErrMsg =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

/** IsWildcardDNS1123Subdomain. */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 253) errs.push(maxLenError(253));
  if (!wildcardRe.test(value)) errs.push(regexError(wildcardErrMsg, wildcardFmt, '*.example.com'));
  return errs;
}

/** Whether a string parses as an IPv4 or IPv6 address (netutils.ParseIPSloppy). */
function isIP(s: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(s)) return s.split('.').every((o) => Number(o) <= 255);
  return s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s);
}

/** content.IsPathSegmentName: a name that may be a path segment. */
function isPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

const httpPathFmt = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

/** IsDomainPrefixedPath: `acme.io/foo`. */
function validateDomainPrefixedPath(path: FieldPath, value: string): FieldError[] {
  if (!value) return [required(path, '')];
  const slash = value.indexOf('/');
  const host = slash < 0 ? value : value.slice(0, slash);
  const rest = slash < 0 ? '' : value.slice(slash + 1);
  if (slash < 0 || !host || !rest) return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => invalid(path, host, m));
  if (!new RegExp(`^${httpPathFmt}$`).test(rest)) errs.push(invalid(path, rest, regexError('Invalid path', httpPathFmt)));
  return errs;
}

/** A Go nil slice as %#v prints it in a field error. */
const goRules = (rules: IngressRule[] | undefined) => ({
  toString: () => (rules?.length ? `[]networking.IngressRule{…}` : '[]networking.IngressRule(nil)'),
});

function validateHost(host: string, path: FieldPath): FieldError[] {
  if (host.includes('*')) return isWildcardDNS1123Subdomain(host).map((m) => invalid(path, host, m));
  return isDNS1123Subdomain(host).map((m) => invalid(path, host, m));
}

function validateTypedLocalObjectReference(ref: TypedLocalObjectReference, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (ref.apiGroup !== undefined) errs.push(...isDNS1123Subdomain(ref.apiGroup).map((m) => invalid(path.child('apiGroup'), ref.apiGroup, m)));
  if (!ref.kind) errs.push(required(path.child('kind'), ''));
  else errs.push(...isPathSegmentName(ref.kind).map((m) => invalid(path.child('kind'), ref.kind, m)));
  if (!ref.name) errs.push(required(path.child('name'), ''));
  else errs.push(...isPathSegmentName(ref.name).map((m) => invalid(path.child('name'), ref.name, m)));
  return errs;
}

/** validateIngressBackend: a resource or a Service (by port name or number), not both. */
export function validateIngressBackend(backend: IngressBackend, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (backend.resource && backend.service) return [invalid(path, '', 'cannot set both resource and service backends')];
  if (backend.resource) return validateTypedLocalObjectReference(backend.resource, path.child('resource'));
  if (!backend.service) return [invalid(path, '', 'resource or service backend is required')];
  const svc = backend.service;
  if (!svc.name) errs.push(required(path.child('service', 'name'), ''));
  else errs.push(...isDNS1035Label(svc.name).map((m) => invalid(path.child('service', 'name'), svc.name, m)));
  const name = svc.port?.name ?? '';
  const number = svc.port?.number ?? 0;
  if (name && number) errs.push(invalid(path, '', 'cannot set both port name & port number'));
  else if (name) errs.push(...isValidPortName(name).map((m) => invalid(path.child('service', 'port', 'name'), name, m)));
  else if (number) errs.push(...isValidPortNum(number).map((m) => invalid(path.child('service', 'port', 'number'), number, m)));
  else errs.push(required(path, 'port name or number is required'));
  return errs;
}

/** validateHTTPIngressPath: the pathType is required; Exact and Prefix paths are absolute and clean. */
function validateHTTPIngressPath(p: HTTPIngressPath, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (p.pathType === undefined || p.pathType === null) return [required(path.child('pathType'), 'pathType must be specified')];
  const value = p.path ?? '';
  if (p.pathType === 'Exact' || p.pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(invalid(path.child('path'), value, 'must be an absolute path'));
    for (const seq of invalidPathSequences) if (value.includes(seq)) errs.push(invalid(path.child('path'), value, `must not contain '${seq}'`));
    for (const suffix of invalidPathSuffixes) if (value.endsWith(suffix)) errs.push(invalid(path.child('path'), value, `cannot end with '${suffix}'`));
  } else if (p.pathType === 'ImplementationSpecific') {
    if (value && !value.startsWith('/')) errs.push(invalid(path.child('path'), value, 'must be an absolute path'));
  } else {
    errs.push(notSupported(path.child('pathType'), p.pathType, pathTypes));
  }
  errs.push(...validateIngressBackend(p.backend ?? {}, path.child('backend')));
  return errs;
}

function validateIngressRules(rules: IngressRule[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const p = path.index(i);
    const host = rule.host ?? '';
    if (host) {
      if (isIP(host)) errs.push(invalid(p.child('host'), host, 'must be a DNS name, not an IP address'));
      errs.push(...validateHost(host, p.child('host')));
    }
    if (rule.http) {
      const paths = rule.http.paths ?? [];
      if (paths.length === 0) errs.push(required(p.child('http', 'paths'), ''));
      paths.forEach((hp, j) => errs.push(...validateHTTPIngressPath(hp, p.child('http', 'paths').index(j))));
    }
  });
  return errs;
}

/** ValidateIngressSpec. */
export function validateIngressSpec(spec: IngressSpec | undefined, path: FieldPath = newPath('spec')): FieldError[] {
  const s = spec ?? {};
  const errs: FieldError[] = [];
  if (!s.rules?.length && !s.defaultBackend) errs.push(invalid(path, goRules(s.rules), 'either `defaultBackend` or `rules` must be specified'));
  if (s.defaultBackend) errs.push(...validateIngressBackend(s.defaultBackend, path.child('defaultBackend')));
  if (s.rules?.length) errs.push(...validateIngressRules(s.rules, path.child('rules')));
  (s.tls ?? []).forEach((tls, i) => {
    const p = path.child('tls').index(i);
    (tls.hosts ?? []).forEach((h, j) => errs.push(...validateHost(h, p.child('hosts').index(j))));
    if (tls.secretName) errs.push(...isDNS1123Subdomain(tls.secretName).map((m) => invalid(p.child('secretName'), tls.secretName, m)));
  });
  if (s.ingressClassName !== undefined && s.ingressClassName !== null)
    errs.push(...isDNS1123Subdomain(s.ingressClassName).map((m) => invalid(path.child('ingressClassName'), s.ingressClassName, m)));
  return errs;
}

/** ValidateIngressCreate: metadata, spec, and the class annotation agreeing with ingressClassName. */
export function validateIngress(ing: Ingress): FieldError[] {
  const errs = [...validateObjectMeta(ing.metadata), ...validateIngressSpec(ing.spec)];
  const annotation = ing.metadata?.annotations?.[ingressClassAnnotation];
  const className = ing.spec?.ingressClassName;
  if (annotation !== undefined && className !== undefined && className !== null && annotation !== className)
    errs.push(invalid(newPath('annotations').child(ingressClassAnnotation), annotation, 'must match `ingressClassName` when both are specified'));
  return sortFieldErrors(errs);
}

/** ValidateIngressUpdate: the spec's rules (the annotation check is create's alone). */
export function validateIngressUpdate(next: Ingress): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(next.metadata), ...validateIngressSpec(next.spec)]);
}

/** ValidateObjectMeta of a cluster-scoped object whose name is a DNS-1123 subdomain. */
function validateClusterObjectMeta(meta: ObjectMeta | undefined, path: FieldPath = newPath('metadata')): FieldError[] {
  const m = meta ?? {};
  const errs: FieldError[] = [];
  if (!m.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(m.name).map((msg) => invalid(path.child('name'), m.name, msg)));
  if (m.namespace) errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  errs.push(...validateLabels(m.labels, path.child('labels')));
  errs.push(...validateAnnotations(m.annotations, path.child('annotations')));
  return errs;
}

function validateParametersReference(params: IngressClassParametersReference | undefined, path: FieldPath): FieldError[] {
  if (!params) return [];
  const errs: FieldError[] = [];
  if (params.apiGroup !== undefined) errs.push(...isDNS1123Subdomain(params.apiGroup).map((m) => invalid(path.child('apiGroup'), params.apiGroup, m)));
  if (!params.kind) errs.push(required(path.child('kind'), ''));
  else errs.push(...isPathSegmentName(params.kind).map((m) => invalid(path.child('kind'), params.kind, m)));
  if (!params.name) errs.push(required(path.child('name'), ''));
  else errs.push(...isPathSegmentName(params.name).map((m) => invalid(path.child('name'), params.name, m)));
  if (params.scope === undefined) return [...errs, required(path.child('scope'), '')];
  if (params.scope !== 'Cluster' && params.scope !== 'Namespace') return [...errs, notSupported(path.child('scope'), params.scope, ['Cluster', 'Namespace'])];
  if (params.scope === 'Namespace') {
    if (params.namespace === undefined) errs.push(required(path.child('namespace'), "`parameters.scope` is set to 'Namespace'"));
    else errs.push(...isDNS1123Label(params.namespace).map((m) => invalid(path.child('namespace'), params.namespace, m)));
  }
  if (params.scope === 'Cluster' && params.namespace !== undefined) errs.push(forbidden(path.child('namespace'), "`parameters.scope` is set to 'Cluster'"));
  return errs;
}

/** ValidateIngressClass: a domain-prefixed controller of at most 250 characters, and the parameters. */
export function validateIngressClass(ic: IngressClass): FieldError[] {
  const errs = validateClusterObjectMeta(ic.metadata);
  const spec = newPath('spec');
  const controller = ic.spec?.controller ?? '';
  if (!controller) errs.push(required(spec.child('controller'), ''));
  else {
    if (controller.length > maxLenIngressClassController) errs.push(tooLong(spec.child('controller'), '', maxLenIngressClassController));
    errs.push(...validateDomainPrefixedPath(spec.child('controller'), controller));
  }
  errs.push(...validateParametersReference(ic.spec?.parameters, spec.child('parameters')));
  return sortFieldErrors(errs);
}

/** ValidateIngressClassUpdate: the controller is immutable. */
export function validateIngressClassUpdate(next: IngressClass, old: IngressClass): FieldError[] {
  if ((next.spec?.controller ?? '') === (old.spec?.controller ?? '')) return [];
  return [invalid(newPath('spec', 'controller'), next.spec?.controller ?? '', 'field is immutable')];
}

/** SetDefaults_IngressClass: parameters without a scope are cluster-scoped. */
export function defaultIngressClass<T extends IngressClass>(ic: T): T {
  if (ic.spec?.parameters && ic.spec.parameters.scope === undefined) ic.spec.parameters.scope = 'Cluster';
  return ic;
}
