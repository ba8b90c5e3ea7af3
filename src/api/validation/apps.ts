// The API server's validation of the apps/v1 kinds (pkg/apis/apps/validation/validation.go):
// Deployments, ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions on create and update.

import type { ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet } from '../types.js';
import { type FieldError, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { canonicalJSON } from '../defaults.js';
import { validateObjectMeta } from './pod.js';
import { intOrPercentValue, validateIntOrPercent, validateNonNegative, validateSelectorAndTemplate } from './workload.js';

const spec = newPath('spec');
const appsTemplate = { restartPolicies: ['Always'] };

function immutableField(next: unknown, old: unknown, path: string): FieldError[] {
  return canonicalJSON(next) === canonicalJSON(old) ? [] : [invalid(path, next, 'field is immutable')];
}

export function validateDeployment(d: Deployment): FieldError[] {
  const errs = validateObjectMeta(d.metadata);
  const s = d.spec;
  errs.push(...validateNonNegative(s?.replicas, spec.child('replicas')));
  errs.push(...validateSelectorAndTemplate(s?.selector, s?.template, spec, { ...appsTemplate, kindWord: 'deployment' }));
  const strategy = s?.strategy ?? {};
  const sp = spec.child('strategy');
  if (strategy.type === 'Recreate') {
    if (strategy.rollingUpdate) errs.push(forbidden(sp.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'"));
  } else if (strategy.type === 'RollingUpdate') {
    const ru = strategy.rollingUpdate ?? {};
    const rp = sp.child('rollingUpdate');
    errs.push(...validateIntOrPercent(ru.maxUnavailable, rp.child('maxUnavailable')));
    errs.push(...validateIntOrPercent(ru.maxSurge, rp.child('maxSurge')));
    if (intOrPercentValue(ru.maxSurge).value === 0 && intOrPercentValue(ru.maxUnavailable).value === 0) {
      errs.push(invalid(rp.child('maxUnavailable'), ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
    }
  } else {
    errs.push(notSupported(sp.child('type'), strategy.type ?? '', ['Recreate', 'RollingUpdate']));
  }
  errs.push(...validateNonNegative(s?.revisionHistoryLimit, spec.child('revisionHistoryLimit')));
  errs.push(...validateNonNegative(s?.minReadySeconds, spec.child('minReadySeconds')));
  if (s?.progressDeadlineSeconds !== undefined) {
    errs.push(...validateNonNegative(s.progressDeadlineSeconds, spec.child('progressDeadlineSeconds')));
    if (s.progressDeadlineSeconds <= (s.minReadySeconds ?? 0)) {
      errs.push(invalid(spec.child('progressDeadlineSeconds'), s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  return sortFieldErrors(errs);
}

export function validateDeploymentUpdate(next: Deployment, old: Deployment): FieldError[] {
  return immutableField(next.spec?.selector, old.spec?.selector, 'spec.selector');
}

export function validateReplicaSet(rs: ReplicaSet): FieldError[] {
  const errs = validateObjectMeta(rs.metadata);
  errs.push(...validateNonNegative(rs.spec?.replicas, spec.child('replicas')));
  errs.push(...validateNonNegative(rs.spec?.minReadySeconds, spec.child('minReadySeconds')));
  errs.push(...validateSelectorAndTemplate(rs.spec?.selector, rs.spec?.template, spec, { ...appsTemplate, kindWord: 'deployment' }));
  return sortFieldErrors(errs);
}

export function validateReplicaSetUpdate(next: ReplicaSet, old: ReplicaSet): FieldError[] {
  return immutableField(next.spec?.selector, old.spec?.selector, 'spec.selector');
}

export function validateStatefulSet(sts: StatefulSet): FieldError[] {
  const errs = validateObjectMeta(sts.metadata);
  const s = sts.spec;
  const policy = s?.podManagementPolicy ?? '';
  if (policy === '') errs.push(required(spec.child('podManagementPolicy'), ''));
  else if (policy !== 'OrderedReady' && policy !== 'Parallel') {
    errs.push(invalid(spec.child('podManagementPolicy'), policy, "must be 'OrderedReady' or 'Parallel'"));
  }
  const strategy = s?.updateStrategy ?? {};
  const up = spec.child('updateStrategy');
  if (strategy.type === 'OnDelete') {
    if (strategy.rollingUpdate) errs.push(invalid(up.child('rollingUpdate'), strategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
  } else if (strategy.type === 'RollingUpdate') {
    errs.push(...validateNonNegative(strategy.rollingUpdate?.partition, up.child('rollingUpdate', 'partition')));
    errs.push(...validateIntOrPercent(strategy.rollingUpdate?.maxUnavailable, up.child('rollingUpdate', 'maxUnavailable')));
  } else {
    errs.push(invalid(up, strategy, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  errs.push(...validateNonNegative(s?.replicas, spec.child('replicas')));
  errs.push(...validateNonNegative(s?.minReadySeconds, spec.child('minReadySeconds')));
  errs.push(...validateNonNegative(s?.ordinals?.start, spec.child('ordinals', 'start')));
  // The containers may mount the volumeClaimTemplates by name, as volumes of the pods made from them.
  const claims = (s?.volumeClaimTemplates ?? []).map((c) => ({ name: c.metadata?.name ?? '', emptyDir: {} }));
  const template =
    claims.length > 0 && s?.template?.spec
      ? {
          ...s.template,
          spec: { ...s.template.spec, volumes: [...(s.template.spec.volumes ?? []).filter((v) => !claims.some((c) => c.name === v.name)), ...claims] },
        }
      : s?.template;
  errs.push(...validateSelectorAndTemplate(s?.selector, template, spec, { ...appsTemplate, kindWord: 'statefulset' }));
  if (s?.template?.spec?.activeDeadlineSeconds !== undefined) {
    errs.push(forbidden(spec.child('template', 'spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  return sortFieldErrors(errs);
}

/** ValidateStatefulSetUpdate: only replicas, ordinals, template, updateStrategy, PVC retention and minReadySeconds change. */
export function validateStatefulSetUpdate(next: StatefulSet, old: StatefulSet): FieldError[] {
  const rest = (s: StatefulSet) => {
    const {
      replicas: _r,
      ordinals: _o,
      template: _t,
      updateStrategy: _u,
      persistentVolumeClaimRetentionPolicy: _p,
      minReadySeconds: _m,
      ...other
    } = s.spec ?? ({} as NonNullable<StatefulSet['spec']>);
    return canonicalJSON(other);
  };
  if (rest(next) === rest(old)) return [];
  return [
    forbidden(
      spec,
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

export function validateDaemonSet(ds: DaemonSet): FieldError[] {
  const errs = validateObjectMeta(ds.metadata);
  const s = ds.spec;
  errs.push(...validateSelectorAndTemplate(s?.selector, s?.template, spec, { ...appsTemplate, kindWord: 'daemonset' }));
  const strategy = s?.updateStrategy ?? {};
  const up = spec.child('updateStrategy');
  if (strategy.type === 'RollingUpdate') {
    const ru = strategy.rollingUpdate ?? {};
    errs.push(...validateIntOrPercent(ru.maxUnavailable, up.child('rollingUpdate', 'maxUnavailable')));
    errs.push(...validateIntOrPercent(ru.maxSurge, up.child('rollingUpdate', 'maxSurge')));
    if (intOrPercentValue(ru.maxSurge).value === 0 && intOrPercentValue(ru.maxUnavailable).value === 0) {
      errs.push(invalid(up.child('rollingUpdate', 'maxUnavailable'), ru.maxUnavailable, 'cannot be 0 when maxSurge is 0'));
    }
  } else if (strategy.type !== 'OnDelete') {
    errs.push(notSupported(up.child('type'), strategy.type ?? '', ['OnDelete', 'RollingUpdate']));
  }
  errs.push(...validateNonNegative(s?.minReadySeconds, spec.child('minReadySeconds')));
  errs.push(...validateNonNegative(s?.revisionHistoryLimit, spec.child('revisionHistoryLimit')));
  return sortFieldErrors(errs);
}

export function validateDaemonSetUpdate(next: DaemonSet, old: DaemonSet): FieldError[] {
  return immutableField(next.spec?.selector, old.spec?.selector, 'spec.selector');
}

export function validateControllerRevision(cr: ControllerRevision): FieldError[] {
  const errs = validateObjectMeta(cr.metadata);
  if (cr.data === undefined || cr.data === null) errs.push(required(newPath('data'), 'data is mandatory'));
  errs.push(...validateNonNegative(cr.revision, newPath('revision')));
  return sortFieldErrors(errs);
}

export function validateControllerRevisionUpdate(next: ControllerRevision, old: ControllerRevision): FieldError[] {
  return immutableField(next.data, old.data, 'data');
}
