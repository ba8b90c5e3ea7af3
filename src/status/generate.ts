// generateAPIPodStatus: turns what the runtime reports about a pod into the v1 PodStatus the kubelet
// would publish (phase §9, conditions §10, container statuses §8.3, then the prober's started/ready).

import type { ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';
import type { ContainerStatus as RuntimeContainerStatus, PodSandboxStatus } from '../runtime/cri.js';
import type { ProbeManager } from '../prober/types.js';
import {
  assignTransitionTimes,
  generateContainersReadyCondition,
  generatePodInitializedCondition,
  generatePodReadyCondition,
  generatePodReadyToStartContainersCondition,
  kubeletOwnedConditionTypes,
  podScheduledCondition,
} from './conditions.js';
import { compareNewestFirst, convertToAPIContainerStatuses, latestInstances } from './container-statuses.js';
import { getPhase, isRestartableInitContainer, isTerminalPhase } from './phase.js';
import { getPodQOS } from './qos.js';
import type { StartFailure } from './reason-cache.js';
import { toRFC3339 } from './time.js';

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
  /**
   * The pod shares the host's network (spec.hostNetwork, or a runtime whose pods all do): its IPs are
   * the node's (hostIP), as the kubelet gives a host-network pod, whatever the sandbox reports.
   * spec.hostNetwork alone when unset.
   */
  onHostNetwork?: boolean;
  /** Forces phase Failed with this reason/message (activeDeadlineSeconds, admission rejection). */
  failure?: { reason: string; message: string };
  /** Fills in started/ready; omitted in tests of the pure status logic. */
  probeManager?: Pick<ProbeManager, 'updatePodStatus'>;
  /** ms since epoch, for lastTransitionTime of conditions. */
  now: number;
}

/**
 * Without a probe manager every container counts as having no probes: started = running, ready =
 * running (regular containers and sidecars), plain init containers ready once exited 0 (§3.3).
 */
function setStartedAndReadyWithoutProbes(pod: Pod, status: PodStatus): void {
  for (const s of status.containerStatuses ?? []) {
    s.started = !!s.state?.running;
    s.ready = !!s.state?.running;
  }
  const init = pod.spec!.initContainers ?? [];
  (status.initContainerStatuses ?? []).forEach((s, i) => {
    s.started = !!s.state?.running;
    const c = init[i];
    if (c && isRestartableInitContainer(c)) s.ready = !!s.state?.running;
    else if (s.state?.terminated?.exitCode === 0) s.ready = true;
  });
}

/** Pod IPs from the sandbox: its primary IP, then the first additional IP of the other family. */
function sandboxIPs(sandbox: PodSandboxStatus | undefined): string[] {
  if (!sandbox || !sandbox.network.ip) return [];
  const ips = [sandbox.network.ip];
  const v6 = sandbox.network.ip.includes(':');
  const other = sandbox.network.additionalIps.find((ip) => ip.includes(':') !== v6);
  if (other) ips.push(other);
  return ips;
}

export function generateAPIPodStatus(input: GenerateStatusInput): PodStatus {
  const { pod } = input;
  const spec = pod.spec!;
  const apiStatus = pod.status ?? {};
  const old: PodStatus = input.previous ?? apiStatus;

  const sortedInstances = [...input.containers].sort(compareNewestFirst);
  const latest = latestInstances(input.containers);
  const common = {
    pod,
    instances: input.containers,
    sortedInstances,
    latest,
    runtimeName: input.runtimeName,
    reasonCache: input.reasonCache,
  };
  const containerStatuses = convertToAPIContainerStatuses({
    ...common,
    containers: spec.containers,
    isInitContainer: false,
    previous: old.containerStatuses,
  });
  const initContainerStatuses = convertToAPIContainerStatuses({
    ...common,
    containers: spec.initContainers ?? [],
    isInitContainer: true,
    previous: old.initContainerStatuses,
  });

  let phase: string = getPhase(spec, initContainerStatuses, containerStatuses, input.podIsTerminal);
  // A terminal phase, once reached (cached or in the API object), is kept.
  if (!isTerminalPhase(phase)) {
    if (isTerminalPhase(old.phase)) phase = old.phase;
    else if (isTerminalPhase(apiStatus.phase)) phase = apiStatus.phase;
  }
  let reason: string | undefined;
  let message: string | undefined;
  if (phase === old.phase) {
    reason = old.reason || apiStatus.reason;
    message = old.message || apiStatus.message;
  }
  if (input.failure) {
    phase = 'Failed';
    reason = input.failure.reason;
    message = input.failure.message;
  }
  if (isTerminalPhase(apiStatus.phase) && phase !== apiStatus.phase) phase = apiStatus.phase;

  // A pod on the host's network has the node's address (the kubelet's node IPs for a host-network pod).
  const onHost = input.onHostNetwork ?? !!pod.spec?.hostNetwork;
  const podIPs = onHost && input.hostIP ? [input.hostIP] : sandboxIPs(input.sandbox);
  if (podIPs.length === 0 && old.podIP) podIPs.push(...(old.podIPs?.map((p) => p.ip!) ?? [old.podIP]));

  // Keys in the order of the API server's JSON.
  const status: PodStatus = {};
  status.conditions = [];
  status.containerStatuses = containerStatuses;
  status.hostIP = input.hostIP;
  status.hostIPs = [{ ip: input.hostIP }];
  if (initContainerStatuses.length > 0) status.initContainerStatuses = initContainerStatuses;
  if (message) status.message = message;
  status.phase = phase;
  if (podIPs.length > 0) {
    status.podIP = podIPs[0];
    status.podIPs = podIPs.map((ip) => ({ ip }));
  }
  status.qosClass = getPodQOS(pod);
  if (reason) status.reason = reason;
  const startTime = input.startTime ?? old.startTime;
  if (startTime) status.startTime = startTime;

  if (input.probeManager) input.probeManager.updatePodStatus(pod, status);
  else setStartedAndReadyWithoutProbes(pod, status);

  status.conditions = generateConditions(pod, old, containerStatuses, initContainerStatuses, phase, input.sandbox);
  assignTransitionTimes(status.conditions, old.conditions, toRFC3339(input.now));
  return status;
}

/** Conditions not owned by the kubelet, DisruptionTarget from the cached status, then §10's five. */
function generateConditions(
  pod: Pod,
  old: PodStatus,
  containerStatuses: ContainerStatus[],
  initContainerStatuses: ContainerStatus[],
  phase: string,
  sandbox: PodSandboxStatus | undefined,
): PodCondition[] {
  const conditions: PodCondition[] = [];
  for (const c of pod.status?.conditions ?? []) {
    if (!kubeletOwnedConditionTypes.has(c.type)) conditions.push({ ...c });
  }
  const disruption = old.conditions?.find((c) => c.type === 'DisruptionTarget');
  if (disruption) {
    const i = conditions.findIndex((c) => c.type === 'DisruptionTarget');
    if (i >= 0) conditions[i] = { ...disruption };
    else conditions.push({ ...disruption });
  }
  conditions.push(generatePodReadyToStartContainersCondition(sandbox));
  conditions.push(generatePodInitializedCondition(pod, initContainerStatuses, containerStatuses, phase));
  conditions.push(generatePodReadyCondition(pod, conditions, initContainerStatuses, containerStatuses, phase));
  conditions.push(generateContainersReadyCondition(pod, initContainerStatuses, containerStatuses, phase));
  conditions.push(podScheduledCondition());
  return conditions;
}
