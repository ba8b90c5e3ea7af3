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
import type { CreateOptions } from '../kubeapi/backend.js';
import { checkFields } from '../kubeapi/field-validation.js';
import { runtimePodRules, type PodCapabilities } from '../runtime/pod-rules.js';
import { admitRuntimeClass, type RuntimeClassLookup } from './runtime-class-admission.js';

export interface DecodeContext {
  nodeName: string;
  /** The pod's runtime's (by its RuntimeClass where the agent has several): what it cannot do are validation errors. */
  capabilities: PodCapabilities;
  /** On create: the RuntimeClasses the RuntimeClass admission plugin reads (absent: the plugin does not run). */
  runtimeClass?: RuntimeClassLookup;
  /** The UID to give the pod (a new one on create, the stored one on update). */
  uid: string;
  /** fieldValidation, the body's duplicate keys and where warnings go (kubeapi/field-validation.ts). */
  fields?: CreateOptions;
  /** The mutating admission of a created pod (LimitRanger), after the defaults and before validation. */
  admit?: (pod: Pod) => void;
  /** The Priority admission: spec.priority and spec.preemptionPolicy resolved (create) or kept (update), before validation; throws ApiError. */
  admitPriority(pod: Pod): void;
}

/** Decodes, defaults (config source `api`) and validates a pod sent to the API; throws ApiError. */
export function decodeAPIPod(raw: unknown, ctx: DecodeContext): { pod: Pod } {
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
  if (decoded.typeErrors.length > 0) {
    throw new ApiError(400, 'BadRequest', `Pod in version "v1" cannot be handled as a Pod: ${decoded.typeErrors.map((p) => p.message).join('; ')}`);
  }
  checkFields(
    ctx.fields ?? {},
    decoded.unknownFields.map((p) => p.path),
  );
  const input = decoded.value;
  const m = (input.metadata ??= {}) as { uid?: string; namespace?: string; annotations?: Record<string, string> };
  m.uid = ctx.uid;
  m.namespace ||= defaultNamespace;
  if (m.annotations) {
    delete m.annotations[configHashAnnotation];
    delete m.annotations[configSourceAnnotation];
  }
  const admitted = admitDefaults(defaultPod(input, { nodeName: ctx.nodeName, source: 'api' }));
  // The Priority admission, then RuntimeClass's, in kube-apiserver's plugin order.
  ctx.admitPriority(admitted);
  const pod = ctx.runtimeClass ? admitRuntimeClass(admitted, ctx.runtimeClass) : admitted;
  // A pod sent without a node waits for the scheduler; one that names a node is bound to this one.
  if (!(obj.spec as { nodeName?: string } | undefined)?.nodeName) delete pod.spec!.nodeName;
  ctx.admit?.(pod);
  const errs = [...validatePods([pod])[0]!];
  errs.push(...runtimePodRules(ctx.capabilities)(pod));
  if (errs.length > 0) throw invalid('Pod', pod.metadata?.name ?? '', errs);
  return { pod };
}

/** Seconds a pod stays bound to a node that is not ready or unreachable (DefaultTolerationSeconds). */
const defaultTolerationSeconds = 300;

/**
 * What the API server's DefaultTolerationSeconds admission plugin sets on a pod: the not-ready and
 * unreachable NoExecute tolerations for 300 s, unless the pod tolerates them already (the Priority
 * plugin's part is priority-admission.ts).
 */
function admitDefaults(pod: Pod): Pod {
  const spec = pod.spec!;
  const tolerations = [...(spec.tolerations ?? [])];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    // Upstream's test (plugin/pkg/admission/defaulttolerationseconds): the key or no key, NoExecute or
    // no effect. A toleration without a key is valid only with operator Exists.
    const tolerated = tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
    if (!tolerated) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: defaultTolerationSeconds });
  }
  spec.tolerations = tolerations;
  return pod;
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
