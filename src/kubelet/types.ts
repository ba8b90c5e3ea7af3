// The agent core's contract with its front ends (the `run`/`up` commands, the HTTP server): admit
// pods, run a pod worker per pod, report statuses, terminate gracefully.

import type { Pod, PodStatus } from '../api/types.js';

export interface AdmitResult {
  admit: boolean;
  /** Kubelet admission reason, e.g. `OutOfcpu`, `OutOfmemory`, `NodePorts`. */
  reason?: string;
  message?: string;
}

export interface TerminateOptions {
  /** Overrides every grace period (as deletionGracePeriodSeconds does); 0 = kill at once. */
  gracePeriodSeconds?: number;
}

export interface Kubelet {
  /** Checks the pod against node allocatable and host ports, counting pods admitted so far. */
  admit(pod: Pod): AdmitResult;
  /** Marks a pod Failed with the admission reason and records the Warning event. */
  rejectPod(pod: Pod, reason: string, message: string): void;
  /** Starts a pod worker for an admitted pod. */
  startPod(pod: Pod): void;
  /** Every pod known (running, terminated or rejected), in the order they were given. */
  pods(): Pod[];
  getPodStatus(podUid: string): PodStatus | undefined;
  /** Resolves when the pod's worker has fully stopped every container (§11.5). */
  terminatePod(podUid: string, opts?: TerminateOptions): Promise<void>;
  terminateAll(opts?: TerminateOptions): Promise<void>;
  onPodStatus(listener: (pod: Pod, status: PodStatus) => void): () => void;
  /** Stops everything at once and releases the runtime. */
  close(): Promise<void>;
}
