// The kinds a manifest may hold beside Pods, ConfigMaps and Secrets (objectKinds below: Namespaces,
// Services, the workloads and the policy, access, networking and storage kinds the agent serves), each
// with the API server's defaults and validation (the strategies of pkg/registry/*), so a file is
// judged here in the words the agent's API would answer with.
// The kinds a manifest may hold beside Pods, ConfigMaps and Secrets: core/v1 Namespaces, Services and
// ReplicationControllers, the
// workloads (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job, CronJob), policy/v1
// PodDisruptionBudgets, autoscaling/v2 and v1 HorizontalPodAutoscalers and scheduling.k8s.io/v1 PriorityClasses, each with the API server's defaults and validation (the strategies of
// The kinds a manifest may hold beside Pods, ConfigMaps and Secrets: core/v1 Namespaces and Services and the
// workloads (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job, CronJob) and policy/v1
// PodDisruptionBudgets and node.k8s.io/v1 RuntimeClasses, each with the API server's defaults and validation (the strategies of
// pkg/registry/apps/*, batch/*, core/service, policy/poddisruptionbudget), so a file is judged here in the words the agent's API would answer with.

import type { CronJob, DaemonSet, Deployment, Job, ObjectMeta, ReplicaSet, StatefulSet } from '../api/types.js';
import type { FieldError } from '../api/field-errors.js';
import { kindTypes } from '../api/schema.js';
import { validateDaemonSet, validateDeployment, validateReplicaSet, validateStatefulSet } from '../api/validation/apps.js';
import { validateCronJob, validateJob, withGeneratedSelector } from '../api/validation/batch.js';
import { defaultService, validateService, type ServiceLike } from '../api/validation/service.js';
import { defaultNamespaceObject, validateNamespace, type NamespaceObject } from '../api/namespace.js';
import { validatePodDisruptionBudget, type PodDisruptionBudget } from '../api/validation/policy.js';
import {
  defaultBinding,
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
  type ClusterRole,
  type ClusterRoleBinding,
  type Role,
  type RoleBinding,
} from '../api/validation/rbac.js';
import { validateServiceAccount, type ServiceAccount } from '../api/service-account.js';
import { defaultLimitRange, validateLimitRange, type LimitRange } from '../api/validation/limit-range.js';
import { validateResourceQuota, type ResourceQuota } from '../api/validation/resource-quota.js';
import { defaultNetworkPolicy, validateNetworkPolicy, type NetworkPolicy } from '../api/validation/network-policy.js';
import { defaultIngressClass, validateIngress, validateIngressClass, type Ingress, type IngressClass } from '../api/validation/networking.js';
import {
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  defaultStorageClass,
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validateStorageClass,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../api/validation/storage.js';
import { defaultPriorityClass, validatePriorityClass, type PriorityClass } from '../api/validation/scheduling.js';
import { defaultHorizontalPodAutoscaler, hpaFromV1, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerV1 } from '../api/autoscaling.js';
import { validateHorizontalPodAutoscaler } from '../api/validation/autoscaling.js';
import { defaultReplicationController, validateReplicationController, type ReplicationController } from '../api/replication-controller.js';
import { validateRuntimeClass, type RuntimeClass } from '../api/validation/node.js';
import { defaultCronJob, defaultDaemonSet, defaultDeployment, defaultJob, defaultReplicaSet, defaultStatefulSet } from '../api/workload-defaults.js';

/** An object of one of these kinds, as loaded: apiVersion and kind set, namespace defaulted. */
export interface ManifestObject {
  apiVersion: string;
  kind: ObjectKind;
  metadata?: ObjectMeta;
  spec?: unknown;
}

interface KindRules {
  /** The group/versions a manifest may name it in (the first is the one the agent stores). */
  apiVersions: readonly string[];
  /** The plural resource, as in API paths and in kubectl's `deployment.apps/web` names. */
  resource: string;
  singular: string;
  /** Whether its objects live in a namespace (a Namespace itself does not). */
  namespaced: boolean;
  defaults(o: ManifestObject): ManifestObject;
  validate(o: ManifestObject): FieldError[];
}

function rules<T>(apiVersions: readonly string[], resource: string, singular: string, defaults: (o: T) => T, validate: (o: T) => FieldError[]): KindRules {
  return {
    apiVersions,
    resource,
    singular,
    namespaced: true,
    defaults: (o) => defaults(o as unknown as T) as unknown as ManifestObject,
    validate: (o) => validate(o as unknown as T),
  };
}

/** The server validates a Job with the uid it gives it and the selector made of that uid (PrepareForCreate). */
function validateAsCreated(job: Job): FieldError[] {
  const created = { ...job, metadata: { ...job.metadata, uid: job.metadata?.uid || '00000000-0000-0000-0000-000000000000' } };
  return validateJob(withGeneratedSelector(created));
}

const rbacV1 = 'rbac.authorization.k8s.io/v1';
/** An autoscaling/v1 HPA is judged as the API server judges it: converted to the stored version first. */
const hpaDefaults = (o: HorizontalPodAutoscaler) =>
  defaultHorizontalPodAutoscaler(o.apiVersion === 'autoscaling/v1' ? hpaFromV1(o as unknown as HorizontalPodAutoscalerV1) : o);

const serviceDefaults = (s: ServiceLike) => defaultService(structuredClone(s));

export const objectKinds = {
  Namespace: { ...rules<NamespaceObject>(['v1'], 'namespaces', 'namespace', defaultNamespaceObject, validateNamespace), namespaced: false },
  Service: rules<ServiceLike>(['v1'], 'services', 'service', serviceDefaults, validateService),
  Deployment: rules<Deployment>(['apps/v1'], 'deployments', 'deployment', defaultDeployment, validateDeployment),
  ReplicaSet: rules<ReplicaSet>(['apps/v1'], 'replicasets', 'replicaset', defaultReplicaSet, validateReplicaSet),
  StatefulSet: rules<StatefulSet>(['apps/v1'], 'statefulsets', 'statefulset', defaultStatefulSet, validateStatefulSet),
  DaemonSet: rules<DaemonSet>(['apps/v1'], 'daemonsets', 'daemonset', defaultDaemonSet, validateDaemonSet),
  Job: rules<Job>(['batch/v1'], 'jobs', 'job', defaultJob, validateAsCreated),
  CronJob: rules<CronJob>(['batch/v1'], 'cronjobs', 'cronjob', defaultCronJob, validateCronJob),
  PodDisruptionBudget: rules<PodDisruptionBudget>(['policy/v1'], 'poddisruptionbudgets', 'poddisruptionbudget', structuredClone, validatePodDisruptionBudget),
  Role: rules<Role>([rbacV1], 'roles', 'role', structuredClone, validateRole),
  ClusterRole: { ...rules<ClusterRole>([rbacV1], 'clusterroles', 'clusterrole', structuredClone, validateClusterRole), namespaced: false },
  RoleBinding: rules<RoleBinding>([rbacV1], 'rolebindings', 'rolebinding', defaultBinding, validateRoleBinding),
  ClusterRoleBinding: {
    ...rules<ClusterRoleBinding>([rbacV1], 'clusterrolebindings', 'clusterrolebinding', defaultBinding, validateClusterRoleBinding),
    namespaced: false,
  },
  ServiceAccount: rules<ServiceAccount>(['v1'], 'serviceaccounts', 'serviceaccount', structuredClone, validateServiceAccount),
  LimitRange: rules<LimitRange>(['v1'], 'limitranges', 'limitrange', defaultLimitRange, validateLimitRange),
  ResourceQuota: rules<ResourceQuota>(['v1'], 'resourcequotas', 'resourcequota', structuredClone, validateResourceQuota),
  NetworkPolicy: rules<NetworkPolicy>(['networking.k8s.io/v1'], 'networkpolicies', 'networkpolicy', defaultNetworkPolicy, validateNetworkPolicy),
  Ingress: rules<Ingress>(['networking.k8s.io/v1'], 'ingresses', 'ingress', structuredClone, validateIngress),
  IngressClass: {
    ...rules<IngressClass>(['networking.k8s.io/v1'], 'ingressclasses', 'ingressclass', (o) => defaultIngressClass(structuredClone(o)), validateIngressClass),
    namespaced: false,
  },
  StorageClass: {
    ...rules<StorageClass>(['storage.k8s.io/v1'], 'storageclasses', 'storageclass', defaultStorageClass, validateStorageClass),
    namespaced: false,
  },
  PersistentVolume: {
    ...rules<PersistentVolume>(['v1'], 'persistentvolumes', 'persistentvolume', defaultPersistentVolume, validatePersistentVolume),
    namespaced: false,
  },
  PersistentVolumeClaim: rules<PersistentVolumeClaim>(
    ['v1'],
    'persistentvolumeclaims',
    'persistentvolumeclaim',
    defaultPersistentVolumeClaim,
    validatePersistentVolumeClaim,
  ),
  ReplicationController: rules<ReplicationController>(
    ['v1'],
    'replicationcontrollers',
    'replicationcontroller',
    defaultReplicationController,
    validateReplicationController,
  ),
  HorizontalPodAutoscaler: rules<HorizontalPodAutoscaler>(
    ['autoscaling/v2', 'autoscaling/v1'],
    'horizontalpodautoscalers',
    'horizontalpodautoscaler',
    hpaDefaults,
    validateHorizontalPodAutoscaler,
  ),
  PriorityClass: {
    ...rules<PriorityClass>(['scheduling.k8s.io/v1'], 'priorityclasses', 'priorityclass', defaultPriorityClass, validatePriorityClass),
    namespaced: false,
  },
  RuntimeClass: { ...rules<RuntimeClass>(['node.k8s.io/v1'], 'runtimeclasses', 'runtimeclass', structuredClone, validateRuntimeClass), namespaced: false },
} as const satisfies Record<string, KindRules>;

export type ObjectKind = keyof typeof objectKinds;

/** The schema type an object of a kind is strictly decoded against in one of its versions. */
export function schemaTypeOf(kind: ObjectKind, apiVersion: string): string {
  return kind === 'HorizontalPodAutoscaler' && apiVersion === 'autoscaling/v1' ? kindTypes.HorizontalPodAutoscalerV1 : kindTypes[kind];
}

export function isObjectKind(kind: string): kind is ObjectKind {
  return Object.hasOwn(objectKinds, kind) && kind in kindTypes;
}

/**
 * Versions of these kinds that Kubernetes removed before the release the agent serves (1.30), with the
 * release that removed them: a manifest naming one is told which version to write instead.
 */
export const removedVersions: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  CronJob: { 'batch/v1beta1': '1.25' },
  Deployment: { 'extensions/v1beta1': '1.16', 'apps/v1beta1': '1.16', 'apps/v1beta2': '1.16' },
  ReplicaSet: { 'extensions/v1beta1': '1.16', 'apps/v1beta1': '1.16', 'apps/v1beta2': '1.16' },
  StatefulSet: { 'apps/v1beta1': '1.16', 'apps/v1beta2': '1.16' },
  DaemonSet: { 'extensions/v1beta1': '1.16', 'apps/v1beta2': '1.16' },
  PodDisruptionBudget: { 'policy/v1beta1': '1.25' },
  Role: { 'rbac.authorization.k8s.io/v1beta1': '1.22', 'rbac.authorization.k8s.io/v1alpha1': '1.22' },
  ClusterRole: { 'rbac.authorization.k8s.io/v1beta1': '1.22', 'rbac.authorization.k8s.io/v1alpha1': '1.22' },
  RoleBinding: { 'rbac.authorization.k8s.io/v1beta1': '1.22', 'rbac.authorization.k8s.io/v1alpha1': '1.22' },
  ClusterRoleBinding: { 'rbac.authorization.k8s.io/v1beta1': '1.22', 'rbac.authorization.k8s.io/v1alpha1': '1.22' },
  NetworkPolicy: { 'extensions/v1beta1': '1.16' },
  Ingress: { 'extensions/v1beta1': '1.22', 'networking.k8s.io/v1beta1': '1.22' },
  IngressClass: { 'networking.k8s.io/v1beta1': '1.22' },
  HorizontalPodAutoscaler: { 'autoscaling/v2beta1': '1.25', 'autoscaling/v2beta2': '1.26' },
  RuntimeClass: { 'node.k8s.io/v1beta1': '1.25', 'node.k8s.io/v1alpha1': '1.25' },
};

/** The group of an apiVersion (`apps` of `apps/v1`; '' for the core group's `v1`). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** kubectl's name of an object: `deployment.apps/web`, `job.batch/migrate`, `service/web`. */
export function qualifiedName(o: { apiVersion?: string; kind?: string; metadata?: { name?: string; generateName?: string } }): string {
  const singular = isObjectKind(o.kind ?? '') ? objectKinds[o.kind as ObjectKind].singular : (o.kind ?? '').toLowerCase();
  const group = groupOf(o.apiVersion ?? 'v1');
  return `${singular}${group ? `.${group}` : ''}/${o.metadata?.name || (o.metadata?.generateName ?? '')}`;
}
