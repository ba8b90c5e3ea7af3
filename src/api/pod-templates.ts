// Where each workload kind keeps the pod it makes (the template of apps/v1 Deployment, ReplicaSet,
// StatefulSet, DaemonSet and batch/v1 Job at spec.template, a CronJob's at
// spec.jobTemplate.spec.template), so a check written for pods judges a template in the same words,
// under the template's path: the API server's pod warnings of pkg/api/pod (GetWarningsForPodTemplate)
// are the same checks run on a template with its field path.

import type { Pod, PodTemplateSpec } from './types.js';

/** The template's field path in an object of each kind that has one. */
const templatePaths: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  PodTemplate: ['template'],
  ReplicationController: ['spec', 'template'],
};

interface AnyObject {
  kind?: string;
  metadata?: unknown;
  spec?: unknown;
}

/** The pod an object stands for: a Pod itself (prefix ''), or its template as a pod (prefix `spec.template.`); undefined for other kinds. */
export function podOf(obj: AnyObject): { pod: Pod; prefix: string } | undefined {
  if (obj.kind === 'Pod') return { pod: obj as Pod, prefix: '' };
  const path = obj.kind !== undefined && Object.hasOwn(templatePaths, obj.kind) ? templatePaths[obj.kind]! : undefined;
  if (!path) return undefined;
  let at: unknown = obj;
  for (const p of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[p] : undefined;
  if (at === null || typeof at !== 'object') return undefined;
  const template = at as PodTemplateSpec;
  return { pod: { apiVersion: 'v1', kind: 'Pod', metadata: template.metadata ?? {}, spec: template.spec ?? { containers: [] } }, prefix: `${path.join('.')}.` };
}

/**
 * A check of pods made a check of objects: a Pod is checked as it is, a workload's template as a pod,
 * with each finding's field moved under the template's path (`spec.containers[0]` →
 * `spec.template.spec.containers[0]`); other kinds have nothing to find.
 */
export function onPodOrTemplate<T extends { field: string }>(check: (pod: Pod) => T[]): (obj: AnyObject) => T[] {
  return (obj) => {
    const of = podOf(obj);
    if (!of) return [];
    return check(of.pod).map((f) => (of.prefix ? { ...f, field: `${of.prefix}${f.field}` } : f));
  };
}
