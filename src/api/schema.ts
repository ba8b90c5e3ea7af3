// The field schema strict decoding checks manifests against: generated from kubernetes-types
// (schema.generated.json, see scripts/gen-schema.mjs) plus a small overlay of fields added in
// Kubernetes releases newer than that package.

import { createRequire } from 'node:module';
// A type-only import puts the JSON in the program, so tsc copies it next to the compiled module.
import type generatedJson from './schema.generated.json';
import { networkingTypes } from './schema-networking.js';

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
  // rbac.authorization.k8s.io/v1 (k8s.io/api/rbac/v1 types.go).
  'rbac/v1.PolicyRule': {
    verbs: { type: 'array', items: { type: 'string' } },
    apiGroups: { type: 'array', items: { type: 'string' } },
    resources: { type: 'array', items: { type: 'string' } },
    resourceNames: { type: 'array', items: { type: 'string' } },
    nonResourceURLs: { type: 'array', items: { type: 'string' } },
  },
  'rbac/v1.Role': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    rules: { type: 'array', items: { type: 'object', ref: 'rbac/v1.PolicyRule' } },
  },
  'rbac/v1.ClusterRole': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    rules: { type: 'array', items: { type: 'object', ref: 'rbac/v1.PolicyRule' } },
    aggregationRule: { type: 'object', ref: 'rbac/v1.AggregationRule' },
  },
  'rbac/v1.AggregationRule': { clusterRoleSelectors: { type: 'array', items: { type: 'object', ref: 'meta/v1.LabelSelector' } } },
  'rbac/v1.RoleRef': { apiGroup: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } },
  'rbac/v1.Subject': { kind: { type: 'string' }, apiGroup: { type: 'string' }, name: { type: 'string' }, namespace: { type: 'string' } },
  'rbac/v1.RoleBinding': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    subjects: { type: 'array', items: { type: 'object', ref: 'rbac/v1.Subject' } },
    roleRef: { type: 'object', ref: 'rbac/v1.RoleRef' },
  },
  'rbac/v1.ClusterRoleBinding': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    subjects: { type: 'array', items: { type: 'object', ref: 'rbac/v1.Subject' } },
    roleRef: { type: 'object', ref: 'rbac/v1.RoleRef' },
  },
  // core/v1 ServiceAccount (k8s.io/api/core/v1 types.go).
  'core/v1.ServiceAccount': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    secrets: { type: 'array', items: { type: 'object', ref: 'core/v1.ObjectReference' } },
    imagePullSecrets: { type: 'array', items: { type: 'object', ref: 'core/v1.LocalObjectReference' } },
    automountServiceAccountToken: { type: 'boolean' },
  },
  // v1 LimitRange and ResourceQuota (k8s.io/api/core/v1 types.go).
  'core/v1.LimitRange': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'core/v1.LimitRangeSpec' },
  },
  'core/v1.LimitRangeSpec': { limits: { type: 'array', items: { type: 'object', ref: 'core/v1.LimitRangeItem' } } },
  'core/v1.LimitRangeItem': {
    type: { type: 'string' },
    max: { type: 'map', values: { type: 'quantity' } },
    min: { type: 'map', values: { type: 'quantity' } },
    default: { type: 'map', values: { type: 'quantity' } },
    defaultRequest: { type: 'map', values: { type: 'quantity' } },
    maxLimitRequestRatio: { type: 'map', values: { type: 'quantity' } },
  },
  'core/v1.ResourceQuota': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'core/v1.ResourceQuotaSpec' },
    status: { type: 'object', ref: 'core/v1.ResourceQuotaStatus' },
  },
  'core/v1.ResourceQuotaSpec': {
    hard: { type: 'map', values: { type: 'quantity' } },
    scopes: { type: 'array', items: { type: 'string' } },
    scopeSelector: { type: 'object', ref: 'core/v1.ScopeSelector' },
  },
  'core/v1.ScopeSelector': { matchExpressions: { type: 'array', items: { type: 'object', ref: 'core/v1.ScopedResourceSelectorRequirement' } } },
  'core/v1.ScopedResourceSelectorRequirement': {
    scopeName: { type: 'string' },
    operator: { type: 'string' },
    values: { type: 'array', items: { type: 'string' } },
  },
  'core/v1.ResourceQuotaStatus': {
    hard: { type: 'map', values: { type: 'quantity' } },
    used: { type: 'map', values: { type: 'quantity' } },
  },
  // networking.k8s.io/v1 NetworkPolicy (k8s.io/api/networking/v1 types.go).
  'networking/v1.NetworkPolicy': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'networking/v1.NetworkPolicySpec' },
  },
  'networking/v1.NetworkPolicySpec': {
    podSelector: { type: 'object', ref: 'meta/v1.LabelSelector' },
    ingress: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyIngressRule' } },
    egress: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyEgressRule' } },
    policyTypes: { type: 'array', items: { type: 'string' } },
  },
  'networking/v1.NetworkPolicyIngressRule': {
    ports: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyPort' } },
    from: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyPeer' } },
  },
  'networking/v1.NetworkPolicyEgressRule': {
    ports: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyPort' } },
    to: { type: 'array', items: { type: 'object', ref: 'networking/v1.NetworkPolicyPeer' } },
  },
  'networking/v1.NetworkPolicyPort': { protocol: { type: 'string' }, port: { type: 'intOrString' }, endPort: { type: 'integer' } },
  'networking/v1.NetworkPolicyPeer': {
    podSelector: { type: 'object', ref: 'meta/v1.LabelSelector' },
    namespaceSelector: { type: 'object', ref: 'meta/v1.LabelSelector' },
    ipBlock: { type: 'object', ref: 'networking/v1.IPBlock' },
  },
  'networking/v1.IPBlock': { cidr: { type: 'string' }, except: { type: 'array', items: { type: 'string' } } },
  // networking.k8s.io/v1 Ingress and IngressClass.
  ...networkingTypes,
  // scheduling.k8s.io/v1 PriorityClass (k8s.io/api/scheduling/v1 types.go).
  'scheduling/v1.PriorityClass': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    value: { type: 'integer' },
    globalDefault: { type: 'boolean' },
    description: { type: 'string' },
    preemptionPolicy: { type: 'string' },
  },
  // core/v1 ReplicationController (k8s.io/api/core/v1 types.go).
  'core/v1.ReplicationController': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'core/v1.ReplicationControllerSpec' },
    status: { type: 'object', ref: 'core/v1.ReplicationControllerStatus' },
  },
  'core/v1.ReplicationControllerSpec': {
    replicas: { type: 'integer' },
    minReadySeconds: { type: 'integer' },
    selector: { type: 'map', values: { type: 'string' } },
    template: { type: 'object', ref: 'core/v1.PodTemplateSpec' },
  },
  'core/v1.ReplicationControllerStatus': {
    replicas: { type: 'integer' },
    fullyLabeledReplicas: { type: 'integer' },
    readyReplicas: { type: 'integer' },
    availableReplicas: { type: 'integer' },
    observedGeneration: { type: 'integer' },
    conditions: { type: 'array', items: { type: 'object', ref: 'core/v1.ReplicationControllerCondition' } },
  },
  'core/v1.ReplicationControllerCondition': {
    type: { type: 'string' },
    status: { type: 'string' },
    lastTransitionTime: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
  },
  // autoscaling/v2 HorizontalPodAutoscaler (k8s.io/api/autoscaling/v2 types.go) and autoscaling/v1's.
  'autoscaling/v2.HorizontalPodAutoscaler': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'autoscaling/v2.HorizontalPodAutoscalerSpec' },
    status: { type: 'object', ref: 'autoscaling/v2.HorizontalPodAutoscalerStatus' },
  },
  'autoscaling/v2.HorizontalPodAutoscalerSpec': {
    scaleTargetRef: { type: 'object', ref: 'autoscaling/v2.CrossVersionObjectReference' },
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    metrics: { type: 'array', items: { type: 'object', ref: 'autoscaling/v2.MetricSpec' } },
    behavior: { type: 'object', ref: 'autoscaling/v2.HorizontalPodAutoscalerBehavior' },
  },
  'autoscaling/v2.CrossVersionObjectReference': { kind: { type: 'string' }, name: { type: 'string' }, apiVersion: { type: 'string' } },
  'autoscaling/v2.MetricSpec': {
    type: { type: 'string' },
    object: { type: 'object', ref: 'autoscaling/v2.ObjectMetricSource' },
    pods: { type: 'object', ref: 'autoscaling/v2.PodsMetricSource' },
    resource: { type: 'object', ref: 'autoscaling/v2.ResourceMetricSource' },
    containerResource: { type: 'object', ref: 'autoscaling/v2.ContainerResourceMetricSource' },
    external: { type: 'object', ref: 'autoscaling/v2.ExternalMetricSource' },
  },
  'autoscaling/v2.MetricTarget': {
    type: { type: 'string' },
    value: { type: 'quantity' },
    averageValue: { type: 'quantity' },
    averageUtilization: { type: 'integer' },
  },
  'autoscaling/v2.MetricValueStatus': { value: { type: 'quantity' }, averageValue: { type: 'quantity' }, averageUtilization: { type: 'integer' } },
  'autoscaling/v2.MetricIdentifier': { name: { type: 'string' }, selector: { type: 'object', ref: 'meta/v1.LabelSelector' } },
  'autoscaling/v2.ResourceMetricSource': { name: { type: 'string' }, target: { type: 'object', ref: 'autoscaling/v2.MetricTarget' } },
  'autoscaling/v2.ContainerResourceMetricSource': {
    name: { type: 'string' },
    container: { type: 'string' },
    target: { type: 'object', ref: 'autoscaling/v2.MetricTarget' },
  },
  'autoscaling/v2.PodsMetricSource': {
    metric: { type: 'object', ref: 'autoscaling/v2.MetricIdentifier' },
    target: { type: 'object', ref: 'autoscaling/v2.MetricTarget' },
  },
  'autoscaling/v2.ExternalMetricSource': {
    metric: { type: 'object', ref: 'autoscaling/v2.MetricIdentifier' },
    target: { type: 'object', ref: 'autoscaling/v2.MetricTarget' },
  },
  'autoscaling/v2.ObjectMetricSource': {
    describedObject: { type: 'object', ref: 'autoscaling/v2.CrossVersionObjectReference' },
    metric: { type: 'object', ref: 'autoscaling/v2.MetricIdentifier' },
    target: { type: 'object', ref: 'autoscaling/v2.MetricTarget' },
  },
  'autoscaling/v2.HorizontalPodAutoscalerBehavior': {
    scaleUp: { type: 'object', ref: 'autoscaling/v2.HPAScalingRules' },
    scaleDown: { type: 'object', ref: 'autoscaling/v2.HPAScalingRules' },
  },
  'autoscaling/v2.HPAScalingRules': {
    stabilizationWindowSeconds: { type: 'integer' },
    selectPolicy: { type: 'string' },
    policies: { type: 'array', items: { type: 'object', ref: 'autoscaling/v2.HPAScalingPolicy' } },
  },
  'autoscaling/v2.HPAScalingPolicy': { type: { type: 'string' }, value: { type: 'integer' }, periodSeconds: { type: 'integer' } },
  'autoscaling/v2.HorizontalPodAutoscalerStatus': {
    observedGeneration: { type: 'integer' },
    lastScaleTime: { type: 'string' },
    currentReplicas: { type: 'integer' },
    desiredReplicas: { type: 'integer' },
    currentMetrics: { type: 'array', items: { type: 'object', ref: 'autoscaling/v2.MetricStatus' } },
    conditions: { type: 'array', items: { type: 'object', ref: 'autoscaling/v2.HorizontalPodAutoscalerCondition' } },
  },
  'autoscaling/v2.MetricStatus': {
    type: { type: 'string' },
    object: { type: 'any' },
    pods: { type: 'any' },
    resource: { type: 'object', ref: 'autoscaling/v2.ResourceMetricStatus' },
    containerResource: { type: 'any' },
    external: { type: 'any' },
  },
  'autoscaling/v2.ResourceMetricStatus': { name: { type: 'string' }, current: { type: 'object', ref: 'autoscaling/v2.MetricValueStatus' } },
  'autoscaling/v2.HorizontalPodAutoscalerCondition': {
    type: { type: 'string' },
    status: { type: 'string' },
    lastTransitionTime: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
  },
  'autoscaling/v1.HorizontalPodAutoscaler': {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
    spec: { type: 'object', ref: 'autoscaling/v1.HorizontalPodAutoscalerSpec' },
    status: { type: 'object', ref: 'autoscaling/v1.HorizontalPodAutoscalerStatus' },
  },
  'autoscaling/v1.HorizontalPodAutoscalerSpec': {
    scaleTargetRef: { type: 'object', ref: 'autoscaling/v2.CrossVersionObjectReference' },
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    targetCPUUtilizationPercentage: { type: 'integer' },
  },
  'autoscaling/v1.HorizontalPodAutoscalerStatus': {
    observedGeneration: { type: 'integer' },
    lastScaleTime: { type: 'string' },
    currentReplicas: { type: 'integer' },
    desiredReplicas: { type: 'integer' },
    currentCPUUtilizationPercentage: { type: 'integer' },
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
  Role: 'rbac/v1.Role',
  ClusterRole: 'rbac/v1.ClusterRole',
  RoleBinding: 'rbac/v1.RoleBinding',
  ClusterRoleBinding: 'rbac/v1.ClusterRoleBinding',
  ServiceAccount: 'core/v1.ServiceAccount',
  LimitRange: 'core/v1.LimitRange',
  ResourceQuota: 'core/v1.ResourceQuota',
  NetworkPolicy: 'networking/v1.NetworkPolicy',
  Ingress: 'networking/v1.Ingress',
  IngressClass: 'networking/v1.IngressClass',
  StorageClass: 'storage/v1.StorageClass',
  PersistentVolume: 'core/v1.PersistentVolume',
  PersistentVolumeClaim: 'core/v1.PersistentVolumeClaim',
  PriorityClass: 'scheduling/v1.PriorityClass',
  ReplicationController: 'core/v1.ReplicationController',
  HorizontalPodAutoscaler: 'autoscaling/v2.HorizontalPodAutoscaler',
  HorizontalPodAutoscalerV1: 'autoscaling/v1.HorizontalPodAutoscaler',
  RuntimeClass: 'node/v1.RuntimeClass',
} as const;
