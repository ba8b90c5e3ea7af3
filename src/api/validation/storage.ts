// Validation and defaults of storage.k8s.io/v1 StorageClasses (pkg/apis/storage/validation
// ValidateStorageClass, ValidateStorageClassUpdate; SetDefaults_StorageClass) and of v1
// PersistentVolumes and PersistentVolumeClaims (pkg/apis/core/validation ValidatePersistentVolume,
// ValidatePersistentVolumeClaim and their updates; SetDefaults_PersistentVolume,
// SetDefaults_PersistentVolumeClaim), in the API server's words.

import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { parseQuantity } from '../quantity.js';
import { isDNS1123Subdomain, isQualifiedName } from './names.js';
import { validateAnnotations, validateLabels, validateObjectMeta } from './pod.js';
import { validateLabelSelector } from './workload.js';

export type { PersistentVolume, PersistentVolumeClaim, StorageClass };

export const supportedAccessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const supportedReclaimPolicies = ['Delete', 'Recycle', 'Retain'];
const supportedClassReclaimPolicies = ['Delete', 'Retain'];
const supportedBindingModes = ['Immediate', 'WaitForFirstConsumer'];
const supportedVolumeModes = ['Block', 'Filesystem'];
const maxProvisionerParameterSize = 256 * 1024;
const maxProvisionerParameterLen = 512;

/** ValidateObjectMeta of a cluster-scoped kind: the name a DNS subdomain, no namespace. */
function validateClusterMeta(meta: ObjectMeta | undefined, path: FieldPath = newPath('metadata')): FieldError[] {
  const m = meta ?? {};
  const errs: FieldError[] = [];
  if (!m.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(m.name).map((msg) => invalid(path.child('name'), m.name, msg)));
  if (m.namespace) errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  errs.push(...validateLabels(m.labels, path.child('labels')));
  errs.push(...validateAnnotations(m.annotations, path.child('annotations')));
  return errs;
}

// --- StorageClass ---

export function defaultStorageClass(sc: StorageClass): StorageClass {
  const out = structuredClone(sc);
  out.reclaimPolicy ||= 'Delete';
  out.volumeBindingMode ||= 'Immediate';
  return out;
}

export function validateStorageClass(sc: StorageClass): FieldError[] {
  const errs = validateClusterMeta(sc.metadata);
  const provisioner = newPath('provisioner');
  if (!sc.provisioner) errs.push(required(provisioner, ''));
  else errs.push(...isQualifiedName(sc.provisioner.toLowerCase()).map((msg) => invalid(provisioner, sc.provisioner, msg)));
  const params = newPath('parameters');
  const entries = Object.entries(sc.parameters ?? {});
  if (entries.length > maxProvisionerParameterLen)
    errs.push({ type: 'TooLong', field: params.toString(), value: entries.length, detail: `must have at most ${maxProvisionerParameterLen} items` });
  let size = 0;
  for (const [k, v] of entries) {
    if (k.length === 0) errs.push(invalid(params, k, 'field can not be empty.'));
    size += k.length + v.length;
  }
  if (size > maxProvisionerParameterSize)
    errs.push({ type: 'TooLong', field: params.toString(), value: '', detail: `may not be more than ${maxProvisionerParameterSize} bytes` });
  if (sc.reclaimPolicy !== undefined && !supportedClassReclaimPolicies.includes(sc.reclaimPolicy)) {
    errs.push(notSupported(newPath('reclaimPolicy'), sc.reclaimPolicy, supportedClassReclaimPolicies));
  }
  const mode = newPath('volumeBindingMode');
  if (!sc.volumeBindingMode) errs.push(required(mode, ''));
  else if (!supportedBindingModes.includes(sc.volumeBindingMode)) errs.push(notSupported(mode, sc.volumeBindingMode, supportedBindingModes));
  return sortFieldErrors(errs);
}

