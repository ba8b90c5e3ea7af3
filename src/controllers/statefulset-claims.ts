// A StatefulSet's claims (pkg/controller/statefulset stateful_pod_control.go and stateful_set_utils.go):
// each ordinal's pod gets one PersistentVolumeClaim per volumeClaimTemplate, named
// `<template>-<set>-<ordinal>`, labelled with the set's selector's matchLabels, created before the pod
// and kept afterwards; persistentVolumeClaimRetentionPolicy decides who owns them
// (updateClaimOwnerRefForSetAndPod, StatefulSetAutoDeletePVC): whenDeleted Delete makes the set an
// owner (the garbage collector deletes them with it), whenScaled Delete makes a condemned ordinal's pod
// an owner (they go with the pod on scale-down); Retain leaves them unowned.

import type { OwnerReference, PersistentVolumeClaim, Pod, StatefulSet } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { errorText, workloadRef } from './workload-events.js';

type Claim = PersistentVolumeClaim & KubeObject;

export function claimName(template: string, set: string, ordinal: number): string {
  return `${template}-${set}-${ordinal}`;
}

/** getPersistentVolumeClaims: the claims of one ordinal, from the templates. */
export function claimsForOrdinal(set: StatefulSet, ordinal: number): PersistentVolumeClaim[] {
  const setName = set.metadata?.name ?? '';
  const matchLabels = set.spec?.selector?.matchLabels ?? {};
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => {
    const claim = structuredClone(t) as PersistentVolumeClaim & { status?: unknown };
    delete claim.status;
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    const meta = { ...(claim.metadata ?? {}) };
    meta.name = claimName(t.metadata?.name ?? '', setName, ordinal);
    meta.namespace = set.metadata?.namespace ?? 'default';
    meta.labels = { ...(meta.labels ?? {}), ...matchLabels };
    claim.metadata = meta;
    return claim;
  });
}

const setRef = (set: StatefulSet): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  name: set.metadata?.name ?? '',
  uid: set.metadata?.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

const podRef = (pod: Pod): OwnerReference => ({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' });

/** The owner references a claim should carry under the policy; condemned: the pod's ordinal is out of the set's range. */
export function retentionOwnerRefs(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod | undefined, condemned: boolean): OwnerReference[] {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const setUid = set.metadata?.uid;
  const others = (claim.metadata?.ownerReferences ?? []).filter((r) => r.uid !== setUid && !(r.kind === 'Pod' && r.name === pod?.metadata?.name));
  const refs = [...others];
  // A condemned ordinal's claim under whenScaled: Delete is the pod's alone (so it goes with the pod).
  const scaledDown = policy.whenScaled === 'Delete' && condemned && Boolean(pod?.metadata?.uid);
  if (policy.whenDeleted === 'Delete' && !scaledDown) refs.push(setRef(set));
  if (scaledDown) refs.push(podRef(pod!));
  return refs;
}

const refsKey = (refs: readonly OwnerReference[] | undefined) => JSON.stringify((refs ?? []).map((r) => [r.kind, r.name, r.uid]).sort());

/** What the set's claims need: created for an ordinal, their owners kept to the retention policy. */
export class StatefulSetClaims {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly recorder: EventRecorder,
  ) {}

  /** createPersistentVolumeClaims: every claim of the ordinal exists; throws while one is being deleted. */
  async create(set: StatefulSet, ordinal: number, podName: string): Promise<void> {
    const storage = this.ctx.storage('PersistentVolumeClaim');
    const ref = workloadRef(set as KubeObject, 'apps/v1', 'StatefulSet');
    const setName = set.metadata?.name ?? '';
    for (const claim of claimsForOrdinal(set, ordinal)) {
      const name = claim.metadata!.name!;
      const existing = storage.get!(claim.metadata!.namespace!, name);
      if (existing) {
        if (existing.metadata?.deletionTimestamp) throw new Error(`pvc ${name} is being deleted`);
        continue;
      }
      const refs = retentionOwnerRefs(claim, set, undefined, false);
      if (refs.length > 0) claim.metadata!.ownerReferences = refs;
      try {
        await storage.create!(claim as KubeObject, {});
        this.recorder.event(ref, 'Normal', 'SuccessfulCreate', `create Claim ${name} Pod ${podName} in StatefulSet ${setName} success`);
      } catch (err) {
        if ((err as { code?: number }).code === 409) continue;
        this.recorder.event(
          ref,
          'Warning',
          'FailedCreate',
          `create Claim ${name} for Pod ${podName} in StatefulSet ${setName} failed error: ${errorText(err)}`,
        );
        throw err;
      }
    }
  }

  /** updateClaimOwnerRefForSetAndPod over the set's pods: condemned is an ordinal outside [start, start+replicas). */
  async keepRetention(set: StatefulSet, pods: readonly { pod: Pod; ordinal: number }[]): Promise<void> {
    if ((set.spec?.volumeClaimTemplates ?? []).length === 0) return;
    const start = set.spec?.ordinals?.start ?? 0;
    const end = start + (set.spec?.replicas ?? 1);
    const storage = this.ctx.storage('PersistentVolumeClaim');
    for (const { pod, ordinal } of pods) {
      const condemned = ordinal < start || ordinal >= end;
      for (const want of claimsForOrdinal(set, ordinal)) {
        const claim = storage.get!(want.metadata!.namespace!, want.metadata!.name!) as Claim | undefined;
        if (!claim || claim.metadata?.deletionTimestamp) continue;
        const refs = retentionOwnerRefs(claim, set, pod, condemned);
        if (refsKey(refs) === refsKey(claim.metadata?.ownerReferences)) continue;
        const meta = { ...claim.metadata };
        if (refs.length > 0) meta.ownerReferences = refs;
        else delete meta.ownerReferences;
        await storage.update!({ ...claim, metadata: meta } as KubeObject, {}).catch((err: unknown) => {
          if (!isConflictOrGone(err)) throw err;
        });
      }
    }
  }
}
