// v1 LimitRange: the defaults the API server gives a limit (pkg/apis/core/v1 SetDefaults_LimitRangeItem:
// a Container limit's default from max, defaultRequest from default, then from min) and its validation
// (pkg/apis/core/validation ValidateLimitRange: limit types, resource names, one limit per type,
// min <= defaultRequest <= default <= max, maxLimitRequestRatio >= 1 and <= max/min).

import type { LimitRange, LimitRangeItem } from 'kubernetes-types/core/v1.js';
import { type FieldError, type FieldPath, duplicate, forbidden, invalid, newPath, required, sortFieldErrors } from '../field-errors.js';
import { canonicalQuantity, parseQuantity, QuantityError, type Quantity } from '../quantity.js';
import { isQualifiedName } from './names.js';
import { validateObjectMeta } from './pod.js';

export type { LimitRange, LimitRangeItem };

export const standardLimitTypes = ['Pod', 'Container', 'PersistentVolumeClaim'] as const;

type ResourceList = Record<string, string>;

/** The quantity as the API server prints it (Quantity.String). */
export function quantityString(q: Quantity | string): string {
  const text = typeof q === 'string' ? q : q.text;
  try {
    return canonicalQuantity(text);
  } catch {
    return text;
  }
}

function canonicalList(list: Record<string, unknown> | undefined): ResourceList | undefined {
  if (!list) return undefined;
  const out: ResourceList = {};
  for (const [k, v] of Object.entries(list)) out[k] = quantityString(String(v));
  return out;
}

/** SetDefaults_LimitRangeItem for every limit, on a copy. */
export function defaultLimitRange(lr: LimitRange): LimitRange {
  const out = structuredClone(lr) as LimitRange & { spec?: { limits?: LimitRangeItem[] } };
  for (const item of out.spec?.limits ?? []) {
    const i = item as { -readonly [K in keyof LimitRangeItem]: LimitRangeItem[K] };
    for (const key of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const) {
      const c = canonicalList(i[key] as Record<string, unknown> | undefined);
      if (c) i[key] = c;
    }
    if (i.type !== 'Container') continue;
    const def: ResourceList = { ...((i.default as ResourceList | undefined) ?? {}) };
    const defReq: ResourceList = { ...((i.defaultRequest as ResourceList | undefined) ?? {}) };
    for (const [k, v] of Object.entries((i.max as ResourceList | undefined) ?? {})) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
    for (const [k, v] of Object.entries((i.min as ResourceList | undefined) ?? {})) if (!(k in defReq)) defReq[k] = v;
    if (Object.keys(def).length > 0) i.default = def;
    if (Object.keys(defReq).length > 0) i.defaultRequest = defReq;
  }
  return out;
}

const standardContainerResources = new Set(['cpu', 'memory', 'ephemeral-storage']);
const standardResources = new Set([...standardContainerResources, 'storage', 'pods', 'services', 'secrets', 'configmaps', 'persistentvolumeclaims']);
const isHugePages = (name: string) => name.startsWith('hugepages-');
const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');

/** validateLimitRangeTypeName. */
function validateLimitType(value: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(value).map((m) => invalid(path, value, m));
  if (errs.length) return errs;
  if (!value.includes('/') && !(standardLimitTypes as readonly string[]).includes(value))
    errs.push(invalid(path, value, 'must be a standard limit type or fully qualified'));
  return errs;
}

/** validateLimitRangeResourceName: container resources for Pod and Container limits, any standard resource otherwise. */
function validateLimitResourceName(type: string, name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errs.length) return errs;
  if (name.includes('/')) return errs;
  if (!standardResources.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource type or fully qualified'));
  if ((type === 'Pod' || type === 'Container') && !standardContainerResources.has(name) && !isHugePages(name))
    errs.push(invalid(path, name, 'must be a standard resource for containers'));
  return errs;
}

function parse(raw: unknown, path: FieldPath, errs: FieldError[]): Quantity | undefined {
  try {
    return parseQuantity(String(raw));
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    errs.push(invalid(path, String(raw), err.message));
    return undefined;
  }
}

const maxMilliValue = 9223372036854775n; // math.MaxInt64 / 1000

