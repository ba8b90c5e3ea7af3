// generateAPIPodStatus: turns what the runtime reports about a pod into the v1 PodStatus the kubelet
// would publish (phase §9, conditions §10, container statuses §8.3, then the prober's started/ready).

import type { Pod, PodStatus } from '../api/types.js';
import type { ContainerStatus as RuntimeContainerStatus, PodSandboxStatus } from '../runtime/cri.js';
import type { ProbeManager } from '../prober/types.js';

/** The last failed start of a container (the kubelet's reason cache). */
export interface StartFailure {
  /** e.g. `CrashLoopBackOff`, `PostStartHookError`, `RunContainerError`, `CreateContainerConfigError`. */
  reason: string;
  message: string;
}

export interface GenerateStatusInput {
  pod: Pod;
  /** The pod's current sandbox, if any. */
  sandbox?: PodSandboxStatus;
  /** Every runtime instance of this pod's containers, in any state and any order. */
  containers: RuntimeContainerStatus[];
  /** Scheme for containerID: `<runtimeName>://<id>`. */
  runtimeName: string;
  /** Container name → last start failure; only shown for containers that should be restarted. */
  reasonCache: ReadonlyMap<string, StartFailure>;
  /** The status manager's cached status for this pod (previous generation), if any. */
  previous?: PodStatus;
  /** True once the pod worker has decided the pod is finished (all containers stopped for good). */
  podIsTerminal: boolean;
  /** RFC 3339 time the pod worker first started the pod. */
  startTime?: string;
  hostIP: string;
  /** Forces phase Failed with this reason/message (activeDeadlineSeconds, admission rejection). */
  failure?: { reason: string; message: string };
  /** Fills in started/ready; omitted in tests of the pure status logic. */
  probeManager?: Pick<ProbeManager, 'updatePodStatus'>;
  /** ms since epoch, for lastTransitionTime of conditions. */
  now: number;
}

export function generateAPIPodStatus(input: GenerateStatusInput): PodStatus {
  void input;
  throw new Error('generateAPIPodStatus: not implemented yet');
}
