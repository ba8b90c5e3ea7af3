// Adoption and release of pods by their controller (pkg/controller/controller_ref_manager.go,
// PodControllerRefManager.ClaimPods): a pod the controller owns stays while its labels match the
// selector (and the controller's own filter) and is released when they no longer do; an orphan that
// matches is adopted with the controller's ownerReference; pods of other controllers are left alone.

import type { LabelSelector, Pod } from '../api/types.js';
import { selectorMatches } from '../api/label-selector.js';
import type { KubeBackend, KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone } from './context.js';
import { controllerRef, ownerRefTo } from './pod-control.js';
import type { Informer } from './informer.js';

export interface PodClaimer {
  /** The controller claiming pods, its group version and kind (for the ownerReference). */
  owner: KubeObject;
  apiVersion: string;
  kind: string;
  selector: LabelSelector | undefined;
  /** A further condition a pod must meet to be the controller's (a StatefulSet's: its name). */
  filter?: (p: Pod) => boolean;
}

/**
 * ClaimPods: the pods among `candidates` that are the controller's once adoptions and releases are
 * written (an adopted pod as the API returned it). A write that loses a race leaves that pod out;
 * its change enqueues the controller again.
 */
export async function claimPods(backend: KubeBackend, claimer: PodClaimer, candidates: readonly Pod[]): Promise<Pod[]> {
  const uid = claimer.owner.metadata?.uid;
  const ownerDeleting = Boolean(claimer.owner.metadata?.deletionTimestamp);
  const matches = (p: Pod) => selectorMatches(claimer.selector, p.metadata?.labels) && (claimer.filter?.(p) ?? true);
  const claimed: Pod[] = [];
  for (const p of candidates) {
    const ref = controllerRef(p);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches(p)) claimed.push(p);
      else if (!ownerDeleting) await setControllerRef(backend, p, undefined);
      continue;
    }
    // An orphan: adopted only by a controller that is not being deleted, and only while it is not.
    if (ownerDeleting || p.metadata?.deletionTimestamp || !matches(p)) continue;
    const adopted = await setControllerRef(backend, p, claimer);
    if (adopted) claimed.push(adopted);
  }
  return claimed;
}

/** Writes the pod's controller ownerReference (the claimer's) or removes it (undefined). */
async function setControllerRef(backend: KubeBackend, p: Pod, claimer: PodClaimer | undefined): Promise<Pod | undefined> {
  const refs = (p.metadata?.ownerReferences ?? []).filter((r) => r.controller !== true);
  if (claimer) refs.push(ownerRefTo(claimer.owner, claimer.apiVersion, claimer.kind));
  const next = { ...p, metadata: { ...p.metadata, ownerReferences: refs } } as Pod;
  if (refs.length === 0) delete (next.metadata as { ownerReferences?: unknown }).ownerReferences;
  try {
    return await backend.updatePod(next);
  } catch (err) {
    if (isConflictOrGone(err)) return undefined;
    throw err;
  }
}

/**
 * The controllers a pod's change concerns (the controllers' addPod/updatePod/deletePod): its
 * controller when it has one of this kind, otherwise every controller whose selector matches it.
 */
export function controllersOfPod<T extends KubeObject>(
  p: Pod,
  kind: string,
  controllers: Informer<T>,
  selectorOf: (c: T) => LabelSelector | undefined,
): string[] {
  const ns = p.metadata?.namespace ?? '';
  const ref = controllerRef(p);
  if (ref) return ref.kind === kind ? [`${ns}/${ref.name}`] : [];
  return controllers
    .list(ns)
    .filter((c) => selectorMatches(selectorOf(c), p.metadata?.labels))
    .map((c) => `${ns}/${c.metadata?.name ?? ''}`);
}
