// The Linux parts of a container's and a sandbox's CRI config, as the kubelet's kuberuntime builds
// them for a runtime with images: resources (CPU shares and quota, memory limit, OOM score), the
// effective security context, namespaces, DNS from the host's resolv.conf, and runAsNonRoot.

import { parseQuantity } from '../api/quantity.js';
import type { Container, Pod } from '../api/types.js';
import type {
  DNSConfig,
  Image,
  LinuxContainerResources,
  LinuxContainerSecurityContext,
  LinuxSandboxSecurityContext,
  NamespaceOption,
  PodSandboxConfig,
} from '../runtime/cri.js';
import { getPodQOS } from '../status/qos.js';
import { clusterFirstDNS, type ClusterDNSSettings } from './cluster-dns.js';
import { ContainerConfigError } from './envvars.js';
import { formatPod } from './format.js';

// cm/helpers_linux.go
const MIN_SHARES = 2;
const MAX_SHARES = 262144;
const SHARES_PER_CPU = 1024;
const QUOTA_PERIOD = 100_000;
const MIN_QUOTA_PERIOD = 1000;
// qos/policy.go
const GUARANTEED_OOM_SCORE_ADJ = -997;
const BEST_EFFORT_OOM_SCORE_ADJ = 1000;

/** milliCPUToShares */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** milliCPUToQuota */
export function milliCPUToQuota(milliCPU: number, period: number): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD, Math.floor((milliCPU * period) / 1000));
}

function quantity(v: string | number | undefined, milli: boolean): number | undefined {
  if (v === undefined || v === '') return undefined;
  const q = parseQuantity(String(v));
  return Number(milli ? q.milliValue() : q.value());
}

