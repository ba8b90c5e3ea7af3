// Pod validation as the API server runs it on create (ValidatePodCreate: object metadata, then
// ValidatePodSpec), returning every error at once, sorted by field path; plus duplicate detection
// across the pods of one input.

import type { Container, ObjectMeta, Pod } from '../types.js';
import {
  type FieldError,
  dedupeFieldErrors,
  duplicate,
  forbidden,
  invalid,
  newPath,
  type FieldPath,
  notSupported,
  required,
  sortFieldErrors,
  tooLong,
} from '../field-errors.js';
import { inclusiveRangeError, isDNS1123Label, maxLenError, regexError, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';
import { validateContainerCommon, validateContainers, validateDNS1123Label, validateInitContainers } from './container.js';
import { validateResourceRequirements } from './resources.js';

const totalAnnotationSizeLimit = 256 * 1024;

export function validateLabels(labels: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    errs.push(...isQualifiedName(k).map((m) => invalid(path, k, m)));
    errs.push(...isValidLabelValue(v).map((m) => invalid(path, v, m)));
  }
  return errs;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    errs.push(...isQualifiedName(k.toLowerCase()).map((m) => invalid(path, k, m)));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > totalAnnotationSizeLimit) errs.push(tooLong(path, '', totalAnnotationSizeLimit));
  return errs;
}

/** ValidateObjectMeta for a namespaced object whose name must be a DNS-1123 subdomain. */
export function validateObjectMeta(meta: ObjectMeta | undefined, path: FieldPath = newPath('metadata')): FieldError[] {
  const errs: FieldError[] = [];
  const m = meta ?? {};
  if (!m.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(m.name).map((msg) => invalid(path.child('name'), m.name, msg)));
  if (!m.namespace) errs.push(required(path.child('namespace'), ''));
  else errs.push(...isDNS1123Label(m.namespace).map((msg) => invalid(path.child('namespace'), m.namespace, msg)));
  errs.push(...validateLabels(m.labels, path.child('labels')));
  errs.push(...validateAnnotations(m.annotations, path.child('annotations')));
  return errs;
}

function validateVolumes(volumes: NonNullable<Pod['spec']>['volumes'], path: FieldPath): { names: Set<string>; errs: FieldError[] } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (volumes ?? []).forEach((v, i) => {
    const p = path.index(i);
    if (!v.name) errs.push(required(p.child('name'), ''));
    else errs.push(...validateDNS1123Label(v.name, p.child('name')));
    if (v.name && names.has(v.name)) errs.push(duplicate(p.child('name'), v.name));
    else if (v.name) names.add(v.name);
    const sources = Object.keys(v).filter((k) => k !== 'name');
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) errs.push(forbidden(p.child(extra), 'may not specify more than 1 volume type'));
    if (v.configMap && !v.configMap.name) errs.push(required(p.child('configMap', 'name'), ''));
    if (v.secret && !v.secret.secretName) errs.push(required(p.child('secret', 'secretName'), ''));
  });
  return { names, errs };
}

function validateHostNetworkPorts(spec: NonNullable<Pod['spec']>, path: FieldPath): FieldError[] {
  if (!spec.hostNetwork) return [];
  const errs: FieldError[] = [];
  const check = (containers: Container[] | undefined, p: FieldPath) =>
    (containers ?? []).forEach((c, ci) =>
      (c.ports ?? []).forEach((port, pi) => {
        if (port.hostPort && port.hostPort !== port.containerPort) {
          errs.push(
            invalid(p.index(ci).child('ports').index(pi).child('containerPort'), port.containerPort, 'must match `hostPort` when `hostNetwork` is true'),
          );
        }
      }),
    );
  check(spec.containers, path.child('containers'));
  check(spec.initContainers, path.child('initContainers'));
  return errs;
}

