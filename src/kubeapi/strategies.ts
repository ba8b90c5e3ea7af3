// How each kind kept as a plain object is checked on its way into storage: schema type, defaults,
// validation and update rules (the apiserver's per-kind strategy.go, e.g. pkg/registry/core/configmap).
// A new kind stored by the agent's object store adds its strategy here.

import type { ConfigMap, ControllerRevision, CronJob, DaemonSet, Deployment, Job, ReplicaSet, Secret, StatefulSet } from '../api/types.js';
import { canonicalJSON, defaultSecret } from '../api/defaults.js';
import type { FieldError } from '../api/field-errors.js';
import { kindTypes } from '../api/schema.js';
import { validateConfigMap, validateSecret } from '../api/validation/index.js';
import {
  validateControllerRevision,
  validateControllerRevisionUpdate,
  validateDaemonSet,
  validateDaemonSetUpdate,
  validateDeployment,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetUpdate,
  validateStatefulSet,
  validateStatefulSetUpdate,
} from '../api/validation/apps.js';
import { validateCronJob, validateJob, validateJobUpdate, withGeneratedSelector } from '../api/validation/batch.js';
import {
  defaultCronJob,
  defaultDaemonSet,
  defaultDeployment,
  defaultEndpoints,
  defaultEndpointSlice,
  defaultJob,
  defaultReplicaSet,
  defaultStatefulSet,
  withTemplateLabels,
} from '../api/workload-defaults.js';
import {
  defaultService,
  validateEndpoints,
  validateEndpointSlice,
  validateService,
  validateServiceUpdate,
  type ServiceLike,
} from '../api/validation/service.js';
import { validatePodDisruptionBudget, type PodDisruptionBudget } from '../api/validation/policy.js';
import { validateServiceAccount, type ServiceAccount } from '../api/service-account.js';
import { defaultLimitRange, validateLimitRange, type LimitRange } from '../api/validation/limit-range.js';
import { validateResourceQuota, type ResourceQuota } from '../api/validation/resource-quota.js';
import { defaultNetworkPolicy, validateNetworkPolicy, type NetworkPolicy } from '../api/validation/network-policy.js';
import {
  defaultClassOf,
  defaultPriorityClass,
  isSystemPriorityClass,
  validatePriorityClass,
  validatePriorityClassUpdate,
  type PriorityClass,
} from '../api/validation/scheduling.js';
import { forbiddenObject } from '../http/status.js';
import { defaultHorizontalPodAutoscaler, hpaFromV1, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerV1 } from '../api/autoscaling.js';
import { validateHorizontalPodAutoscaler } from '../api/validation/autoscaling.js';
import { defaultReplicationController, validateReplicationController, type ReplicationController } from '../api/replication-controller.js';
import type { KubeObject, ObjectStrategy } from './backend.js';
import { ingressClassStrategy } from './ingress-strategy.js';
import { leaseStrategy } from './lease-strategy.js';
import { namespaceStrategy } from './namespace-strategy.js';
import { nodeStrategy } from './node-strategy.js';
import { rbacStrategies } from './rbac-strategy.js';
import { storageStrategies } from './storage-strategy.js';
import { runtimeClassStrategy } from './runtime-class-strategy.js';
import type { ServiceAllocator } from './service-allocator.js';
import { customResourceDefinitionStrategy } from './apiextensions/crd-strategy.js';

/** ValidateConfigMapUpdate / ValidateSecretUpdate: an immutable object's content may not change. */
function immutableContent(next: KubeObject, old: KubeObject): FieldError[] {
  if ((old as { immutable?: boolean }).immutable !== true) return [];
  const { metadata: _a, ...was } = old;
  const { metadata: _b, ...now } = next;
  return canonicalJSON(was) === canonicalJSON(now) ? [] : [{ type: 'Forbidden', field: 'data', detail: 'field is immutable when `immutable` is set' }];
}

export const configMapStrategy: ObjectStrategy = {
  kind: 'ConfigMap',
  resource: 'configmaps',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.ConfigMap,
  validate: (o) => validateConfigMap(o as ConfigMap),
  validateUpdate: immutableContent,
};

export const secretStrategy: ObjectStrategy = {
  kind: 'Secret',
  resource: 'secrets',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.Secret,
  defaults: (o) => defaultSecret(o as Secret) as KubeObject,
  validate: (o) => validateSecret(o as Secret),
  validateUpdate: immutableContent,
};

