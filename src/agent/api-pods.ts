// Pods written through the API, checked as the API server checks them: strict decoding (400), v1 and
// kubelet defaults (spec.nodeName only when the pod names a node: the others wait for the scheduler),
// validation and the runtime's own rules (422 Invalid with one cause per field), and
// on update the rule that a live pod may change only its images, activeDeadlineSeconds (downwards),
// added tolerations and metadata.

import type { Pod } from '../api/types.js';
import { strictDecode } from '../api/decode.js';
import { kindTypes } from '../api/schema.js';
import { canonicalJSON, configHashAnnotation, configSourceAnnotation, defaultNamespace, defaultPod } from '../api/defaults.js';
import type { FieldError } from '../api/field-errors.js';
import { validatePods } from '../api/validation/index.js';
import { ApiError, invalid } from '../http/status.js';
import type { RuntimeCapabilities } from '../runtime/cri.js';
import { runtimePodRules } from '../runtime/pod-rules.js';

export interface DecodeContext {
  nodeName: string;
  /** The runtime's: what it cannot do are validation errors. */
  capabilities: RuntimeCapabilities;
  /** The UID to give the pod (a new one on create, the stored one on update). */
  uid: string;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/** Decodes, defaults (config source `api`) and validates a pod sent to the API; throws ApiError. */
export function decodeAPIPod(raw: unknown, ctx: DecodeContext): { pod: Pod; warnings: string[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ApiError(400, 'BadRequest', 'the body of the request was not a JSON object');
  }
  const obj = structuredClone(raw) as Record<string, unknown>;
  if (obj.kind !== undefined && obj.kind !== 'Pod') throw new ApiError(400, 'BadRequest', `the kind ${JSON.stringify(obj.kind)} is not Pod`);
  const meta = (obj.metadata ?? {}) as Record<string, unknown>;
  // Server-set fields a client may send back are dropped before decoding, as the API server resets them.
  delete obj.status;
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'managedFields', 'selfLink'])
    delete meta[k];
  obj.metadata = meta;
  const decoded = strictDecode<Pod>(obj, kindTypes.Pod);
  const warnings: string[] = [];
  const mode = ctx.fieldValidation ?? 'Strict';
  if (decoded.typeErrors.length > 0) {
    throw new ApiError(400, 'BadRequest', `Pod in version "v1" cannot be handled as a Pod: ${decoded.typeErrors.map((p) => p.message).join('; ')}`);
  }
  if (decoded.unknownFields.length > 0) {
    const texts = decoded.unknownFields.map((p) => p.message);
    if (mode === 'Strict') throw new ApiError(400, 'BadRequest', `strict decoding error: ${texts.join(', ')}`);
    if (mode === 'Warn') warnings.push(...texts);
  }
  const input = decoded.value;
  const m = (input.metadata ??= {}) as { uid?: string; namespace?: string; annotations?: Record<string, string> };
  m.uid = ctx.uid;
  m.namespace ||= defaultNamespace;
  if (m.annotations) {
    delete m.annotations[configHashAnnotation];
    delete m.annotations[configSourceAnnotation];
  }
  const pod = defaultPod(input, { nodeName: ctx.nodeName, source: 'api' });
  // A pod sent without a node waits for the scheduler; one that names a node is bound to this one.
  const sent = obj.spec as { nodeName?: string; tolerations?: Array<{ key?: string; operator?: string; effect?: string }> } | undefined;
  if (!sent?.nodeName) delete pod.spec!.nodeName;
  apiPodTolerations(pod, sent?.tolerations ?? []);
  const errs = [...validatePods([pod])[0]!];
  errs.push(...runtimePodRules(ctx.capabilities)(pod));
  if (errs.length > 0) throw invalid('Pod', pod.metadata?.name ?? '', errs);
  return { pod, warnings };
}

/**
 * An API pod's tolerations: the static pods' tolerate-every-NoExecute default is not an API pod's
 * (unless sent), and the DefaultTolerationSeconds admission adds not-ready and unreachable NoExecute
 * tolerations for 300 s where the pod has none for them.
 */
function apiPodTolerations(pod: Pod, sent: ReadonlyArray<{ key?: string; operator?: string; effect?: string }>): void {
  const isCatchAll = (t: { key?: string; operator?: string; effect?: string }) => t.operator === 'Exists' && t.effect === 'NoExecute' && !t.key;
  const tolerations = (pod.spec!.tolerations ?? []).filter((t) => !isCatchAll(t) || sent.some(isCatchAll));
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some((t) => (t.effect === 'NoExecute' || !t.effect) && (t.key === key || (!t.key && t.operator === 'Exists')));
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  pod.spec!.tolerations = tolerations;
}

/** Leaf paths where a and b differ (`spec.containers[0].command`), for the forbidden-update message. */
export function changedPaths(a: unknown, b: unknown, path = 'spec'): string[] {
  if (canonicalJSON(a) === canonicalJSON(b)) return [];
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => changedPaths(x, b[i], `${path}[${i}]`));
  }
  const isObj = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])].sort();
    return keys.flatMap((k) => changedPaths((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return [path];
}

const allowedUpdateText =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,' +
  '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations)';

/** ValidatePodUpdate's rules for a live pod; empty when the change is allowed. */
export function validatePodUpdate(next: Pod, old: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const oldSpec = old.spec!;
  const newSpec = next.spec!;
  const oldAds = oldSpec.activeDeadlineSeconds;
  const newAds = newSpec.activeDeadlineSeconds;
  if (oldAds !== undefined && oldAds !== null) {
    if (newAds === undefined || newAds === null) {
      errs.push({ type: 'Invalid', field: 'spec.activeDeadlineSeconds', value: null, detail: 'must not update from a positive integer to nil value' });
    } else if (newAds > oldAds) {
      errs.push({ type: 'Invalid', field: 'spec.activeDeadlineSeconds', value: newAds, detail: 'must be less than or equal to previous value' });
    }
  }
  // The new spec with what may change taken from the old one must equal the old spec.
  const mutable = structuredClone(newSpec);
  const copyImages = (to: Array<{ name: string; image?: string }> | undefined, from: Array<{ name: string; image?: string }> | undefined) => {
    if (!to || !from || to.length !== from.length) return;
    to.forEach((c, i) => {
      if (from[i]!.name === c.name) c.image = from[i]!.image;
    });
  };
  copyImages(mutable.containers, oldSpec.containers);
  copyImages(mutable.initContainers, oldSpec.initContainers);
  mutable.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  const oldTolerations = oldSpec.tolerations ?? [];
  const oldKeys = new Set(oldTolerations.map((t) => canonicalJSON(t)));
  const keepsOld = (newSpec.tolerations ?? []).filter((t) => oldKeys.has(canonicalJSON(t))).length === oldTolerations.length;
  if (keepsOld) mutable.tolerations = oldSpec.tolerations;
  const changed = changedPaths(oldSpec, mutable);
  if (changed.length > 0) {
    errs.push({ type: 'Forbidden', field: 'spec', detail: `${allowedUpdateText}; changed: ${changed.join(', ')}` });
  }
  return errs;
}
