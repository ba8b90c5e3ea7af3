// apiextensions.k8s.io/v1 CustomResourceDefinition: its type, its validation (names, metadata.name
// `<plural>.<group>`, scope, versions with one storage version and at least one served, structural
// schema basics) and the status the API server's controllers give it (NamesAccepted, Established,
// acceptedNames, storedVersions).
// Upstream: apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go,
// pkg/controller/status (naming_controller.go) and pkg/controller/establish.

import type { FieldError } from '../../api/field-errors.js';
import { isDNS1123Subdomain } from '../../api/validation/names.js';
import type { KubeObject } from '../backend.js';
import type { JSONSchemaProps } from './structural-schema.js';

export interface CRDNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: {
    status?: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: Array<{ jsonPath: string }>;
}

export interface CRDCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinition extends KubeObject {
  spec: {
    group: string;
    names: CRDNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CRDVersion[];
    conversion?: { strategy: string };
    preserveUnknownFields?: boolean;
  };
  status?: { conditions?: CRDCondition[]; acceptedNames?: CRDNames; storedVersions?: string[] };
}

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function dns1035Errors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035.test(value))
    errs.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  return errs;
}

function validateNames(names: Partial<CRDNames> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const n = names ?? {};
  const label = (field: string, value: string | undefined) => {
    if (!value) return;
    for (const e of dns1035Errors(value)) errs.push({ type: 'Invalid', field: `${path}.${field}`, value, detail: e });
  };
  if (!n.plural) errs.push({ type: 'Required', field: `${path}.plural`, detail: '' });
  label('plural', n.plural);
  label('singular', n.singular);
  if (!n.kind) errs.push({ type: 'Required', field: `${path}.kind`, detail: '' });
  else label('kind', n.kind.toLowerCase());
  if (!n.listKind) errs.push({ type: 'Required', field: `${path}.listKind`, detail: '' });
  else label('listKind', n.listKind.toLowerCase());
  if (n.kind && n.listKind === n.kind)
    errs.push({ type: 'Invalid', field: `${path}.listKind`, value: n.listKind, detail: 'kind and listKind may not be the same' });
  (n.shortNames ?? []).forEach((s, i) => {
    for (const e of dns1035Errors(s)) errs.push({ type: 'Invalid', field: `${path}.shortNames[${i}]`, value: s, detail: e });
  });
  (n.categories ?? []).forEach((c, i) => {
    for (const e of dns1035Errors(c)) errs.push({ type: 'Invalid', field: `${path}.categories[${i}]`, value: c, detail: e });
  });
  return errs;
}

