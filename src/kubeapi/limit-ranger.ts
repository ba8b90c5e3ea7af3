// The LimitRanger admission plugin (plugin/pkg/admission/limitranger) for pods being created: each of the
// namespace's LimitRanges first fills in the default requests and limits of its Container limit for
// containers and init containers that set none (recorded in the `kubernetes.io/limit-ranger`
// annotation), then checks min, max and maxLimitRequestRatio per container and, for a Pod limit, of the
// pod's total. A pod that breaks a limit is refused: `pods "x" is forbidden: maximum cpu usage per
// Container is 1, but limit is 2`. Pods are checked on create only, as upstream (their resources cannot
// change afterwards); PersistentVolumeClaim limits are kept but no claim is served here to check.

import type { Container, Pod } from '../api/types.js';
import { aggregateMessage } from '../api/field-errors.js';
import { parseQuantity, type Quantity } from '../api/quantity.js';
import { quantityString, type LimitRange } from '../api/validation/limit-range.js';
import { forbiddenObject } from '../http/status.js';
import { podTotal, toResourceList } from './pod-resources.js';

export const limitRangerAnnotation = 'kubernetes.io/limit-ranger';

type ResourceList = Record<string, string>;
type WritableResources = { limits?: ResourceList; requests?: ResourceList };

/** defaultContainerResourceRequirements: the Container limit's default and defaultRequest. */
function containerDefaults(lr: LimitRange): { requests: ResourceList; limits: ResourceList } {
  const requests: ResourceList = {};
  const limits: ResourceList = {};
  for (const l of lr.spec?.limits ?? []) {
    if (l.type !== 'Container') continue;
    Object.assign(requests, l.defaultRequest ?? {});
    Object.assign(limits, l.default ?? {});
  }
  return { requests, limits };
}

