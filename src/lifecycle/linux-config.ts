// The Linux part of a container's runtime config, as kuberuntime's generateLinuxContainerConfig and
// determineEffectiveSecurityContext build it: cgroup resources from limits and requests, and the
// user and groups from the pod's and the container's security contexts (the container's wins).

import type { Container, Pod } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';
import type { LinuxContainerResources, LinuxContainerSecurityContext } from '../runtime/cri.js';
import { ContainerConfigError } from './envvars.js';

/** cm.QuotaPeriod and cm.MinQuotaPeriod (µs), cm.MinShares. */
const QUOTA_PERIOD = 100_000;
const MIN_QUOTA_PERIOD = 1000;
const MIN_SHARES = 2;

function milli(v: string | number | undefined): bigint | undefined {
  if (v === undefined || v === '') return undefined;
  try {
    return parseQuantity(String(v)).milliValue();
  } catch {
    return undefined;
  }
}

function bytes(v: string | number | undefined): bigint | undefined {
  if (v === undefined || v === '') return undefined;
  try {
    return parseQuantity(String(v)).value();
  } catch {
    return undefined;
  }
}

/** Cgroup settings of a container: memory limit, CFS quota from the CPU limit, shares from the request. */
export function containerResources(container: Container): LinuxContainerResources {
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const cpuLimit = milli(limits.cpu) ?? 0n;
  const cpuRequest = milli(requests.cpu) ?? cpuLimit;
  let cpuQuota = 0;
  if (cpuLimit > 0n) cpuQuota = Math.max(MIN_QUOTA_PERIOD, Number((cpuLimit * BigInt(QUOTA_PERIOD)) / 1000n));
  const shares = cpuRequest > 0n ? Math.max(MIN_SHARES, Number((cpuRequest * 1024n) / 1000n)) : MIN_SHARES;
  return {
    cpuPeriod: cpuLimit > 0n ? QUOTA_PERIOD : 0,
    cpuQuota,
    cpuShares: shares,
    memoryLimitInBytes: Number(bytes(limits.memory) ?? 0n),
    oomScoreAdj: 0,
  };
}

/**
 * The effective user and groups; throws ContainerConfigError, in the kubelet's words, when
 * runAsNonRoot is set and the container would run as root (imageUid: the user it runs as unless told).
 */
export function containerSecurityContext(pod: Pod, container: Container, imageUid: number): LinuxContainerSecurityContext {
  const psc = pod.spec?.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const sc: LinuxContainerSecurityContext = {};
  const runAsUser = csc.runAsUser ?? psc.runAsUser;
  const runAsGroup = csc.runAsGroup ?? psc.runAsGroup;
  if (runAsUser !== undefined) sc.runAsUser = runAsUser;
  if (runAsGroup !== undefined) sc.runAsGroup = runAsGroup;
  if (psc.supplementalGroups?.length) sc.supplementalGroups = [...psc.supplementalGroups];
  if ((csc.runAsNonRoot ?? psc.runAsNonRoot) === true) {
    const podName = `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? ''}`;
    if (runAsUser === 0) {
      throw new ContainerConfigError(`container's runAsUser breaks non-root policy (pod: ${JSON.stringify(podName)}, container: ${container.name})`);
    }
    if (runAsUser === undefined && imageUid === 0) {
      throw new ContainerConfigError(`container has runAsNonRoot and image will run as root (pod: ${JSON.stringify(podName)}, container: ${container.name})`);
    }
  }
  return sc;
}
