// Whether a pod's toleration tolerates a node's taint (k8s.io/api/core/v1 Toleration.ToleratesTaint),
// for the scheduler's TaintToleration filter and the kubelet's eviction admission alike.

import type { Taint, Toleration } from './types.js';

/** Whether a toleration tolerates a taint (v1 Toleration.ToleratesTaint). */
export function tolerates(t: Toleration, taint: Pick<Taint, 'key' | 'value' | 'effect'>): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if ((t.operator ?? 'Equal') === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}