/** ValidatePodSpec (the parts that apply to a pod run on one node). */
export function validatePodSpec(spec: Pod['spec'], path: FieldPath = newPath('spec')): FieldError[] {
  if (!spec) return [required(path.child('containers'), '')];
  const errs: FieldError[] = [];
  const grace = spec.terminationGracePeriodSeconds ?? undefined;
  if (grace === undefined) errs.push(required(path.child('terminationGracePeriodSeconds'), ''));
  const vols = validateVolumes(spec.volumes, path.child('volumes'));
  errs.push(...vols.errs);
  const ctx = { volumes: vols.names, gracePeriod: grace };
  errs.push(...validateContainers(spec.containers, ctx, path.child('containers')));
  errs.push(...validateInitContainers(spec.initContainers, spec.containers, ctx, path.child('initContainers')));
  (spec.ephemeralContainers ?? []).forEach((c, i) => errs.push(...validateContainerCommon(c as Container, ctx, path.child('ephemeralContainers').index(i))));
  const podResources = (spec as { resources?: Parameters<typeof validateResourceRequirements>[0] }).resources;
  errs.push(...validateResourceRequirements(podResources, path.child('resources')));
  errs.push(...validateHostNetworkPorts(spec, path));

  const restart = spec.restartPolicy ?? '';
  if (restart === '') errs.push(required(path.child('restartPolicy'), ''));
  else if (!['Always', 'OnFailure', 'Never'].includes(restart)) errs.push(notSupported(path.child('restartPolicy'), restart, ['Always', 'OnFailure', 'Never']));

  const dns = spec.dnsPolicy ?? '';
  const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (dns === '') errs.push(required(path.child('dnsPolicy'), ''));
  else if (!dnsPolicies.includes(dns)) errs.push(notSupported(path.child('dnsPolicy'), dns, dnsPolicies));
  if (dns === 'None' && !spec.dnsConfig) errs.push(required(path.child('dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));

  errs.push(...validateLabels(spec.nodeSelector, path.child('nodeSelector')));
  if (spec.serviceAccountName) {
    errs.push(...isDNS1123Subdomain(spec.serviceAccountName).map((m) => invalid(path.child('serviceAccountName'), spec.serviceAccountName, m)));
  }
  if (spec.nodeName) errs.push(...isDNS1123Subdomain(spec.nodeName).map((m) => invalid(path.child('nodeName'), spec.nodeName, m)));
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && deadline !== null && (deadline < 1 || deadline > 2147483647)) {
    errs.push(invalid(path.child('activeDeadlineSeconds'), deadline, inclusiveRangeError(1, 2147483647)));
  }
  if (spec.hostname) errs.push(...validateDNS1123Label(spec.hostname, path.child('hostname')));
  if (spec.subdomain) errs.push(...validateDNS1123Label(spec.subdomain, path.child('subdomain')));
  if (spec.priorityClassName) {
    errs.push(...isDNS1123Subdomain(spec.priorityClassName).map((m) => invalid(path.child('priorityClassName'), spec.priorityClassName, m)));
  }
  if (spec.preemptionPolicy !== undefined && !['PreemptLowerPriority', 'Never'].includes(spec.preemptionPolicy)) {
    errs.push(notSupported(path.child('preemptionPolicy'), spec.preemptionPolicy, ['PreemptLowerPriority', 'Never']));
  }
  return errs;
}

const uidFmt = '[-._a-zA-Z0-9]+';
const uidRe = new RegExp(`^${uidFmt}$`);
const uidMaxLength = 128;

/**
 * metadata.uid. The API server sets a created object's UID itself; a static pod keeps the one its
 * file gives, and podvisor names the pod's directories after it, so a given UID must be one safe
 * path component (as RFC 4122 UIDs and the kubelet's md5 UIDs are).
 */
export function validatePodUID(uid: string | undefined, path: FieldPath = newPath('metadata', 'uid')): FieldError[] {
  if (uid === undefined || uid === '') return [];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(uid) > uidMaxLength) errs.push(invalid(path, uid, maxLenError(uidMaxLength)));
  if (!uidRe.test(uid))
    errs.push(
      invalid(path, uid, regexError("a valid UID must consist of alphanumeric characters, '-', '_' or '.'", uidFmt, '3f2b5c1e-0d4e-4c3a-9a51-6d2f8e7b9c10')),
    );
  if (uid === '.' || uid === '..') errs.push(invalid(path, uid, `must not be '${uid}'`));
  return errs;
}

/** Every error of a (defaulted) pod at once, sorted by field path, duplicates dropped. */
export function validatePod(pod: Pod): FieldError[] {
  const errs = validateObjectMeta(pod.metadata);
  errs.push(...validatePodUID(pod.metadata?.uid));
  errs.push(...validatePodSpec(pod.spec));
  if (pod.spec?.ephemeralContainers?.length) errs.push(forbidden(newPath('spec', 'ephemeralContainers'), 'cannot be set on create'));
  return sortFieldErrors(dedupeFieldErrors(errs));
}

/**
 * Validates each pod and, across them, that no two share a namespace and name (the later one gets
 * `metadata.name: Duplicate value`). Returns one error list per pod, in input order.
 */
export function validatePods(pods: readonly Pod[]): FieldError[][] {
  const seen = new Set<string>();
  return pods.map((pod) => {
    const errs = validatePod(pod);
    const name = pod.metadata?.name;
    if (name) {
      const key = `${pod.metadata?.namespace ?? ''}/${name}`;
      if (seen.has(key)) return sortFieldErrors([...errs, duplicate(newPath('metadata', 'name'), name)]);
      seen.add(key);
    }
    return errs;
  });
}
