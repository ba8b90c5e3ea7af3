// Which PersistentVolume a claim may be bound to, as the PV controller and the scheduler's
// VolumeBinding plugin both decide it (pkg/controller/volume/persistentvolume/util FindMatchingVolume,
// CheckVolumeModeMismatches, CheckNodeAffinity, and component-helpers' storage/volume helpers): the
// volume pre-bound to the claim first, else the smallest available volume of the claim's class whose
// access modes include the claim's, whose capacity covers its request, whose labels its selector
// picks, of its volume mode, and — when a node is given — whose node affinity admits the node.

import type { Node, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim } from '../api/types.js';
import { selectorMatches } from '../api/label-selector.js';
import { parseQuantity } from '../api/quantity.js';
import { termMatches } from './plugins/nodeaffinity.js';

export const selectedNodeAnnotation = 'volume.kubernetes.io/selected-node';
export const betaStorageClassAnnotation = 'volume.beta.kubernetes.io/storage-class';

/** GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else ''. */
export function claimClass(claim: PersistentVolumeClaim): string {
  return claim.metadata?.annotations?.[betaStorageClassAnnotation] ?? claim.spec?.storageClassName ?? '';
}

/** GetPersistentVolumeClass. */
export function volumeClass(pv: PersistentVolume): string {
  return pv.metadata?.annotations?.[betaStorageClassAnnotation] ?? pv.spec?.storageClassName ?? '';
}

function storageBytes(q: string | number | undefined): bigint {
  if (q === undefined) return 0n;
  try {
    return parseQuantity(String(q)).value();
  } catch {
    return 0n;
  }
}

export function claimRequest(claim: PersistentVolumeClaim): bigint {
  return storageBytes(claim.spec?.resources?.requests?.storage);
}

export function volumeCapacity(pv: PersistentVolume): bigint {
  return storageBytes(pv.spec?.capacity?.storage);
}

/** The claim's access modes are all among the volume's (CheckAccessModes). */
export function accessModesSatisfied(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  const have = pv.spec?.accessModes ?? [];
  return (claim.spec?.accessModes ?? []).every((m) => have.includes(m));
}

/** CheckVolumeModeMismatches: Filesystem when unset, on both sides. */
export function volumeModeMismatch(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (pv.spec?.volumeMode ?? 'Filesystem');
}

/** CheckNodeAffinity: a volume without node affinity is reachable from every node; otherwise one term must match. */
export function volumeNodeAffinityMatches(pv: PersistentVolume, node: Node): boolean {
  const terms: readonly NodeSelectorTerm[] | undefined = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (!terms) return true;
  const labels = node.metadata?.labels ?? {};
  return terms.some((t) => termMatches(t, labels, node.metadata?.name ?? ''));
}

/** The volume's claimRef names this claim (by uid when the ref has one). */
export function isVolumeBoundToClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== claim.metadata?.name || (ref.namespace ?? '') !== (claim.metadata?.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata?.uid;
}

/** Why a pre-bound volume cannot take the claim (checkVolumeSatisfyClaim), or undefined. */
export function volumeSatisfiesClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): string | undefined {
  if (claimRequest(claim) > volumeCapacity(pv)) return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeMismatch(claim, pv)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(claim, pv)) return 'incompatible accessMode';
  return undefined;
}

/**
 * FindMatchingVolume. With delayBinding (WaitForFirstConsumer) and no node, volumes with node
 * affinity are left for the scheduler to choose; with a node, a volume whose affinity excludes the
 * node is skipped.
 */
export function findMatchingVolume(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  node: Node | undefined,
  delayBinding: boolean,
  excluded: ReadonlySet<string> = new Set(),
): PersistentVolume | undefined {
  const request = claimRequest(claim);
  const className = claimClass(claim);
  let best: PersistentVolume | undefined;
  for (const pv of volumes) {
    const name = pv.metadata?.name ?? '';
    if (excluded.has(name)) continue;
    if (volumeModeMismatch(claim, pv)) continue;
    if (node && !volumeNodeAffinityMatches(pv, node)) continue;
    // The volume pre-bound to this claim is the answer, whatever else holds (the claim's sync checks it).
    if (isVolumeBoundToClaim(pv, claim)) {
      if (pv.metadata?.deletionTimestamp) continue;
      return pv;
    }
    if (!node && delayBinding) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    if (pv.spec?.claimRef) continue;
    if (pv.status?.phase !== 'Available') continue;
    if (claim.spec?.selector && !selectorMatches(claim.spec.selector, pv.metadata?.labels)) continue;
    if (volumeClass(pv) !== className) continue;
    if (!accessModesSatisfied(claim, pv)) continue;
    const cap = volumeCapacity(pv);
    if (cap < request) continue;
    if (!best || cap < volumeCapacity(best)) best = pv;
  }
  return best;
}
