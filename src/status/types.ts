// The status manager's contract: the one place that holds each pod's latest v1 PodStatus, as the
// kubelet's status manager does, with condition transition times kept stable across updates.

import type { Pod, PodStatus } from '../api/types.js';
import type { PodStatusProvider } from '../prober/types.js';

export interface StatusManager extends PodStatusProvider {
  /** Registers (or replaces) the pod object the statuses belong to. */
  setPod(pod: Pod): void;
  /**
   * Stores a freshly generated status. Condition lastTransitionTime is carried over from the stored
   * status when the condition's status did not change; a terminal phase is never left.
   */
  setPodStatus(pod: Pod, status: PodStatus): void;
  /** §7.1 SetContainerReadiness: sets `ready`, recomputes Ready and ContainersReady conditions. */
  setContainerReadiness(podUid: string, containerId: string, ready: boolean): void;
  /** §7.1 SetContainerStartup: sets `started` only. */
  setContainerStartup(podUid: string, containerId: string, started: boolean): void;
  removePod(podUid: string): void;
  /** Called after every stored change. */
  onChange(listener: (podUid: string, status: PodStatus) => void): () => void;
}
