// The scheduler's volume binder for the standalone agent (pkg/scheduler/framework/plugins/volumebinding
// binder.go): the listers VolumeBinding reads (the object store's claims, volumes and classes) and
// BindPodVolumes, PreBind's writes: each unbound WaitForFirstConsumer claim of the pod is pre-bound to
// the volume chosen for the node (the volume's claimRef; the PV binder completes it) or marked for
// provisioning on the node (volume.kubernetes.io/selected-node), then the pod waits until each of its
// claims is Bound, as upstream waits (bindTimeout; 600 s upstream, a minute here).

import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../api/types.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { decideVolumes, podClaimNames, type VolumeListers } from '../scheduler/plugins/volumebinding.js';
import { selectedNodeAnnotation } from '../scheduler/volume-match.js';
import type { Clock } from '../util/clock.js';
import type { ObjectStore } from './object-store.js';

export const bindTimeoutMs = 60_000;

export function storeVolumeListers(objects: ObjectStore): VolumeListers {
  return {
    claim: (ns, name) => objects.get('PersistentVolumeClaim', ns, name) as PersistentVolumeClaim | undefined,
    volume: (name) => objects.get('PersistentVolume', '', name) as PersistentVolume | undefined,
    volumes: () => objects.list('PersistentVolume').items as PersistentVolume[],
    storageClass: (name) => (name ? (objects.get('StorageClass', '', name) as StorageClass | undefined) : undefined),
  };
}

/** BindPodVolumes: the writes, then the wait until every claim of the pod is Bound. */
export async function bindPodVolumes(objects: ObjectStore, clock: Clock, pod: Pod, node: Node): Promise<void> {
  const listers = storeVolumeListers(objects);
  const d = decideVolumes(listers, pod, node);
  if ('status' in d) throw new Error(d.status.reasons.join(', '));
  const nodeName = node.metadata?.name ?? '';
  for (const b of d.bindings) {
    const claim = b.claim as PersistentVolumeClaim & KubeObject;
    if ('volume' in b) {
      const pv = b.volume as PersistentVolume & KubeObject;
      await objects.update('PersistentVolume', {
        ...pv,
        metadata: { ...pv.metadata, annotations: { ...(pv.metadata?.annotations ?? {}), 'pv.kubernetes.io/bound-by-controller': 'yes' } },
        spec: {
          ...pv.spec,
          claimRef: {
            kind: 'PersistentVolumeClaim',
            apiVersion: 'v1',
            namespace: claim.metadata?.namespace ?? '',
            name: claim.metadata?.name ?? '',
            uid: claim.metadata?.uid ?? '',
            resourceVersion: claim.metadata?.resourceVersion ?? '',
          },
        },
      });
    } else if (claim.metadata?.annotations?.[selectedNodeAnnotation] !== nodeName) {
      await objects.update('PersistentVolumeClaim', {
        ...claim,
        metadata: { ...claim.metadata, annotations: { ...(claim.metadata?.annotations ?? {}), [selectedNodeAnnotation]: nodeName } },
      });
    }
  }
  await claimsBound(objects, clock, pod);
}

function unboundClaims(objects: ObjectStore, pod: Pod): string[] {
  const ns = pod.metadata?.namespace ?? 'default';
  return podClaimNames(pod).filter((n) => {
    const c = objects.get('PersistentVolumeClaim', ns, n) as PersistentVolumeClaim | undefined;
    return !(c?.spec?.volumeName && c.status?.phase === 'Bound');
  });
}

/** Resolves once every claim of the pod is Bound; rejects after bindTimeoutMs. */
function claimsBound(objects: ObjectStore, clock: Clock, pod: Pod): Promise<void> {
  if (unboundClaims(objects, pod).length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const watch = objects.watch('PersistentVolumeClaim', String(objects.list('PersistentVolumeClaim').resourceVersion), () => {
      if (unboundClaims(objects, pod).length > 0) return;
      watch.stop();
      timer.cancel();
      resolve();
    });
    const timer = clock.setTimer(bindTimeoutMs, () => {
      watch.stop();
      reject(new Error(`binding volumes: timed out waiting for claims ${unboundClaims(objects, pod).join(', ')} to be bound`));
    });
  });
}
