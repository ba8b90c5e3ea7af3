// The VolumeBinding plugin (pkg/scheduler/framework/plugins/volumebinding): PreFilter refuses a pod
// whose claim is missing or being deleted, or unbound with Immediate binding (the PV controller binds
// those, and the pod waits); Filter checks that each bound claim's volume admits the node (its node
// affinity) and that each unbound WaitForFirstConsumer claim has a volume to bind on this node or a
// class that provisions; PreBind (binder.go's BindPodVolumes, the writes the agent makes) binds the
// chosen volumes to their claims or marks the claims to provision with the node selected
// (`volume.kubernetes.io/selected-node`). Retried on a change of a claim, a volume or a class.

import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../api/types.js';
import { preFilterUnresolvable, unresolvable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';
import { claimClass, findMatchingVolume, selectedNodeAnnotation, volumeNodeAffinityMatches } from '../volume-match.js';

export const Name = 'VolumeBinding';
export const ErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind";
export const ErrReasonNodeConflict = 'node(s) had volume node affinity conflict';
export const ErrReasonPVNotExist = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const ErrUnboundImmediate = 'pod has unbound immediate PersistentVolumeClaims';

/** What the plugin reads of the API: claims, volumes and classes as the informers hold them. */
export interface VolumeListers {
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  volumes(): readonly PersistentVolume[];
  storageClass(name: string): StorageClass | undefined;
}

/** One claim's binding decided for the node: to an existing volume, or to be provisioned there. */
export type ClaimBinding = { claim: PersistentVolumeClaim; volume: PersistentVolume } | { claim: PersistentVolumeClaim; provision: true };

/** The claims a pod's volumes name (persistentVolumeClaim volumes). */
export function podClaimNames(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
}

export const isDelayBinding = (sc: StorageClass | undefined): boolean => sc?.volumeBindingMode === 'WaitForFirstConsumer';

type Decision = { status: Status } | { bindings: ClaimBinding[] };
type ClaimsOfPod = { status: Status } | { bound: PersistentVolumeClaim[]; delayed: PersistentVolumeClaim[] };

/** PreFilter: every claim exists and is not being deleted; none is unbound with Immediate binding. */
function podClaims(listers: VolumeListers, pod: Pod): ClaimsOfPod {
  const ns = pod.metadata?.namespace ?? 'default';
  const bound: PersistentVolumeClaim[] = [];
  const delayed: PersistentVolumeClaim[] = [];
  let immediateUnbound = false;
  for (const name of podClaimNames(pod)) {
    const claim = listers.claim(ns, name);
    if (!claim) return { status: preFilterUnresolvable(Name, `persistentvolumeclaim "${name}" not found`) };
    if (claim.metadata?.deletionTimestamp) return { status: preFilterUnresolvable(Name, `persistentvolumeclaim "${name}" is being deleted`) };
    if (claim.spec?.volumeName) bound.push(claim);
    else if (isDelayBinding(listers.storageClass(claimClass(claim)))) delayed.push(claim);
    else immediateUnbound = true;
  }
  if (immediateUnbound) return { status: preFilterUnresolvable(Name, ErrUnboundImmediate) };
  return { bound, delayed };
}

/** PreFilter and Filter for one node: the refusal, or how each unbound claim is to be bound there. */
export function decideVolumes(listers: VolumeListers, pod: Pod, node: Node): Decision {
  const claims = podClaims(listers, pod);
  if ('status' in claims) return claims;
  // Filter: bound claims' volumes reachable from the node; delayed claims matched or provisionable here.
  for (const claim of claims.bound) {
    const pv = listers.volume(claim.spec!.volumeName!);
    if (!pv) return { status: unresolvable(Name, ErrReasonPVNotExist) };
    if (!volumeNodeAffinityMatches(pv, node)) return { status: unresolvable(Name, ErrReasonNodeConflict) };
  }
  const bindings: ClaimBinding[] = [];
  const chosen = new Set<string>();
  const volumes = listers.volumes();
  for (const claim of claims.delayed) {
    const pv = findMatchingVolume(claim, volumes, node, true, chosen);
    if (pv) {
      chosen.add(pv.metadata?.name ?? '');
      bindings.push({ claim, volume: pv });
      continue;
    }
    const selected = claim.metadata?.annotations?.[selectedNodeAnnotation];
    const sc = listers.storageClass(claimClass(claim));
    if (!sc?.provisioner || sc.provisioner === 'kubernetes.io/no-provisioner' || (selected && selected !== node.metadata?.name)) {
      return { status: unresolvable(Name, ErrReasonBindConflict) };
    }
    bindings.push({ claim, provision: true });
  }
  return { bindings };
}

export function volumeBinding(listers: VolumeListers): FilterPlugin {
  return {
    name: Name,
    preFilter(pod: Pod): Status | undefined {
      const claims = podClaims(listers, pod);
      return 'status' in claims ? claims.status : undefined;
    },
    filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
      const d = decideVolumes(listers, pod, nodeInfo.node);
      return 'status' in d ? d.status : undefined;
    },
  };
}
