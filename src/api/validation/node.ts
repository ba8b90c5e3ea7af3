// Validation of node.k8s.io/v1 RuntimeClasses (pkg/apis/node/validation ValidateRuntimeClass,
// ValidateRuntimeClassUpdate): a cluster-scoped name, a handler that is a DNS-1123 label and never
// changes, the overhead's podFixed as resource limits are checked, and the scheduling's nodeSelector
// (labels) and tolerations (corevalidation.ValidateTolerations, unique by key, operator, value, effect).

import type { Overhead, RuntimeClass, Scheduling } from 'kubernetes-types/node/v1.js';
import type { Toleration } from '../types.js';
import { type FieldError, type FieldPath, duplicate, invalid, newPath, notSupported, required } from '../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';
import { validateAnnotations, validateLabels } from './pod.js';
import { validateResourceRequirements } from './resources.js';

export type { Overhead, RuntimeClass, Scheduling };

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** ValidateObjectMeta of a cluster-scoped object whose name is a DNS-1123 subdomain. */
function validateClusterObjectMeta(meta: RuntimeClass['metadata']): FieldError[] {
  const path = newPath('metadata');
  const m = meta ?? {};
  const errs: FieldError[] = [];
  if (!m.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(m.name).map((msg) => invalid(path.child('name'), m.name, msg)));
  errs.push(...validateLabels(m.labels, path.child('labels')));
  errs.push(...validateAnnotations(m.annotations, path.child('annotations')));
  return errs;
}

/** corevalidation.ValidateTolerations. */
export function validateTolerations(tolerations: readonly Toleration[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (tolerations ?? []).forEach((t, i) => {
    const p = path.index(i);
    if (t.key) errs.push(...isQualifiedName(t.key).map((m) => invalid(p.child('key'), t.key, m)));
    if (!t.key && t.operator !== 'Exists')
      errs.push(invalid(p.child('operator'), t.operator ?? '', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute')
      errs.push(invalid(p.child('effect'), t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    switch (t.operator ?? '') {
      case 'Equal':
      case '': {
        const msgs = isValidLabelValue(t.value ?? '');
        if (msgs.length) errs.push(invalid(p.child('operator'), t.value ?? '', msgs.join(';')));
        break;
      }
      case 'Exists':
        if (t.value) errs.push(invalid(p.child('operator'), t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(p.child('operator'), t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !taintEffects.includes(t.effect)) errs.push(notSupported(p.child('effect'), t.effect, taintEffects));
  });
  return errs;
}

function validateScheduling(s: Scheduling, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (s.nodeSelector) errs.push(...validateLabels(s.nodeSelector, path.child('nodeSelector')));
  const tp = path.child('tolerations');
  errs.push(...validateTolerations(s.tolerations as Toleration[] | undefined, tp));
  const seen = new Set<string>();
  (s.tolerations ?? []).forEach((t, i) => {
    const key = JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
    if (seen.has(key)) errs.push(duplicate(tp.index(i), t));
    seen.add(key);
  });
  return errs;
}

/** ValidateRuntimeClass. */
export function validateRuntimeClass(rc: RuntimeClass): FieldError[] {
  const errs = validateClusterObjectMeta(rc.metadata);
  const handler = rc.handler ?? '';
  errs.push(...isDNS1123Label(handler).map((m) => invalid(newPath('handler'), handler, m)));
  if (rc.overhead) errs.push(...validateResourceRequirements({ limits: rc.overhead.podFixed ?? {} }, newPath('overhead')));
  if (rc.scheduling) errs.push(...validateScheduling(rc.scheduling, newPath('scheduling')));
  return errs;
}

/** ValidateRuntimeClassUpdate: the object's own rules, and the handler is immutable. */
export function validateRuntimeClassUpdate(next: RuntimeClass, old: RuntimeClass): FieldError[] {
  const errs = validateRuntimeClass(next);
  if ((next.handler ?? '') !== (old.handler ?? '')) errs.push(invalid(newPath('handler'), next.handler ?? '', 'field is immutable'));
  return errs;
}