/** ValidateLimitRange's spec rules. */
export function validateLimitRangeSpec(lr: LimitRange): FieldError[] {
  const errs: FieldError[] = [];
  const limitsPath = newPath('spec', 'limits');
  const seen = new Set<string>();
  (lr.spec?.limits ?? []).forEach((limit, idx) => {
    const p = limitsPath.index(idx);
    const type = limit.type ?? '';
    errs.push(...validateLimitType(type, p.child('type')));
    if (seen.has(type)) errs.push(duplicate(p.child('type'), type));
    seen.add(type);
    const keys = new Set<string>();
    const read = (field: 'max' | 'min' | 'default' | 'defaultRequest' | 'maxLimitRequestRatio') => {
      const m = new Map<string, Quantity>();
      for (const [k, v] of Object.entries((limit[field] as Record<string, unknown> | undefined) ?? {})) {
        const kp = p.child(field).key(k);
        errs.push(...validateLimitResourceName(type, k, kp));
        keys.add(k);
        const q = parse(v, kp, errs);
        if (q) m.set(k, q);
      }
      return m;
    };
    const max = read('max');
    const min = read('min');
    let defaults = new Map<string, Quantity>();
    let defaultRequests = new Map<string, Quantity>();
    if (type === 'Pod') {
      if (Object.keys(limit.default ?? {}).length > 0) errs.push(forbidden(p.child('default'), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(limit.defaultRequest ?? {}).length > 0) errs.push(forbidden(p.child('defaultRequest'), "may not be specified when `type` is 'Pod'"));
    } else {
      defaults = read('default');
      defaultRequests = read('defaultRequest');
    }
    if (type === 'PersistentVolumeClaim' && !('storage' in (limit.min ?? {})) && !('storage' in (limit.max ?? {}))) {
      errs.push(required(p.child('limits'), 'either minimum or maximum storage value is required, but neither was provided'));
    }
    const ratios = read('maxLimitRequestRatio');
    for (const k of [...keys].sort()) {
      const mn = min.get(k);
      const mx = max.get(k);
      const df = defaults.get(k);
      const dr = defaultRequests.get(k);
      const ratio = ratios.get(k);
      const s = quantityString;
      if (mn && mx && mn.cmp(mx) > 0) errs.push(invalid(p.child('min').key(k), s(mn), `min value ${s(mn)} is greater than max value ${s(mx)}`));
      if (dr && mn && mn.cmp(dr) > 0)
        errs.push(invalid(p.child('defaultRequest').key(k), s(dr), `min value ${s(mn)} is greater than default request value ${s(dr)}`));
      if (dr && mx && dr.cmp(mx) > 0)
        errs.push(invalid(p.child('defaultRequest').key(k), s(dr), `default request value ${s(dr)} is greater than max value ${s(mx)}`));
      if (dr && df && dr.cmp(df) > 0)
        errs.push(invalid(p.child('defaultRequest').key(k), s(dr), `default request value ${s(dr)} is greater than default limit value ${s(df)}`));
      if (df && mn && mn.cmp(df) > 0) errs.push(invalid(p.child('default').key(k), s(mn), `min value ${s(mn)} is greater than default value ${s(df)}`));
      if (df && mx && df.cmp(mx) > 0) errs.push(invalid(p.child('default').key(k), s(mx), `default value ${s(df)} is greater than max value ${s(mx)}`));
      if (ratio && ratio.cmp(parseQuantity('1')) < 0) errs.push(invalid(p.child('maxLimitRequestRatio').key(k), s(ratio), `ratio ${s(ratio)} is less than 1`));
      if (ratio && mn && mx) {
        let ratioValue = Number(ratio.value());
        let minValue = mn.value();
        let maxValue = mx.value();
        if (ratio.value() < maxMilliValue && minValue < maxMilliValue && maxValue < maxMilliValue) {
          ratioValue = Number(ratio.milliValue()) / 1000;
          minValue = mn.milliValue();
          maxValue = mx.milliValue();
        }
        const limitRatio = Number(maxValue) / Number(minValue);
        if (ratioValue > limitRatio)
          errs.push(invalid(p.child('maxLimitRequestRatio').key(k), s(ratio), `ratio ${s(ratio)} is greater than max/min = ${limitRatio.toFixed(6)}`));
      }
      const overcommit = isNative(k) && !isHugePages(k);
      if (!overcommit && df && dr && df.cmp(dr) !== 0)
        errs.push(invalid(p.child('defaultRequest').key(k), s(dr), `default value ${s(df)} must equal to defaultRequest value ${s(dr)} in ${type}`));
    }
  });
  return errs;
}

export function validateLimitRange(lr: LimitRange): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(lr.metadata), ...validateLimitRangeSpec(lr)]);
}
