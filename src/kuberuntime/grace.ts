// Grace-period selection for killing a container (§11.4, kuberuntime setTerminationGracePeriod) and
// the 2 s floor the kubelet always leaves between the stop signal and SIGKILL.

import type { Container, Pod } from '../api/types.js';

/** minimumGracePeriodInSeconds */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/** Why a container is killed; selects the probe-level grace period. */
export type KillReason = '' | 'liveness' | 'startup' | 'unknown' | 'FailedPostStartHook';

/**
 * First match: the pod's deletionGracePeriodSeconds; then, when the pod sets
 * terminationGracePeriodSeconds, the failing probe's own value for a probe kill, else the pod's;
 * nothing set → 2.
 */
export function terminationGracePeriodSeconds(pod: Pod, container: Container | undefined, reason: KillReason): number {
  const deletionGrace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGrace !== undefined && deletionGrace !== null) return deletionGrace;
  const podGrace = pod.spec?.terminationGracePeriodSeconds;
  if (podGrace !== undefined && podGrace !== null) {
    const probe = reason === 'startup' ? container?.startupProbe : reason === 'liveness' ? container?.livenessProbe : undefined;
    const probeGrace = probe?.terminationGracePeriodSeconds;
    if (probeGrace !== undefined && probeGrace !== null) return probeGrace;
    return podGrace;
  }
  return MINIMUM_GRACE_PERIOD_SECONDS;
}
