// What the controllers share about their pods (pkg/controller/controller_utils.go): the controller
// ownerReference, pods made from a template, active/ready/available pods, and the order in which a
// scale-down picks its victims (ActivePods' ranking: not-ready before ready, newer before older).

import { randomInt } from 'node:crypto';
import type { OwnerReference, Pod, PodTemplateSpec } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';

export function controllerRef(o: KubeObject): OwnerReference | undefined {
  return (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}

/** The controller ownerReference a controller puts on what it makes. */
export function ownerRefTo(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true, blockOwnerDeletion: true };
}

/** The name generator's five characters (apiserver's SimpleNameGenerator). */
export function nameSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 5; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}

/** A pod of a template (GetPodFromTemplate): the template's labels and annotations, the owner's reference. */
export function podFromTemplate(template: PodTemplateSpec, namespace: string, name: string, owner: OwnerReference): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { ...(template.metadata?.labels ?? {}) },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [owner],
    },
    spec: structuredClone(template.spec) as Pod['spec'],
  };
}

/** Not terminal and not being deleted (IsPodActive). */
export function isPodActive(p: Pod): boolean {
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

function readyCondition(p: Pod) {
  return (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

export function isPodReady(p: Pod): boolean {
  return readyCondition(p)?.status === 'True';
}

/** Ready for at least minReadySeconds (IsPodAvailable); otherwise how long until it is, when ready. */
export function podAvailability(p: Pod, minReadySeconds: number, now: number): { available: boolean; inMs?: number } {
  const c = readyCondition(p);
  if (c?.status !== 'True') return { available: false };
  if (minReadySeconds <= 0) return { available: true };
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : now;
  const left = since + minReadySeconds * 1000 - now;
  return left <= 0 ? { available: true } : { available: false, inMs: left };
}

const phaseRank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** Pods ordered as a scale-down deletes them: first the ones that matter least. */
export function deletionOrder(pods: readonly Pod[]): Pod[] {
  const created = (p: Pod) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  return [...pods].sort((a, b) => {
    const pa = phaseRank[a.status?.phase ?? 'Pending'] ?? 0;
    const pb = phaseRank[b.status?.phase ?? 'Pending'] ?? 0;
    if (pa !== pb) return pa - pb;
    const ra = isPodReady(a) ? 1 : 0;
    const rb = isPodReady(b) ? 1 : 0;
    if (ra !== rb) return ra - rb;
    return created(b) - created(a);
  });
}