/** A workload kind's strategy: namespaced, with a status subresource (pkg/registry/apps/*, pkg/registry/batch/*). */
function workload<T>(
  kind: keyof typeof kindTypes,
  resource: string,
  apiVersion: string,
  rules: {
    defaults(o: T): T;
    validate(o: T): FieldError[];
    validateUpdate(next: T, old: T): FieldError[];
    /** The status a new object is stored with (its v1 type's fields without omitempty, at zero). */
    initialStatus: Record<string, number>;
  },
): ObjectStrategy {
  return {
    kind,
    resource,
    apiVersion,
    namespaced: true,
    schemaType: kindTypes[kind],
    statusSubresource: true,
    defaults: (o) => rules.defaults(o as T) as KubeObject,
    validate: (o) => rules.validate(o as T),
    validateUpdate: (next, old) => rules.validateUpdate(next as T, old as T),
    initialStatus: () => ({ ...rules.initialStatus }),
  };
}

export const deploymentStrategy = workload<Deployment>('Deployment', 'deployments', 'apps/v1', {
  defaults: defaultDeployment,
  validate: validateDeployment,
  validateUpdate: validateDeploymentUpdate,
  initialStatus: {},
});
export const replicaSetStrategy = workload<ReplicaSet>('ReplicaSet', 'replicasets', 'apps/v1', {
  defaults: defaultReplicaSet,
  validate: validateReplicaSet,
  validateUpdate: validateReplicaSetUpdate,
  initialStatus: { replicas: 0 },
});
export const statefulSetStrategy = workload<StatefulSet>('StatefulSet', 'statefulsets', 'apps/v1', {
  defaults: defaultStatefulSet,
  validate: validateStatefulSet,
  validateUpdate: validateStatefulSetUpdate,
  initialStatus: { replicas: 0, availableReplicas: 0 },
});
/** The annotation apps/v1 carries a DaemonSet's templateGeneration in (the internal type's field). */
const templateGenerationAnnotation = 'deprecated.daemonset.template.generation';

function withTemplateGeneration(o: KubeObject, generation: number): KubeObject {
  return { ...o, metadata: { ...o.metadata, annotations: { ...(o.metadata?.annotations ?? {}), [templateGenerationAnnotation]: String(generation) } } };
}

export const daemonSetStrategy: ObjectStrategy = {
  ...workload<DaemonSet>('DaemonSet', 'daemonsets', 'apps/v1', {
    defaults: defaultDaemonSet,
    validate: validateDaemonSet,
    validateUpdate: validateDaemonSetUpdate,
    initialStatus: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  }),
  // PrepareForCreate: templateGeneration 1, which apps/v1 carries as this annotation.
  prepareForCreate: (o) => withTemplateGeneration(o, 1),
  // PrepareForUpdate: the stored generation, one more when the template changed.
  prepareForUpdate: (next, old) => {
    const was = Number(old.metadata?.annotations?.[templateGenerationAnnotation] ?? '1') || 1;
    const template = (o: KubeObject) => canonicalJSON((o as DaemonSet).spec?.template);
    return withTemplateGeneration(next, template(next) === template(old) ? was : was + 1);
  },
};
export const jobStrategy: ObjectStrategy = {
  ...workload<Job>('Job', 'jobs', 'batch/v1', { defaults: defaultJob, validate: validateJob, validateUpdate: validateJobUpdate, initialStatus: {} }),
  prepareForCreate: (o) => withTemplateLabels(withGeneratedSelector(o as Job)) as KubeObject,
};
export const cronJobStrategy = workload<CronJob>('CronJob', 'cronjobs', 'batch/v1', {
  defaults: defaultCronJob,
  validate: validateCronJob,
  validateUpdate: () => [],
  initialStatus: {},
});

export const controllerRevisionStrategy: ObjectStrategy = {
  kind: 'ControllerRevision',
  resource: 'controllerrevisions',
  apiVersion: 'apps/v1',
  namespaced: true,
  schemaType: kindTypes.ControllerRevision,
  validate: (o) => validateControllerRevision(o as ControllerRevision),
  validateUpdate: (next, old) => validateControllerRevisionUpdate(next as ControllerRevision, old as ControllerRevision),
};

/**
 * Services (pkg/registry/core/service): defaults, validation, the ClusterIP and NodePorts from the
 * allocator, and the status the host gives a LoadBalancer (its ingress address), set by the server.
 */
/**
 * A Service's status as the agent publishes it (the role of a cloud's service controller): a
 * LoadBalancer gets the host's address as its ingress unless its status names one already (written
 * through the status subresource); other types have none.
 */
export function loadBalancerStatus(svc: ServiceLike, hostIP: string): ServiceLike['status'] {
  if (svc.spec?.type !== 'LoadBalancer') return { loadBalancer: {} };
  const ingress = svc.status?.loadBalancer?.ingress;
  return { ...svc.status, loadBalancer: { ...svc.status?.loadBalancer, ingress: ingress?.length ? ingress : [{ ip: hostIP }] } };
}

