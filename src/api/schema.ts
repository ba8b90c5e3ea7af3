// The field schema strict decoding checks manifests against: generated from kubernetes-types
// (schema.generated.json, see scripts/gen-schema.mjs) plus a small overlay of fields added in
// Kubernetes releases newer than that package.

import { createRequire } from 'node:module';
// A type-only import puts the JSON in the program, so tsc copies it next to the compiled module.
import type generatedJson from './schema.generated.json';

export type FieldType =
  | { type: 'string' | 'integer' | 'boolean' | 'intOrString' | 'quantity' | 'any'; required?: boolean }
  | { type: 'object'; ref: string; required?: boolean }
  | { type: 'array'; items: FieldType; required?: boolean }
  | { type: 'map'; values: FieldType; required?: boolean };

export interface TypeSchema {
  fields: Record<string, FieldType>;
}

export interface Schema {
  source: string;
  types: Record<string, TypeSchema>;
}

/** Fields of releases after kubernetes-types 1.30, by type. */
const overlay: Record<string, Record<string, FieldType>> = {
  'core/v1.Lifecycle': { stopSignal: { type: 'string' } },
  'core/v1.PodSpec': {
    resources: { type: 'object', ref: 'core/v1.ResourceRequirements' },
    hostnameOverride: { type: 'string' },
  },
  'core/v1.PodSecurityContext': {
    supplementalGroupsPolicy: { type: 'string' },
    seLinuxChangePolicy: { type: 'string' },
  },
  'core/v1.Volume': { image: { type: 'object', ref: 'core/v1.ImageVolumeSource' } },
  'core/v1.ImageVolumeSource': { reference: { type: 'string' }, pullPolicy: { type: 'string' } },
  'core/v1.ResourceClaim': { request: { type: 'string' } },
  'core/v1.PodStatus': { observedGeneration: { type: 'integer' } },
  'core/v1.PodCondition': { observedGeneration: { type: 'integer' } },
  'core/v1.ContainerStatus': {
    stopSignal: { type: 'string' },
    user: { type: 'any' },
    allocatedResourcesStatus: { type: 'array', items: { type: 'any' } },
  },
  // core/v1 Namespace (kubernetes-types' schema generation started from the workload kinds).
  'core/v1.Namespace': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'core/v1.NamespaceSpec' },
    status: { type: 'object', ref: 'core/v1.NamespaceStatus' },
  },
  'core/v1.NamespaceSpec': { finalizers: { type: 'array', items: { type: 'string' } } },
  'core/v1.NamespaceStatus': {
    phase: { type: 'string' },
    conditions: { type: 'array', items: { type: 'object', ref: 'core/v1.NamespaceCondition' } },
  },
  'core/v1.NamespaceCondition': {
    type: { type: 'string' },
    status: { type: 'string' },
    lastTransitionTime: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
  },
  // policy/v1 PodDisruptionBudget (k8s.io/api/policy/v1 types.go).
  'policy/v1.PodDisruptionBudget': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'policy/v1.PodDisruptionBudgetSpec' },
    status: { type: 'object', ref: 'policy/v1.PodDisruptionBudgetStatus' },
  },
  'policy/v1.PodDisruptionBudgetSpec': {
    minAvailable: { type: 'intOrString' },
    selector: { type: 'object', ref: 'meta/v1.LabelSelector' },
    maxUnavailable: { type: 'intOrString' },
    unhealthyPodEvictionPolicy: { type: 'string' },
  },
  'policy/v1.PodDisruptionBudgetStatus': {
    observedGeneration: { type: 'integer' },
    disruptedPods: { type: 'map', values: { type: 'string' } },
    disruptionsAllowed: { type: 'integer' },
    currentHealthy: { type: 'integer' },
    desiredHealthy: { type: 'integer' },
    expectedPods: { type: 'integer' },
    conditions: { type: 'array', items: { type: 'object', ref: 'meta/v1.Condition' } },
  },
  'meta/v1.Condition': {
    type: { type: 'string' },
    status: { type: 'string' },
    observedGeneration: { type: 'integer' },
    lastTransitionTime: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
  },
  // node.k8s.io/v1 RuntimeClass (k8s.io/api/node/v1 types.go).
  'node/v1.RuntimeClass': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    handler: { type: 'string' },
    overhead: { type: 'object', ref: 'node/v1.Overhead' },
    scheduling: { type: 'object', ref: 'node/v1.Scheduling' },
  },
  'node/v1.Overhead': { podFixed: { type: 'map', values: { type: 'quantity' } } },
  'node/v1.Scheduling': {
    nodeSelector: { type: 'map', values: { type: 'string' } },
    tolerations: { type: 'array', items: { type: 'object', ref: 'core/v1.Toleration' } },
  },
  // v1 List (metav1.List): items are decoded by their own kind.
  'core/v1.List': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'any' },
    items: { type: 'array', items: { type: 'any' } },
  },
};

function buildSchema(): Schema {
  // require() of JSON is stable on every Node.js 20 release (JSON import attributes are not).
  // Only this module reads the file: the overlay is applied to the parsed object itself.
  const base = createRequire(import.meta.url)('./schema.generated.json') as typeof generatedJson as Schema;
  for (const [name, fields] of Object.entries(overlay)) {
    base.types[name] = { fields: { ...(base.types[name]?.fields ?? {}), ...fields } };
  }
  return { source: base.source, types: base.types };
}

/** The generated schema with the overlay applied; read once at load, never changed. */
export const apiSchema: Readonly<Schema> = buildSchema();

/** Type names of the kinds podvisor decodes. */
export const kindTypes = {
  Pod: 'core/v1.Pod',
  ConfigMap: 'core/v1.ConfigMap',
  Secret: 'core/v1.Secret',
  Service: 'core/v1.Service',
  Endpoints: 'core/v1.Endpoints',
  Namespace: 'core/v1.Namespace',
  EndpointSlice: 'discovery/v1.EndpointSlice',
  List: 'core/v1.List',
  Deployment: 'apps/v1.Deployment',
  ReplicaSet: 'apps/v1.ReplicaSet',
  StatefulSet: 'apps/v1.StatefulSet',
  DaemonSet: 'apps/v1.DaemonSet',
  ControllerRevision: 'apps/v1.ControllerRevision',
  Job: 'batch/v1.Job',
  CronJob: 'batch/v1.CronJob',
  PodDisruptionBudget: 'policy/v1.PodDisruptionBudget',
  RuntimeClass: 'node/v1.RuntimeClass',
} as const;