/** GetContainerOOMScoreAdjust */
export function containerOOMScoreAdj(pod: Pod, container: Container, memoryCapacity: number): number {
  const qos = getPodQOS(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BEST_EFFORT_OOM_SCORE_ADJ;
  const request = quantity(container.resources?.requests?.memory, false) ?? 0;
  const adj = 1000 - Math.floor((1000 * request) / memoryCapacity);
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BEST_EFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

/** generateLinuxContainerResources: shares from the CPU request, quota from its limit, the memory limit. */
export function linuxContainerResources(pod: Pod, container: Container, memoryCapacity: number): LinuxContainerResources {
  const cpuLimit = quantity(container.resources?.limits?.cpu, true);
  const cpuRequest = quantity(container.resources?.requests?.cpu, true) ?? cpuLimit ?? 0;
  const memLimit = quantity(container.resources?.limits?.memory, false) ?? 0;
  const r: LinuxContainerResources = {
    cpuPeriod: 0,
    cpuQuota: 0,
    cpuShares: milliCPUToShares(cpuRequest),
    memoryLimitInBytes: memLimit,
    oomScoreAdj: containerOOMScoreAdj(pod, container, memoryCapacity),
  };
  if (cpuLimit !== undefined) {
    r.cpuPeriod = QUOTA_PERIOD;
    r.cpuQuota = milliCPUToQuota(cpuLimit, QUOTA_PERIOD);
  }
  return r;
}

export function namespaceOptions(pod: Pod): NamespaceOption {
  const s = pod.spec ?? ({} as NonNullable<Pod['spec']>);
  return {
    network: s.hostNetwork ? 'NODE' : 'POD',
    pid: s.hostPID ? 'NODE' : s.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: s.hostIPC ? 'NODE' : 'POD',
  };
}

/** determineEffectiveSecurityContext + convertToRuntimeSecurityContext. */
export function containerSecurityContext(pod: Pod, container: Container): LinuxContainerSecurityContext {
  const psc = pod.spec?.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const sc: LinuxContainerSecurityContext = { namespaceOptions: namespaceOptions(pod) };
  const runAsUser = csc.runAsUser ?? psc.runAsUser;
  const runAsGroup = csc.runAsGroup ?? psc.runAsGroup;
  if (runAsUser !== undefined && runAsUser !== null) sc.runAsUser = runAsUser;
  if (runAsGroup !== undefined && runAsGroup !== null) sc.runAsGroup = runAsGroup;
  if (csc.readOnlyRootFilesystem) sc.readonlyRootfs = true;
  if (csc.privileged) sc.privileged = true;
  if (csc.capabilities) {
    sc.capabilities = { addCapabilities: [...(csc.capabilities.add ?? [])], dropCapabilities: [...(csc.capabilities.drop ?? [])] };
  }
  const groups = [...(psc.supplementalGroups ?? [])];
  if (psc.fsGroup !== undefined && psc.fsGroup !== null) groups.push(psc.fsGroup);
  if (groups.length) sc.supplementalGroups = groups;
  if (csc.allowPrivilegeEscalation === false) sc.noNewPrivs = true;
  return sc;
}

/** verifyRunAsNonRoot: throws ContainerConfigError when the container would run as root against runAsNonRoot. */
export function verifyRunAsNonRoot(pod: Pod, container: Container, image: Image | null): void {
  const psc = pod.spec?.securityContext ?? {};
  const csc = container.securityContext ?? {};
  if (!(csc.runAsNonRoot ?? psc.runAsNonRoot)) return;
  const user = csc.runAsUser ?? psc.runAsUser;
  if (user !== undefined && user !== null) {
    if (user === 0) throw new ContainerConfigError(`container's runAsUser breaks non-root policy (pod: "${formatPod(pod)}", container: ${container.name})`);
    return;
  }
  if (image?.uid === undefined && image?.username) {
    throw new ContainerConfigError(
      `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root (pod: "${formatPod(pod)}", container: ${container.name})`,
    );
  }
  if (!image?.uid)
    throw new ContainerConfigError(`container has runAsNonRoot and image will run as root (pod: "${formatPod(pod)}", container: ${container.name})`);
}

/** A resolv.conf's nameservers, search domains and options (the last `search` line wins). */
export function parseResolvConf(text: string): DNSConfig {
  const cfg: DNSConfig = { servers: [], searches: [], options: [] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const f = line.split(/\s+/).filter(Boolean);
    if (f[0] === 'nameserver' && f[1]) cfg.servers.push(f[1]);
    else if (f[0] === 'search') cfg.searches = f.slice(1).filter((s) => s !== '.');
    else if (f[0] === 'options') cfg.options.push(...f.slice(1));
  }
  cfg.servers = cfg.servers.slice(0, 3);
  cfg.searches = cfg.searches.slice(0, 32);
  return cfg;
}

const dedupe = (xs: string[]) => [...new Set(xs)];

/**
 * GetPodDNS: ClusterFirst gets the cluster DNS where there is one (cluster-dns.ts), else falls back to
 * the host's resolv.conf as Default does (the caller reports MissingClusterDNS); None takes only
 * spec.dnsConfig; spec.dnsConfig is appended.
 */
export function podDNSConfig(pod: Pod, hostResolvConf: string, cluster?: ClusterDNSSettings): { config: DNSConfig; missingClusterDNS: boolean } {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  const clusterFirst = policy === 'ClusterFirst' ? !pod.spec?.hostNetwork : policy === 'ClusterFirstWithHostNet';
  const host: DNSConfig = policy === 'None' ? { servers: [], searches: [], options: [] } : parseResolvConf(hostResolvConf);
  const base = clusterFirst && cluster ? clusterFirstDNS(pod, host, cluster) : host;
  const extra = pod.spec?.dnsConfig;
  if (extra) {
    base.servers = dedupe([...base.servers, ...(extra.nameservers ?? [])]);
    base.searches = dedupe([...base.searches, ...(extra.searches ?? [])]);
    const opts = new Map<string, string>();
    for (const o of base.options) opts.set(o.split(':')[0]!, o);
    for (const o of extra.options ?? []) opts.set(o.name ?? '', o.value !== undefined && o.value !== null ? `${o.name}:${o.value}` : (o.name ?? ''));
    base.options = [...opts.values()].filter(Boolean);
  }
  return { config: base, missingClusterDNS: clusterFirst && !cluster };
}

/** The sandbox config's Linux part and DNS for a runtime with namespaces (generatePodSandboxLinuxConfig). */
export function linuxSandboxConfig(pod: Pod, config: PodSandboxConfig, dns: DNSConfig): PodSandboxConfig {
  const psc = pod.spec?.securityContext ?? {};
  const sc: LinuxSandboxSecurityContext = { namespaceOptions: namespaceOptions(pod) };
  if (psc.runAsUser !== undefined && psc.runAsUser !== null) sc.runAsUser = psc.runAsUser;
  if (psc.runAsGroup !== undefined && psc.runAsGroup !== null) sc.runAsGroup = psc.runAsGroup;
  const groups = [...(psc.supplementalGroups ?? [])];
  if (psc.fsGroup !== undefined && psc.fsGroup !== null) groups.push(psc.fsGroup);
  if (groups.length) sc.supplementalGroups = groups;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  if (all.some((c) => c.securityContext?.privileged)) sc.privileged = true;
  const sysctls: Record<string, string> = {};
  for (const s of psc.sysctls ?? []) sysctls[s.name] = s.value;
  return {
    ...config,
    // The kubelet leaves the hostname to the runtime (the node's) for a pod on the host's network.
    hostname: pod.spec?.hostNetwork ? '' : config.hostname,
    dnsConfig: dns,
    linux: { ...config.linux, securityContext: sc, ...(Object.keys(sysctls).length ? { sysctls } : {}) },
  };
}
