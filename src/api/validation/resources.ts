// Resource requirements validation (ValidateResourceRequirements): resource names, quantities in
// Kubernetes' Quantity grammar, non-negative values, and requests not above limits.

import { type FieldError, type FieldPath, invalid, required } from '../field-errors.js';
import { parseQuantity, QuantityError, type Quantity } from '../quantity.js';
import { isNegativeErrorMsg } from './probes.js';
import { isQualifiedName } from './names.js';

const standardContainerResources = new Set(['cpu', 'memory', 'ephemeral-storage']);
/** Names a container may request without a domain prefix (besides hugepages-<size>). */
const standardResourceNames = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
  'storage',
]);

const isHugePages = (name: string) => name.startsWith('hugepages-');
const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
const isExtended = (name: string) => !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
/** Only native, non-hugepage resources may be requested below their limit. */
const isOvercommitAllowed = (name: string) => isNative(name) && !isHugePages(name);
const isIntegerResource = (name: string) => isExtended(name) || ['pods', 'services', 'secrets', 'configmaps'].includes(name);

function validateResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errs.length) return errs;
  if (!name.includes('/')) {
    if (!standardResourceNames.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource type or fully qualified'));
    if (!standardContainerResources.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

function parseValue(name: string, raw: unknown, path: FieldPath, errs: FieldError[]): Quantity | undefined {
  let q: Quantity;
  try {
    q = parseQuantity(String(raw));
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    errs.push(invalid(path, String(raw), err.message));
    return undefined;
  }
  if (q.milliValue() < 0n) errs.push(invalid(path, q.text, isNegativeErrorMsg));
  if (isIntegerResource(name) && q.milliValue() % 1000n !== 0n) errs.push(invalid(path, q.text, 'must be an integer'));
  return q;
}

export interface ResourceRequirementsLike {
  limits?: Record<string, unknown>;
  requests?: Record<string, unknown>;
}

/** Checks a container's (or the pod's) resources; path is `…resources`. */
export function validateResourceRequirements(res: ResourceRequirementsLike | undefined, path: FieldPath): FieldError[] {
  if (!res) return [];
  const errs: FieldError[] = [];
  const limPath = path.child('limits');
  const reqPath = path.child('requests');
  const limits = new Map<string, Quantity>();
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, raw] of Object.entries(res.limits ?? {})) {
    const p = limPath.key(name);
    errs.push(...validateResourceName(name, p));
    const q = parseValue(name, raw, p, errs);
    if (q) limits.set(name, q);
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, raw] of Object.entries(res.requests ?? {})) {
    const p = reqPath.key(name);
    errs.push(...validateResourceName(name, p));
    const q = parseValue(name, raw, p, errs);
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    if (!q) continue;
    const limit = limits.get(name);
    if (limit) {
      if (q.cmp(limit) !== 0 && !isOvercommitAllowed(name)) {
        errs.push(invalid(reqPath, q.text, `must be equal to ${name} limit of ${limit.text}`));
      } else if (q.cmp(limit) > 0) {
        errs.push(invalid(reqPath, q.text, `must be less than or equal to ${name} limit of ${limit.text}`));
      }
    } else if (!isOvercommitAllowed(name) && !(name in (res.limits ?? {}))) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
  }
  if (hugePages && !cpuOrMemory) errs.push({ type: 'Forbidden', field: path.toString(), detail: 'HugePages require cpu or memory' });
  return errs;
}
