// What a StatefulSet sync does next, decided from its pods alone (pkg/controller/statefulset
// stateful_set_control.go updateStatefulSet): the missing ordinals created, failed pods replaced,
// condemned ordinals deleted from the highest down, then the rolling update from the highest ordinal
// to the partition; OrderedReady stops at the first step that must wait, Parallel does not.

import type { Pod } from '../api/types.js';
import { revisionHashLabel } from './controller-history.js';
import { isPodReady, podAvailability } from './pod-control.js';

export interface StatefulPlanInput {
  setName: string;
  replicas: number;
  /** spec.ordinals.start (0 by default). */
  startOrdinal: number;
  podManagementPolicy: 'OrderedReady' | 'Parallel';
  updateStrategy: 'RollingUpdate' | 'OnDelete';
  partition: number;
  minReadySeconds: number;
  /** The pods the set owns. */
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  now: number;
}

export type StatefulAction =
  { type: 'create'; ordinal: number; revision: 'current' | 'update' } | { type: 'delete'; pod: string; why: 'failed' | 'condemned' | 'update' };

export interface StatefulPlan {
  actions: StatefulAction[];
  /** When a pod becomes available after minReadySeconds, the sync to run then. */
  recheckInMs?: number;
}

/** The ordinal of a pod named `<set>-<n>`, or undefined for a pod that is not one of the set's. */
export function podOrdinal(setName: string, podName: string | undefined): number | undefined {
  if (!podName?.startsWith(`${setName}-`)) return undefined;
  const tail = podName.slice(setName.length + 1);
  return /^(0|[1-9][0-9]*)$/.test(tail) ? Number(tail) : undefined;
}

export const podRevision = (p: Pod): string => p.metadata?.labels?.[revisionHashLabel] ?? '';
export const isTerminating = (p: Pod): boolean => Boolean(p.metadata?.deletionTimestamp);
const isFinished = (p: Pod) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
export const isRunningAndReady = (p: Pod): boolean => p.status?.phase === 'Running' && isPodReady(p);

export function planStatefulSet(input: StatefulPlanInput): StatefulPlan {
  const monotonic = input.podManagementPolicy === 'OrderedReady';
  const actions: StatefulAction[] = [];
  let recheckInMs: number | undefined;
  const done = (): StatefulPlan => (recheckInMs === undefined ? { actions } : { actions, recheckInMs });
  /** Running, ready for minReadySeconds and not being deleted (isRunningAndAvailable, isHealthy). */
  const available = (p: Pod): boolean => {
    if (isTerminating(p) || p.status?.phase !== 'Running') return false;
    const a = podAvailability(p, input.minReadySeconds, input.now);
    if (!a.available && a.inMs !== undefined) recheckInMs = Math.min(recheckInMs ?? Infinity, a.inMs);
    return a.available;
  };

  const replicas: Array<Pod | undefined> = new Array<Pod | undefined>(input.replicas).fill(undefined);
  const condemned: Array<{ ordinal: number; pod: Pod }> = [];
  for (const pod of input.pods) {
    const ord = podOrdinal(input.setName, pod.metadata?.name);
    if (ord === undefined) continue;
    const i = ord - input.startOrdinal;
    if (i >= 0 && i < input.replicas) replicas[i] = pod;
    else condemned.push({ ordinal: ord, pod });
  }
  condemned.sort((a, b) => b.ordinal - a.ordinal);
  // The first pod (lowest ordinal among replicas, then the condemned from the lowest) that is not healthy.
  const unhealthy = [...replicas, ...[...condemned].reverse().map((c) => c.pod)].find((p) => p !== undefined && (!isRunningAndReady(p) || isTerminating(p)));

  const revisionFor = (i: number): 'current' | 'update' =>
    input.updateStrategy === 'RollingUpdate' && i < input.partition && input.currentRevision !== input.updateRevision ? 'current' : 'update';

  for (let i = 0; i < replicas.length; i++) {
    const pod = replicas[i];
    if (!pod) {
      actions.push({ type: 'create', ordinal: input.startOrdinal + i, revision: revisionFor(i) });
      if (monotonic) return done();
      continue;
    }
    if (isFinished(pod) && !isTerminating(pod)) {
      actions.push({ type: 'delete', pod: pod.metadata!.name!, why: 'failed' });
      if (monotonic) return done();
      continue;
    }
    if (monotonic && (isTerminating(pod) || !available(pod))) return done();
  }

  for (const { pod } of condemned) {
    if (isTerminating(pod)) {
      if (monotonic) return done();
      continue;
    }
    if (monotonic && pod !== unhealthy && !isRunningAndReady(pod)) return done();
    actions.push({ type: 'delete', pod: pod.metadata!.name!, why: 'condemned' });
    if (monotonic) return done();
  }

  if (input.updateStrategy !== 'RollingUpdate') return done();
  // A rolling update waits for every ordinal to exist (Parallel creates them all first).
  if (actions.some((a) => a.type === 'create')) return done();
  for (let i = replicas.length - 1; i >= Math.max(0, input.partition); i--) {
    const pod = replicas[i]!;
    if (podRevision(pod) !== input.updateRevision && !isTerminating(pod)) {
      if (!actions.some((a) => a.type === 'delete' && a.pod === pod.metadata?.name)) {
        actions.push({ type: 'delete', pod: pod.metadata!.name!, why: 'update' });
      }
      return done();
    }
    if (!available(pod)) return done();
  }
  return done();
}
