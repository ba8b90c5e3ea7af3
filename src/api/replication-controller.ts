// v1 ReplicationControllers: the type, the defaults of core/v1 (SetDefaults_ReplicationController:
// the selector and the object's labels from the template's labels when unset, one replica, the
// template's pod defaults) and validation (pkg/apis/core/validation ValidateReplicationController:
// a non-empty selector map matching the template's labels, restartPolicy Always, no
// activeDeadlineSeconds). The ReplicaSet controller runs them through asReplicaSet, as upstream's
// replication manager runs the ReplicaSet controller over RCs converted by its informer adapters.

import type { ObjectMeta, PodTemplateSpec, ReplicaSet } from './types.js';
import { type FieldError, forbidden, invalid, newPath, required, sortFieldErrors } from './field-errors.js';
import { validateLabels, validateObjectMeta } from './validation/pod.js';
import { goStringMap, validateNonNegative, validatePodTemplate } from './validation/workload.js';
import { defaultTemplate } from './workload-defaults.js';

export interface ReplicationController {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { replicas?: number; minReadySeconds?: number; selector?: Record<string, string>; template?: PodTemplateSpec };
  status?: ReplicaSet['status'];
}

export function defaultReplicationController(input: ReplicationController): ReplicationController {
  const rc = structuredClone(input);
  const spec = (rc.spec ??= {});
  const labels = spec.template?.metadata?.labels;
  if (labels) {
    if (!spec.selector || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
    const meta = (rc.metadata ??= {}) as { labels?: Record<string, string> };
    if (!meta.labels || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
  }
  spec.replicas ??= 1;
  if (spec.template) spec.template = defaultTemplate(spec.template);
  return rc;
}

/** ValidateReplicationController. */
export function validateReplicationController(rc: ReplicationController): FieldError[] {
  const spec = newPath('spec');
  const s = rc.spec ?? {};
  const errs = validateObjectMeta(rc.metadata);
  errs.push(...validateNonNegative(s.minReadySeconds, spec.child('minReadySeconds')));
  if (!s.selector || Object.keys(s.selector).length === 0) errs.push(required(spec.child('selector'), ''));
  else errs.push(...validateLabels(s.selector, spec.child('selector')));
  errs.push(...validateNonNegative(s.replicas, spec.child('replicas')));
  const template = spec.child('template');
  if (!s.template) errs.push(required(template, ''));
  else {
    const selector = s.selector ?? {};
    const labels = s.template.metadata?.labels ?? {};
    if (Object.keys(selector).length > 0 && !Object.entries(selector).every(([k, v]) => labels[k] === v)) {
      errs.push(invalid(template.child('metadata', 'labels'), goStringMap(s.template.metadata?.labels), '`selector` does not match template `labels`'));
    }
    errs.push(...validatePodTemplate(s.template, template, { restartPolicies: ['Always'] }));
    if (s.template.spec?.activeDeadlineSeconds !== undefined)
      errs.push(forbidden(template.child('spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in ReplicationController is not Supported'));
  }
  return sortFieldErrors(errs);
}

/** The RC as the ReplicaSet controller reads it: its selector map as matchLabels. */
export function asReplicaSet(rc: ReplicationController): ReplicaSet {
  const { selector, ...spec } = rc.spec ?? {};
  return { ...rc, spec: { ...spec, selector: { matchLabels: { ...(selector ?? {}) } } } } as ReplicaSet;
}