/** mergeContainerResources: what the container lacks, from the defaults; the annotation's parts. */
function mergeContainer(c: Container, defaults: { requests: ResourceList; limits: ResourceList }, prefix: string, notes: string[]): void {
  const res = ((c as { resources?: WritableResources }).resources ??= {}) as WritableResources;
  const setRequests: string[] = [];
  const setLimits: string[] = [];
  for (const [k, v] of Object.entries(defaults.limits)) {
    if (res.limits?.[k] === undefined) {
      (res.limits ??= {})[k] = v;
      setLimits.push(k);
    }
  }
  for (const [k, v] of Object.entries(defaults.requests)) {
    if (res.requests?.[k] === undefined) {
      (res.requests ??= {})[k] = v;
      setRequests.push(k);
    }
  }
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${prefix} ${c.name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${prefix} ${c.name}`);
}

/** mergePodResourceRequirements: the defaults into every container, and the annotation saying so. */
function mergePod(pod: Pod, lr: LimitRange): void {
  const defaults = containerDefaults(lr);
  const notes: string[] = [];
  for (const c of pod.spec?.containers ?? []) mergeContainer(c, defaults, 'container', notes);
  for (const c of pod.spec?.initContainers ?? []) mergeContainer(c, defaults, 'init container', notes);
  if (notes.length > 0) {
    const meta = (pod.metadata ??= {}) as { annotations?: Record<string, string> };
    (meta.annotations ??= {})[limitRangerAnnotation] = `LimitRanger plugin set: ${notes.join('; ')}`;
  }
}

const maxMilliValue = 9223372036854775n;

/** requestLimitEnforcedValues: the three at a common precision. */
function enforcedValues(req: Quantity | undefined, lim: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const r = req?.value() ?? 0n;
  const l = lim?.value() ?? 0n;
  const e = enforced.value();
  if (r <= maxMilliValue && l <= maxMilliValue && e <= maxMilliValue) return [req?.milliValue() ?? 0n, lim?.milliValue() ?? 0n, enforced.milliValue()];
  return [r, l, e];
}

type Constraint = (limitType: string, resource: string, enforced: Quantity, requests: ResourceList, limits: ResourceList) => string | undefined;

const q = (list: ResourceList, k: string): Quantity | undefined => (list[k] === undefined ? undefined : parseQuantity(String(list[k])));
const s = quantityString;

const minConstraint: Constraint = (type, name, enforced, requests, limits) => {
  const req = q(requests, name);
  const lim = q(limits, name);
  const [r, l, e] = enforcedValues(req, lim, enforced);
  if (!req) return `minimum ${name} usage per ${type} is ${s(enforced)}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${s(enforced)}, but request is ${s(req)}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${s(enforced)}, but limit is ${s(lim)}`;
  return undefined;
};

const maxConstraint: Constraint = (type, name, enforced, requests, limits) => {
  const req = q(requests, name);
  const lim = q(limits, name);
  const [r, l, e] = enforcedValues(req, lim, enforced);
  if (!lim) return `maximum ${name} usage per ${type} is ${s(enforced)}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${s(enforced)}, but limit is ${s(lim)}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${s(enforced)}, but request is ${s(req)}`;
  return undefined;
};

const ratioConstraint: Constraint = (type, name, enforced, requests, limits) => {
  const req = q(requests, name);
  const lim = q(limits, name);
  const [r, l] = enforcedValues(req, lim, enforced);
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${s(enforced)}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${s(enforced)}, but no limit is specified or limit is 0`;
  let observed = Number(l) / Number(r);
  const display = observed;
  let max = Number(enforced.value());
  if (enforced.value() <= maxMilliValue) {
    observed *= 1000;
    max = Number(enforced.milliValue());
  }
  if (observed > max) return `${name} max limit to request ratio per ${type} is ${s(enforced)}, but provided ratio is ${display.toFixed(6)}`;
  return undefined;
};

/** PodValidateLimitFunc: every limit's constraints, as messages. */
function validatePod(pod: Pod, lr: LimitRange): string[] {
  const errs: string[] = [];
  const check = (type: string, limit: Record<string, string> | undefined, c: Constraint, requests: ResourceList, limits: ResourceList) => {
    for (const [k, v] of Object.entries(limit ?? {})) {
      const e = c(type, k, parseQuantity(String(v)), requests, limits);
      if (e) errs.push(e);
    }
  };
  for (const limit of lr.spec?.limits ?? []) {
    const t = limit.type;
    if (t === 'Container') {
      for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
        const r = ((c.resources as WritableResources | undefined)?.requests ?? {}) as ResourceList;
        const l = ((c.resources as WritableResources | undefined)?.limits ?? {}) as ResourceList;
        check(t, limit.min as ResourceList, minConstraint, r, l);
        check(t, limit.max as ResourceList, maxConstraint, r, l);
        check(t, limit.maxLimitRequestRatio as ResourceList, ratioConstraint, r, l);
      }
    }
    if (t === 'Pod') {
      const r = toResourceList(podTotal(pod, 'requests'));
      const l = toResourceList(podTotal(pod, 'limits'));
      check(t, limit.min as ResourceList, minConstraint, r, l);
      check(t, limit.max as ResourceList, maxConstraint, r, l);
      check(t, limit.maxLimitRequestRatio as ResourceList, ratioConstraint, r, l);
    }
  }
  return errs;
}

/**
 * Admits a pod being created under its namespace's LimitRanges: the defaults are set on the pod
 * (mutating it), and a pod that breaks a limit is refused with the API server's 403.
 */
export function admitPodLimits(pod: Pod, limitRanges: readonly LimitRange[]): void {
  const ns = pod.metadata?.namespace ?? '';
  const mine = limitRanges.filter((lr) => (lr.metadata?.namespace ?? '') === ns);
  // Admit (every range's defaults), then Validate (every range's constraints), as the plugin's two phases.
  for (const lr of mine) mergePod(pod, lr);
  const errs = mine.flatMap((lr) => validatePod(pod, lr));
  if (errs.length === 0) return;
  const name = pod.metadata?.name || pod.metadata?.generateName || 'Unknown';
  throw forbiddenObject('pods', '', name, aggregateMessage([...new Set(errs)]));
}
