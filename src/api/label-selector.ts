// metav1.LabelSelector: matching a set of labels (matchLabels and matchExpressions with In, NotIn,
// Exists, DoesNotExist) and its string form (`app=web,tier in (a,b)`) as apimachinery's
// LabelSelectorAsSelector renders it; workloads select their pods with it.

import type { LabelSelector } from './types.js';

/** Whether labels satisfy the selector; an empty selector matches everything, a missing one nothing. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Whether the selector selects nothing in particular (no labels, no expressions). */
export function selectorIsEmpty(selector: LabelSelector | undefined): boolean {
  return !selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0);
}

/** The selector's string form, requirements sorted by key (labels.Selector.String()). */
export function selectorString(selector: LabelSelector | undefined): string {
  if (!selector) return '';
  const reqs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) reqs.push([k, `${k}=${v}`]);
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') reqs.push([e.key, `${e.key} in (${values})`]);
    else if (e.operator === 'NotIn') reqs.push([e.key, `${e.key} notin (${values})`]);
    else if (e.operator === 'Exists') reqs.push([e.key, e.key]);
    else if (e.operator === 'DoesNotExist') reqs.push([e.key, `!${e.key}`]);
  }
  return reqs
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, s]) => s)
    .join(',');
}