export function serviceStrategy(allocator: ServiceAllocator): ObjectStrategy {
  return {
    kind: 'Service',
    resource: 'services',
    apiVersion: 'v1',
    namespaced: true,
    schemaType: kindTypes.Service,
    defaults: (o) => defaultService(o as ServiceLike) as KubeObject,
    validate: (o) => validateService(o as ServiceLike),
    validateUpdate: (next, old) => validateServiceUpdate(next as ServiceLike, old as ServiceLike),
    // The status subresource: kubectl patch --subresource=status (a LoadBalancer's ingress) writes it.
    statusSubresource: true,
    allocate: (o, old, stored) => {
      const svc = o as ServiceLike;
      const errs = allocator.allocate(svc, old as ServiceLike | undefined, stored as ServiceLike[]);
      svc.status = loadBalancerStatus(svc, allocator.network.loadBalancerIP);
      return errs;
    },
    release: (o) => allocator.release(o as ServiceLike),
  };
}

export const endpointsStrategy: ObjectStrategy = {
  kind: 'Endpoints',
  resource: 'endpoints',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.Endpoints,
  defaults: (o) => defaultEndpoints(o as Parameters<typeof defaultEndpoints>[0]) as KubeObject,
  validate: (o) => validateEndpoints(o as Parameters<typeof validateEndpoints>[0]),
};

export const endpointSliceStrategy: ObjectStrategy = {
  kind: 'EndpointSlice',
  resource: 'endpointslices',
  apiVersion: 'discovery.k8s.io/v1',
  namespaced: true,
  schemaType: kindTypes.EndpointSlice,
  defaults: (o) => defaultEndpointSlice(o as Parameters<typeof defaultEndpointSlice>[0]) as KubeObject,
  validate: (o) => validateEndpointSlice(o as Parameters<typeof validateEndpointSlice>[0]),
};

/**
 * policy/v1 PodDisruptionBudgets (pkg/registry/policy/poddisruptionbudget): the spec may change (its
 * generation counts the changes), the status is the disruption controller's, and eviction's.
 */
export const podDisruptionBudgetStrategy: ObjectStrategy = {
  kind: 'PodDisruptionBudget',
  resource: 'poddisruptionbudgets',
  apiVersion: 'policy/v1',
  namespaced: true,
  schemaType: kindTypes.PodDisruptionBudget,
  statusSubresource: true,
  initialStatus: () => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }),
  validate: (o) => validatePodDisruptionBudget(o as PodDisruptionBudget),
  validateUpdate: () => [],
};

/** core/v1 ServiceAccounts (pkg/registry/core/serviceaccount): validated on create and update alike. */
export const serviceAccountStrategy: ObjectStrategy = {
  kind: 'ServiceAccount',
  resource: 'serviceaccounts',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.ServiceAccount,
  validate: (o) => validateServiceAccount(o as ServiceAccount),
  validateUpdate: (next) => validateServiceAccount(next as ServiceAccount),
};

/** v1 LimitRanges (pkg/registry/core/limitrange): defaulted and validated alike on create and update. */
export const limitRangeStrategy: ObjectStrategy = {
  kind: 'LimitRange',
  resource: 'limitranges',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.LimitRange,
  defaults: (o) => defaultLimitRange(o as LimitRange) as KubeObject,
  validate: (o) => validateLimitRange(o as LimitRange),
};

/**
 * v1 ResourceQuotas (pkg/registry/core/resourcequota): the status is the quota controller's and the
 * quota admission's (a created quota starts with an empty one); the scopes cannot change.
 */
export const resourceQuotaStrategy: ObjectStrategy = {
  kind: 'ResourceQuota',
  resource: 'resourcequotas',
  apiVersion: 'v1',
  namespaced: true,
  schemaType: kindTypes.ResourceQuota,
  statusSubresource: true,
  initialStatus: () => ({}),
  validate: (o) => validateResourceQuota(o as ResourceQuota),
  validateUpdate: (next, old) => {
    const scopes = (o: KubeObject) => canonicalJSON((o as ResourceQuota).spec?.scopes ?? []);
    return scopes(next) === scopes(old)
      ? []
      : [{ type: 'Invalid', field: 'spec.scopes', value: (next as ResourceQuota).spec?.scopes ?? [], detail: 'field is immutable' }];
  },
};