/** Structural schema basics: a type everywhere (but where preserve-unknown-fields or int-or-string stand in), object at the root. */
function validateStructural(s: JSONSchemaProps, path: string, root: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const open = s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-int-or-string'] === true;
  if (!s.type && !open)
    errs.push({ type: 'Required', field: `${path}.type`, detail: root ? 'must not be empty at the root' : 'must not be empty for specified object fields' });
  if (root && s.type && s.type !== 'object') errs.push({ type: 'Invalid', field: `${path}.type`, value: s.type, detail: 'must be object at the root' });
  if (s.type && !['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(s.type))
    errs.push({
      type: 'NotSupported',
      field: `${path}.type`,
      value: s.type,
      detail: 'supported values: "array", "boolean", "integer", "number", "object", "string"',
    });
  if (s.type === 'array' && !s.items) errs.push({ type: 'Required', field: `${path}.items`, detail: 'must be specified' });
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false)
    errs.push({ type: 'Forbidden', field: `${path}.additionalProperties`, detail: 'additionalProperties and properties are mutual exclusive' });
  for (const [k, sub] of Object.entries(s.properties ?? {})) errs.push(...validateStructural(sub, `${path}.properties[${k}]`, false));
  if (s.items) errs.push(...validateStructural(s.items, `${path}.items`, false));
  if (typeof s.additionalProperties === 'object') errs.push(...validateStructural(s.additionalProperties, `${path}.additionalProperties`, false));
  return errs;
}

/** ValidateCustomResourceDefinition. */
export function validateCRD(crd: CustomResourceDefinition): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec ?? ({} as CustomResourceDefinition['spec']);
  const name = crd.metadata?.name ?? '';
  const plural = spec.names?.plural ?? '';
  if (name !== `${plural}.${spec.group ?? ''}`)
    errs.push({ type: 'Invalid', field: 'metadata.name', value: name, detail: 'must be spec.names.plural+"."+spec.group' });
  if (!spec.group) errs.push({ type: 'Required', field: 'spec.group', detail: '' });
  else {
    for (const e of isDNS1123Subdomain(spec.group)) errs.push({ type: 'Invalid', field: 'spec.group', value: spec.group, detail: e });
    if (spec.group.split('.').length < 2)
      errs.push({ type: 'Invalid', field: 'spec.group', value: spec.group, detail: 'should be a domain with at least one dot' });
  }
  if (!spec.scope) errs.push({ type: 'Required', field: 'spec.scope', detail: '' });
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errs.push({ type: 'NotSupported', field: 'spec.scope', value: spec.scope, detail: 'supported values: "Cluster", "Namespaced"' });
  errs.push(...validateNames(spec.names, 'spec.names'));
  const versions = spec.versions ?? [];
  if (versions.length === 0) errs.push({ type: 'Required', field: 'spec.versions', detail: 'must have exactly one version marked as storage version' });
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v.name) errs.push({ type: 'Required', field: `${p}.name`, detail: '' });
    else {
      for (const e of dns1035Errors(v.name)) errs.push({ type: 'Invalid', field: `${p}.name`, value: v.name, detail: e });
      if (seen.has(v.name)) errs.push({ type: 'Invalid', field: 'spec.versions', value: versions, detail: 'must contain unique version names' });
      seen.add(v.name);
    }
    const root = v.schema?.openAPIV3Schema;
    if (!root) errs.push({ type: 'Required', field: `${p}.schema.openAPIV3Schema`, detail: 'schemas are required' });
    else errs.push(...validateStructural(root, `${p}.schema.openAPIV3Schema`, true));
    const sc = v.subresources?.scale;
    if (sc) {
      if (!sc.specReplicasPath) errs.push({ type: 'Required', field: `${p}.subresources.scale.specReplicasPath`, detail: '' });
      else if (!sc.specReplicasPath.startsWith('.spec.'))
        errs.push({
          type: 'Invalid',
          field: `${p}.subresources.scale.specReplicasPath`,
          value: sc.specReplicasPath,
          detail: 'should be a json path under .spec',
        });
      if (!sc.statusReplicasPath) errs.push({ type: 'Required', field: `${p}.subresources.scale.statusReplicasPath`, detail: '' });
      else if (!sc.statusReplicasPath.startsWith('.status.'))
        errs.push({
          type: 'Invalid',
          field: `${p}.subresources.scale.statusReplicasPath`,
          value: sc.statusReplicasPath,
          detail: 'should be a json path under .status',
        });
    }
    (v.additionalPrinterColumns ?? []).forEach((c, j) => {
      const cp = `${p}.additionalPrinterColumns[${j}]`;
      if (!c.name) errs.push({ type: 'Required', field: `${cp}.name`, detail: '' });
      if (!c.jsonPath) errs.push({ type: 'Required', field: `${cp}.JSONPath`, detail: '' });
      if (!['integer', 'number', 'string', 'boolean', 'date'].includes(c.type))
        errs.push({ type: 'NotSupported', field: `${cp}.type`, value: c.type, detail: 'supported values: "boolean", "date", "integer", "number", "string"' });
    });
  });
  const storage = versions.filter((v) => v.storage).length;
  if (versions.length > 0 && storage !== 1)
    errs.push({ type: 'Invalid', field: 'spec.versions', value: versions, detail: 'must have exactly one version marked as storage version' });
  if (versions.length > 0 && !versions.some((v) => v.served))
    errs.push({ type: 'Invalid', field: 'spec.versions', value: versions, detail: 'must have at least one version marked as served' });
  const strategy = spec.conversion?.strategy;
  if (strategy !== undefined && strategy !== 'None' && strategy !== 'Webhook')
    errs.push({ type: 'NotSupported', field: 'spec.conversion.strategy', value: strategy, detail: 'supported values: "None", "Webhook"' });
  if (spec.preserveUnknownFields === true)
    errs.push({
      type: 'Invalid',
      field: 'spec.preserveUnknownFields',
      value: true,
      detail: 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    });
  return errs;
}

