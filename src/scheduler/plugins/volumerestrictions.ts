// The VolumeRestrictions plugin's ReadWriteOncePod rule (pkg/scheduler/framework/plugins/volumerestrictions):
// a pod whose claim has the ReadWriteOncePod access mode does not fit a node where another pod uses
// that claim (preemption may remove the other).

import type { PersistentVolumeClaim, Pod } from '../../api/types.js';
import { unschedulable, type FilterPlugin, type NodeInfo, type Status } from '../framework.js';
import { podClaimNames } from './volumebinding.js';

export const Name = 'VolumeRestrictions';
export const ErrReasonReadWriteOncePodConflict = 'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode';

export function volumeRestrictions(claim: (namespace: string, name: string) => PersistentVolumeClaim | undefined): FilterPlugin {
  return {
    name: Name,
    filter(pod: Pod, nodeInfo: NodeInfo): Status | undefined {
      const ns = pod.metadata?.namespace ?? 'default';
      const rwop = podClaimNames(pod).filter((n) => (claim(ns, n)?.spec?.accessModes ?? []).includes('ReadWriteOncePod'));
      if (rwop.length === 0) return undefined;
      for (const other of nodeInfo.pods) {
        if (other.metadata?.uid === pod.metadata?.uid || (other.metadata?.namespace ?? 'default') !== ns) continue;
        if (podClaimNames(other).some((n) => rwop.includes(n))) return unschedulable(Name, ErrReasonReadWriteOncePodConflict);
      }
      return undefined;
    },
  };
}