/** networking.k8s.io/v1 NetworkPolicies (pkg/registry/networking/networkpolicy): defaulted and validated alike on create and update. */
export const networkPolicyStrategy: ObjectStrategy = {
  kind: 'NetworkPolicy',
  resource: 'networkpolicies',
  apiVersion: 'networking.k8s.io/v1',
  namespaced: true,
  schemaType: kindTypes.NetworkPolicy,
  defaults: (o) => defaultNetworkPolicy(o as NetworkPolicy) as KubeObject,
  validate: (o) => validateNetworkPolicy(o as NetworkPolicy),
};

/**
 * scheduling.k8s.io/v1 PriorityClasses (pkg/registry/scheduling/priorityclass, and the Priority
 * admission plugin's validatePriorityClass): one global default at most, the system classes never deleted.
 */
export const priorityClassStrategy: ObjectStrategy = {
  kind: 'PriorityClass',
  resource: 'priorityclasses',
  apiVersion: 'scheduling.k8s.io/v1',
  namespaced: false,
  schemaType: kindTypes.PriorityClass,
  defaults: (o) => defaultPriorityClass(o as PriorityClass) as KubeObject,
  validate: (o) => validatePriorityClass(o as PriorityClass),
  validateUpdate: (next, old) => validatePriorityClassUpdate(next as PriorityClass, old as PriorityClass),
  admit: (o, read, old) => {
    const pc = o as PriorityClass;
    if (!pc.globalDefault) return o;
    const dpc = defaultClassOf(read('PriorityClass') as PriorityClass[]);
    const name = pc.metadata?.name ?? '';
    // A second default created, or another class made the default while one exists.
    if (dpc && (old === undefined || dpc.metadata?.name !== name)) {
      throw forbiddenObject(
        'priorityclasses',
        'scheduling.k8s.io',
        name,
        `PriorityClass ${dpc.metadata?.name} is already marked as default. Only one default can exist`,
      );
    }
    return o;
  },
  admitDelete: (o) => {
    const name = o.metadata?.name ?? '';
    if (isSystemPriorityClass(name))
      throw forbiddenObject('priorityclasses', 'scheduling.k8s.io', name, 'this is a system priority class and cannot be deleted');
  },
};

/**
 * HorizontalPodAutoscalers, stored as autoscaling/v2 (pkg/registry/autoscaling/horizontalpodautoscaler):
 * the spec may change, the status is the HPA controller's (desiredReplicas has no omitempty).
 */
export const horizontalPodAutoscalerStrategy: ObjectStrategy = {
  kind: 'HorizontalPodAutoscaler',
  resource: 'horizontalpodautoscalers',
  apiVersion: 'autoscaling/v2',
  namespaced: true,
  schemaType: kindTypes.HorizontalPodAutoscaler,
  versions: { 'autoscaling/v1': { schemaType: kindTypes.HorizontalPodAutoscalerV1, toStored: (o) => hpaFromV1(o as HorizontalPodAutoscalerV1) as KubeObject } },
  statusSubresource: true,
  initialStatus: () => ({ desiredReplicas: 0 }),
  defaults: (o) => defaultHorizontalPodAutoscaler(o as HorizontalPodAutoscaler) as KubeObject,
  validate: (o) => validateHorizontalPodAutoscaler(o as HorizontalPodAutoscaler),
  validateUpdate: () => [],
};

/** v1 ReplicationControllers (pkg/registry/core/replicationcontroller): a workload whose selector may change. */
export const replicationControllerStrategy = workload<ReplicationController>('ReplicationController', 'replicationcontrollers', 'v1', {
  defaults: defaultReplicationController,
  validate: validateReplicationController,
  validateUpdate: () => [],
  initialStatus: { replicas: 0 },
});

/** Every kind the agent's object store keeps (Services join them with the agent's allocator: serviceStrategy). */
/** Every kind the agent's object store keeps (Services join them with the agent's allocator: serviceStrategy; Ingresses with the stored classes: ingressStrategy). */
export const objectStrategies: readonly ObjectStrategy[] = [
  configMapStrategy,
  secretStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
  daemonSetStrategy,
  controllerRevisionStrategy,
  jobStrategy,
  cronJobStrategy,
  endpointsStrategy,
  endpointSliceStrategy,
  namespaceStrategy,
  nodeStrategy,
  leaseStrategy,
  podDisruptionBudgetStrategy,
  ...rbacStrategies,
  serviceAccountStrategy,
  limitRangeStrategy,
  resourceQuotaStrategy,
  networkPolicyStrategy,
  ingressClassStrategy,
  ...storageStrategies,
  priorityClassStrategy,
  horizontalPodAutoscalerStrategy,
  replicationControllerStrategy,
  runtimeClassStrategy,
  customResourceDefinitionStrategy(),
];