/** ValidateCustomResourceDefinitionUpdate: the scope and group stay; a stored version stays listed. */
export function validateCRDUpdate(next: CustomResourceDefinition, old: CustomResourceDefinition): FieldError[] {
  const errs: FieldError[] = [];
  if (next.spec?.group !== old.spec?.group) errs.push({ type: 'Invalid', field: 'spec.group', value: next.spec?.group, detail: 'field is immutable' });
  for (const v of old.status?.storedVersions ?? []) {
    if (!(next.spec?.versions ?? []).some((x) => x.name === v))
      errs.push({ type: 'Invalid', field: 'status.storedVersions', value: old.status?.storedVersions, detail: `must appear in spec.versions` });
  }
  return errs;
}

/** Fills in the names' defaults (singular: the plural's lower-case kind; listKind: kind+List) and the conversion strategy. */
export function defaultCRD(crd: CustomResourceDefinition): CustomResourceDefinition {
  const names = crd.spec?.names;
  if (names) {
    if (!names.singular && names.kind) names.singular = names.kind.toLowerCase();
    if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  }
  if (crd.spec) crd.spec.conversion ??= { strategy: 'None' };
  return crd;
}

/** The storage version. */
export function storageVersion(crd: CustomResourceDefinition): CRDVersion | undefined {
  return crd.spec.versions.find((v) => v.storage);
}

/**
 * The status the naming and establishing controllers give a CRD: its names accepted unless another
 * CRD of the group holds one of them, Established once accepted; the storage version recorded.
 */
export function crdStatus(
  crd: CustomResourceDefinition,
  others: readonly CustomResourceDefinition[],
  now: string,
  old?: CustomResourceDefinition,
): NonNullable<CustomResourceDefinition['status']> {
  const names = crd.spec.names;
  const conflict = (() => {
    for (const o of others) {
      if (o.metadata?.name === crd.metadata?.name || o.spec.group !== crd.spec.group) continue;
      const on = o.status?.acceptedNames ?? o.spec.names;
      if (on.plural === names.plural) return { reason: 'PluralConflict', message: `"${names.plural}" is already in use` };
      if (names.singular && on.singular === names.singular) return { reason: 'SingularConflict', message: `"${names.singular}" is already in use` };
      if (on.kind === names.kind) return { reason: 'KindConflict', message: `"${names.kind}" is already in use` };
      if (names.listKind && on.listKind === names.listKind) return { reason: 'ListKindConflict', message: `"${names.listKind}" is already in use` };
      const short = (names.shortNames ?? []).find((s) => (on.shortNames ?? []).includes(s));
      if (short) return { reason: 'ShortNamesConflict', message: `"${short}" is already in use` };
    }
    return undefined;
  })();
  const was = (type: string) => old?.status?.conditions?.find((c) => c.type === type);
  const cond = (type: string, status: CRDCondition['status'], reason: string, message: string): CRDCondition => {
    const prev = was(type);
    return { type, status, lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now, reason, message };
  };
  const conditions = conflict
    ? [cond('NamesAccepted', 'False', conflict.reason, conflict.message), cond('Established', 'False', 'NotAccepted', 'not all names are accepted')]
    : [
        cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'),
        cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted'),
      ];
  const stored = [...(old?.status?.storedVersions ?? [])];
  const sv = storageVersion(crd)?.name;
  if (sv && !stored.includes(sv)) stored.push(sv);
  const acceptedNames = conflict ? (old?.status?.acceptedNames ?? { plural: '', kind: '' }) : { ...names };
  return { conditions, acceptedNames, storedVersions: stored };
}

/** The CRD serves its resources: its names are accepted and it is Established. */
export function isEstablished(crd: CustomResourceDefinition): boolean {
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true && !crd.metadata?.deletionTimestamp;
}
