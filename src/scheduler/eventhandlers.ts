// What the scheduler makes of a change of a pod or of the node (pkg/scheduler/eventhandlers.go and the
// plugins' EventsToRegister): an unassigned pod is queued, updated or dropped; a change of an assigned
// pod or of the node is a cluster event, which moves the unschedulable pods whose rejecting plugin
// registered for it.

import type { Pod } from '../api/types.js';
import { holdsNode } from './framework.js';

export type ClusterEvent = 'AssignedPodAdd' | 'AssignedPodUpdate' | 'AssignedPodDelete' | 'NodeChange' | 'StorageChange';

/** The plugins each event may help (their EventsToRegister). */
const interestedPlugins: Record<ClusterEvent, ReadonlySet<string> | 'all'> = {
  // A new pod on the node: the pods whose affinity needs it, or whose spread counted it.
  AssignedPodAdd: new Set(['InterPodAffinity', 'PodTopologySpread']),
  // A label change matters to affinity and spread; a pod that ends frees resources and ports.
  AssignedPodUpdate: new Set(['InterPodAffinity', 'PodTopologySpread', 'NodeResourcesFit', 'NodePorts']),
  AssignedPodDelete: new Set(['InterPodAffinity', 'PodTopologySpread', 'NodeResourcesFit', 'NodePorts', 'VolumeRestrictions']),
  // A claim, volume or class added or changed (PersistentVolumeClaim, PersistentVolume, StorageClass events).
  StorageChange: new Set(['VolumeBinding', 'VolumeRestrictions']),
  NodeChange: 'all',
};

export function pluginInterested(event: ClusterEvent): (plugin: string) => boolean {
  const set = interestedPlugins[event];
  return (plugin) => set === 'all' || set.has(plugin);
}

const labelsKey = (p: Pod) => JSON.stringify(Object.entries(p.metadata?.labels ?? {}).sort());

/** The cluster event of an assigned pod's change, if it is one (a pod's end counts as its deletion, as the cache drops terminal pods). */
export function assignedPodEvent(old: Pod | undefined, pod: Pod | undefined): ClusterEvent | undefined {
  const wasAssigned = !!old?.spec?.nodeName && holdsNode(old);
  const isAssigned = !!pod?.spec?.nodeName && holdsNode(pod);
  if (!wasAssigned && isAssigned) return 'AssignedPodAdd';
  if (wasAssigned && !isAssigned) return 'AssignedPodDelete';
  if (wasAssigned && isAssigned && labelsKey(old) !== labelsKey(pod)) return 'AssignedPodUpdate';
  return undefined;
}
