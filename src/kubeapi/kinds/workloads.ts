// The resource table's rows for the workloads: apps/v1 Deployments, ReplicaSets, StatefulSets,
// DaemonSets and ControllerRevisions, batch/v1 Jobs and CronJobs: the versions the release the agent
// reports (1.30) serves; batch/v1beta1 CronJob was removed in 1.25, and kubectl 1.20 finds batch/v1
// through discovery. Kept by the object store (strategies.ts); status subresources, the
// autoscaling/v1 scale of the replicated kinds, and the pod template's strategic-merge keys
// (k8s.io/api/apps/v1 and batch/v1 types.go). Upstream: pkg/registry/apps/*, pkg/registry/batch/*.

import {
  controllerRevisionTable,
  cronJobTable,
  daemonSetTable,
  deploymentTable,
  jobTable,
  replicaSetTable,
  statefulSetTable,
} from '../../printers/workload-tables.js';
import { mergeSchema } from '../patch.js';
import { resource, type ResourceDef } from '../resource-def.js';
import { podMergeKeys } from './pods.js';

const objectVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
const statusVerbs = ['get', 'patch', 'update'] as const;

/** A pod's merge keys under a template's path (`spec.template.`), with the kind's own. */
function templateMergeKeys(prefix: string, own: Record<string, string>): Record<string, string> {
  const keys: Record<string, string> = { 'status.conditions': 'type', ...own };
  for (const [path, key] of Object.entries(podMergeKeys)) if (path.startsWith('spec.')) keys[`${prefix}${path}`] = key;
  return keys;
}

const replicaScale = { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector' };

export const deployments = resource({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  singular: 'deployment',
  shortNames: ['deploy'],
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('Deployment'),
  table: deploymentTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.template.', {})),
  status: statusVerbs,
  scale: replicaScale,
});

export const replicaSets = resource({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  resource: 'replicasets',
  singular: 'replicaset',
  shortNames: ['rs'],
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('ReplicaSet'),
  table: replicaSetTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.template.', {})),
  status: statusVerbs,
  scale: replicaScale,
});

export const statefulSets = resource({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  resource: 'statefulsets',
  singular: 'statefulset',
  shortNames: ['sts'],
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('StatefulSet'),
  table: statefulSetTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.template.', {})),
  status: statusVerbs,
  scale: replicaScale,
});

export const daemonSets = resource({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  resource: 'daemonsets',
  singular: 'daemonset',
  shortNames: ['ds'],
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('DaemonSet'),
  table: daemonSetTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.template.', {})),
  status: statusVerbs,
});

export const controllerRevisions = resource({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  resource: 'controllerrevisions',
  singular: 'controllerrevision',
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('ControllerRevision'),
  table: controllerRevisionTable,
});

export const jobs = resource({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  resource: 'jobs',
  singular: 'job',
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('Job'),
  table: jobTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.template.', {})),
  status: statusVerbs,
  fieldSelectors: { 'status.successful': (j) => String((j as { status?: { succeeded?: number } }).status?.succeeded ?? 0) },
});

const cronJobRow = {
  group: 'batch',
  kind: 'CronJob',
  resource: 'cronjobs',
  singular: 'cronjob',
  shortNames: ['cj'],
  categories: ['all'],
  namespaced: true,
  verbs: objectVerbs,
  table: cronJobTable,
  mergeSchema: mergeSchema(templateMergeKeys('spec.jobTemplate.spec.template.', {})),
  status: statusVerbs,
} as const;

export const cronJobs = resource({ ...cronJobRow, version: 'v1', storage: (b) => b.objects?.storage('CronJob') });

export const workloadResources: readonly ResourceDef[] = [deployments, replicaSets, statefulSets, daemonSets, controllerRevisions, jobs, cronJobs];