export function validateStorageClassUpdate(next: StorageClass, old: StorageClass): FieldError[] {
  const errs: FieldError[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
  if (!same(sortedEntries(next.parameters), sortedEntries(old.parameters))) errs.push(forbidden(newPath('parameters'), 'updates to parameters are forbidden.'));
  if (next.provisioner !== old.provisioner) errs.push(forbidden(newPath('provisioner'), 'updates to provisioner are forbidden.'));
  if ((next.reclaimPolicy ?? '') !== (old.reclaimPolicy ?? '')) errs.push(forbidden(newPath('reclaimPolicy'), 'updates to reclaimPolicy are forbidden.'));
  if (next.volumeBindingMode !== old.volumeBindingMode) errs.push(invalid(newPath('volumeBindingMode'), next.volumeBindingMode, 'field is immutable'));
  return sortFieldErrors(errs);
}

function sortedEntries(m: Readonly<Record<string, string>> | undefined): Array<[string, string]> {
  return Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** storageclass.kubernetes.io/is-default-class (and the beta annotation) say "true". */
export const isDefaultClassAnnotation = 'storageclass.kubernetes.io/is-default-class';
const betaIsDefaultClassAnnotation = 'storageclass.beta.kubernetes.io/is-default-class';

export function isDefaultStorageClass(sc: StorageClass): boolean {
  const a = sc.metadata?.annotations ?? {};
  return a[isDefaultClassAnnotation] === 'true' || a[betaIsDefaultClassAnnotation] === 'true';
}

// --- access modes, quantities ---

function validateAccessModes(modes: readonly string[] | undefined, path: FieldPath, emptyDetail: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = modes ?? [];
  if (list.length === 0) errs.push(required(path, emptyDetail));
  for (const m of list) if (!supportedAccessModes.includes(m)) errs.push(notSupported(path, m, supportedAccessModes));
  if (list.includes('ReadWriteOncePod') && list.length > 1) errs.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** validateBasicResource and ValidatePositiveQuantityValue of one storage quantity. */
function validateStorageQuantity(value: string | number | undefined, path: FieldPath): FieldError[] {
  try {
    const q = parseQuantity(String(value ?? ''));
    if (q.milliValue() <= 0n) return [invalid(path, String(value), 'must be greater than zero')];
    return [];
  } catch (err) {
    return [invalid(path, String(value), (err as Error).message)];
  }
}

function validateStorageClassName(name: string | undefined, path: FieldPath): FieldError[] {
  if (!name) return [];
  return isDNS1123Subdomain(name).map((msg) => invalid(path, name, msg));
}

// --- PersistentVolume ---

export function defaultPersistentVolume(pv: PersistentVolume): PersistentVolume {
  const out = structuredClone(pv);
  out.spec ??= {};
  out.spec.persistentVolumeReclaimPolicy ||= 'Retain';
  out.spec.volumeMode ||= 'Filesystem';
  // SetDefaults_HostPathVolumeSource: a PersistentVolume's hostPath type is "" when unset.
  if (out.spec.hostPath) out.spec.hostPath.type ??= '';
  const w = out as { status?: { phase?: string } };
  w.status ??= {};
  w.status.phase ||= 'Pending';
  return out;
}

/** The volume sources a PersistentVolume may hold, of which the agent mounts hostPath and local. */
const pvSourceFields = [
  'awsElasticBlockStore',
  'azureDisk',
  'azureFile',
  'cephfs',
  'cinder',
  'csi',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'glusterfs',
  'hostPath',
  'iscsi',
  'local',
  'nfs',
  'photonPersistentDisk',
  'portworxVolume',
  'quobyte',
  'rbd',
  'scaleIO',
  'storageos',
  'vsphereVolume',
] as const;

/** A path without `..` elements (validatePathNoBacksteps). */
function noBacksteps(path: string, fld: FieldPath): FieldError[] {
  return path.split('/').includes('..') ? [invalid(fld, path, "must not contain '..'")] : [];
}

export function validatePersistentVolume(pv: PersistentVolume): FieldError[] {
  const errs = validateClusterMeta(pv.metadata);
  const spec = newPath('spec');
  const s = pv.spec ?? {};
  errs.push(...validateAccessModes(s.accessModes, spec.child('accessModes'), 'must specify at least 1 access mode'));
  const cap = s.capacity ?? {};
  const capPath = spec.child('capacity');
  if (Object.keys(cap).length === 0) errs.push(required(capPath, ''));
  if (!('storage' in cap) || Object.keys(cap).length > 1) {
    errs.push(notSupported(capPath, goResourceList(s.capacity), ['storage']));
  }
  for (const [r, q] of Object.entries(cap)) errs.push(...validateStorageQuantity(q, capPath.key(r)));
  if (s.persistentVolumeReclaimPolicy && !supportedReclaimPolicies.includes(s.persistentVolumeReclaimPolicy)) {
    errs.push(notSupported(spec.child('persistentVolumeReclaimPolicy'), s.persistentVolumeReclaimPolicy, supportedReclaimPolicies));
  }
  errs.push(...validateStorageClassName(s.storageClassName, spec.child('storageClassName')));
  if (s.volumeMode && !supportedVolumeModes.includes(s.volumeMode)) errs.push(notSupported(spec.child('volumeMode'), s.volumeMode, supportedVolumeModes));
  const sources = pvSourceFields.filter((f) => s[f] !== undefined);
  if (sources.length === 0) errs.push(required(spec, 'must specify a volume type'));
  for (const extra of sources.slice(1)) errs.push(forbidden(spec.child(extra), 'may not specify more than 1 volume type'));
  if (s.hostPath) {
    const p = spec.child('hostPath', 'path');
    if (!s.hostPath.path) errs.push(required(p, ''));
    else errs.push(...noBacksteps(s.hostPath.path, p));
  }
  if (s.local) {
    const p = spec.child('local', 'path');
    if (!s.local.path) errs.push(required(p, ''));
    else errs.push(...noBacksteps(s.local.path, p));
    if (!s.nodeAffinity?.required) errs.push(required(spec.child('nodeAffinity'), 'Local volume requires node affinity'));
  }
  if (s.nodeAffinity) {
    const na = spec.child('nodeAffinity');
    if (!s.nodeAffinity.required) errs.push(required(na.child('required'), 'must specify required node constraints'));
    else if ((s.nodeAffinity.required.nodeSelectorTerms ?? []).length === 0) {
      errs.push(required(na.child('required', 'nodeSelectorTerms'), 'must have at least one node selector term'));
    }
  }
  if (s.claimRef && !s.claimRef.name) errs.push(required(spec.child('claimRef', 'name'), ''));
  return sortFieldErrors(errs);
}

/** ValidatePersistentVolumeUpdate: the volume source and the node affinity may not change. */
export function validatePersistentVolumeUpdate(next: PersistentVolume, old: PersistentVolume): FieldError[] {
  const errs = validatePersistentVolume(next);
  const spec = newPath('spec');
  const source = (pv: PersistentVolume) => JSON.stringify(pvSourceFields.map((f) => pv.spec?.[f] ?? null));
  if (source(next) !== source(old)) errs.push(forbidden(spec.child('persistentvolumesource'), 'spec.persistentvolumesource is immutable after creation'));
  if (JSON.stringify(next.spec?.nodeAffinity ?? null) !== JSON.stringify(old.spec?.nodeAffinity ?? null) && old.spec?.nodeAffinity) {
    errs.push(invalid(spec.child('nodeAffinity'), 'core.VolumeNodeAffinity', 'field is immutable'));
  }
  if ((next.spec?.volumeMode ?? '') !== (old.spec?.volumeMode ?? ''))
    errs.push(invalid(spec.child('volumeMode'), next.spec?.volumeMode ?? '', 'field is immutable'));
  return sortFieldErrors(errs);
}

/**
 * A ResourceList as Go's %#v prints it in a NotSupported error:
 * `core.ResourceList{"storage":resource.Quantity{i:resource.int64Amount{value:1073741824, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1Gi", Format:"BinarySI"}}`.
 */
function goResourceList(m: Readonly<Record<string, unknown>> | undefined): { toString(): string } {
  const text =
    m === undefined
      ? 'core.ResourceList(nil)'
      : `core.ResourceList{${Object.keys(m)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${goQuantity(String(m[k]))}`)
          .join(', ')}}`;
  return { toString: () => text };
}

/** resource.Quantity as %#v prints a parsed one: its int64Amount (mantissa and decimal scale), the string, the format. */
function goQuantity(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/.exec(text);
  let value = '0';
  let scale = 0;
  let format = 'DecimalSI';
  if (m) {
    const suffix = m[4] ?? '';
    const digits = `${m[2] ?? ''}${m[3] ?? ''}`.replace(/^0+(?=\d)/, '') || '0';
    const fraction = (m[3] ?? '').length;
    if (/^[KMGTPE]i$/.test(suffix)) {
      format = 'BinarySI';
      try {
        value = String(parseQuantity(text).value());
      } catch {
        value = '0';
      }
    } else {
      const exp: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
      if (/^[eE]/.test(suffix)) format = 'DecimalExponent';
      value = `${m[1] === '-' ? '-' : ''}${digits}`;
      scale = (/^[eE]/.test(suffix) ? Number(suffix.slice(1)) : (exp[suffix] ?? 0)) - fraction;
    }
  }
  return `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(text)}, Format:"${format}"}`;
}

// --- PersistentVolumeClaim ---

export function defaultPersistentVolumeClaim(pvc: PersistentVolumeClaim): PersistentVolumeClaim {
  const out = structuredClone(pvc);
  out.spec ??= {};
  out.spec.volumeMode ||= 'Filesystem';
  const w = out as { status?: { phase?: string } };
  w.status ??= {};
  w.status.phase ||= 'Pending';
  return out;
}

/** ValidatePersistentVolumeClaimSpec. */
export function validatePersistentVolumeClaimSpec(s: PersistentVolumeClaimSpec | undefined, spec: FieldPath): FieldError[] {
  const v = s ?? {};
  const errs = validateAccessModes(v.accessModes, spec.child('accessModes'), 'at least 1 access mode is required');
  errs.push(...validateLabelSelector(v.selector, spec.child('selector')));
  const storage = v.resources?.requests?.storage;
  const storagePath = spec.child('resources').key('storage');
  if (storage === undefined) errs.push(required(storagePath, ''));
  else errs.push(...validateStorageQuantity(storage, storagePath));
  errs.push(...validateStorageClassName(v.storageClassName, spec.child('storageClassName')));
  if (v.volumeMode && !supportedVolumeModes.includes(v.volumeMode)) errs.push(notSupported(spec.child('volumeMode'), v.volumeMode, supportedVolumeModes));
  return errs;
}

export function validatePersistentVolumeClaim(pvc: PersistentVolumeClaim): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(pvc.metadata), ...validatePersistentVolumeClaimSpec(pvc.spec, newPath('spec'))]);
}

/**
 * ValidatePersistentVolumeClaimUpdate: the spec is immutable but for the volume a binder sets on an
 * unbound claim, and a bound claim's storage request, which may only grow.
 */
export function validatePersistentVolumeClaimUpdate(next: PersistentVolumeClaim, old: PersistentVolumeClaim): FieldError[] {
  const errs = validatePersistentVolumeClaim(next);
  const a = structuredClone(old.spec ?? {});
  const b = structuredClone(next.spec ?? {});
  if (!a.volumeName) a.volumeName = b.volumeName;
  // An unset class takes the default class's name once (the DefaultStorageClass admission's retroactive assignment).
  if (a.storageClassName === undefined) a.storageClassName = b.storageClassName;
  const bound = old.status?.phase === 'Bound';
  if (bound) {
    a.resources = { ...(a.resources ?? {}), requests: b.resources?.requests ?? {} };
    a.volumeAttributesClassName = b.volumeAttributesClassName;
  }
  if (JSON.stringify(canonicalSpec(a)) !== JSON.stringify(canonicalSpec(b))) {
    errs.push(forbidden(newPath('spec'), 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  } else if (bound) {
    const was = old.spec?.resources?.requests?.storage;
    const now = next.spec?.resources?.requests?.storage;
    if (was !== undefined && now !== undefined) {
      try {
        if (parseQuantity(String(now)).cmp(parseQuantity(String(was))) < 0) {
          errs.push(forbidden(newPath('spec', 'resources', 'requests').key('storage'), 'field can not be less than previous value'));
        }
      } catch {
        // reported by validatePersistentVolumeClaim
      }
    }
  }
  return sortFieldErrors(errs);
}

function canonicalSpec(s: PersistentVolumeClaimSpec): unknown {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>)
          .filter(([, x]) => x !== undefined)
          .sort(([x], [y]) => (x < y ? -1 : 1))
          .map(([k, x]) => [k, sortKeys(x)]),
      );
    }
    return v;
  };
  return sortKeys(s);
}
