// The agent's settings, read from the values of its flags (as the kubelet's KubeletConfiguration is
// read from its flags): runtime and CRI endpoint, root dir, node allocatable, the DiskPressure thresholds,
// the crash-loop back-off cap, the pod pid limit, containerd's pod network and the Services' network. Every command that runs pods reads them here.

import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseQuantity } from '../api/quantity.js';
import { parseIpv4, parseIpv4Range } from '../kubeapi/service-allocator.js';
import { DEFAULT_MAX_PODS, type NodeAllocatable } from '../kubelet/admission.js';
import { parseEvictionHard, type EvictionThresholds } from '../kubelet/disk-pressure.js';
import { criTarget } from '../runtime/cri/proto.js';
import { managedContainerdLayout } from '../runtime/containerd/config.js';
import { defaultSandboxImage } from '../runtime/containerd/pause-image.js';
import type { ManagedContainerdSettings } from '../runtime/containerd/managed.js';
import { defaultRuntimeEndpoint, rootDirSocketProblem, UNIX_SOCKET_PATH_MAX } from '../runtime/process-runtime.js';
import { MIXED_RUNTIME } from '../runtime/pod-rules.js';
import { defaultRootDir } from '../runtime/root-dir.js';
import { parseGoDuration } from '../util/go-duration.js';
import type { ProxyMode } from '../proxy/service-proxy.js';

export const supportedRuntimes = ['process', 'containerd', MIXED_RUNTIME];

/** containerd's own socket, where a host's containerd (Docker's, a kubelet's) serves. */
export const DEFAULT_CONTAINER_RUNTIME_ENDPOINT = 'unix:///run/containerd/containerd.sock';

/** Flag values by long name (absent: undefined), as the command line gave them. */
export type FlagValues = Readonly<Record<string, string | boolean | number | string[] | undefined>>;

/** A flag value the agent cannot run with; the message names the flag as pflag does. */
export class InvalidSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSettingError';
  }
}

/** Everything the agent flags decide, checked. */
export interface AgentSettings {
  runtime: string;
  rootDir: string;
  /** The CRI endpoint (`unix:///…`); with both runtimes, containerd's. */
  runtimeEndpoint: string;
  /**
   * --runtime=process,containerd: the root dir's process runtime service beside containerd, for pods
   * whose RuntimeClass handler is `process` (every other pod runs on containerd).
   */
  processRuntimeEndpoint?: string;
  /**
   * --runtime=containerd without --container-runtime-endpoint: the containerd podvisor runs for the
   * root dir (<root>/containerd), started when nothing answers on its socket.
   */
  managedContainerd?: ManagedContainerdSettings;
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** --eviction-hard: the root dir's DiskPressure thresholds. */
  evictionHard?: EvictionThresholds;
  /** The kubelet's podPidsLimit; unset = unlimited. */
  podPidsLimit?: number;
  /** --runtime=containerd: the pod network to write, if any. */
  cniConfDir?: string;
  /** --pod-network=cni (the process runtime): a network namespace per pod on the CNI bridge. */
  podNetwork?: 'cni';
  podCIDR?: string;
  /** --service-cluster-ip-range: where Services' ClusterIPs come from (default 127.99.0.0/16, on the loopback). */
  serviceClusterIPRange?: string;
  /** --nodeport-addresses: where NodePorts listen (default 127.0.0.1). */
  nodePortAddresses?: string[];
  /** --proxy-mode: userspace (default) or iptables. */
  proxyMode?: ProxyMode;
  /** --ingress-http-port and --ingress-https-port: the ports tried in order (0: a free port). */
  ingressPorts?: { http: number[]; https: number[] };
}

/** Where relative paths and the default root dir are resolved. */
export interface SettingsPlace {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const invalid = (raw: unknown, name: string, why: string) => new InvalidSettingError(`invalid argument "${String(raw)}" for "--${name}" flag: ${why}`);

function quantitySetting(flags: FlagValues, name: string, kind: 'cpu' | 'memory'): number | undefined {
  const raw = flags[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    const q = parseQuantity(String(raw));
    const v = Number(kind === 'cpu' ? q.milliValue() : q.value());
    if (v <= 0) throw new Error('must be greater than 0');
    return v;
  } catch (err) {
    throw invalid(raw, name, (err as Error).message);
  }
}

function maxPodsSetting(flags: FlagValues): number | undefined {
  const raw = flags['max-pods'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < 1) throw invalid(raw, 'max-pods', 'must be a whole number greater than 0');
  return n;
}

/** --pod-max-pids: a whole number, or -1 (unlimited, the kubelet's default). */
function podMaxPidsSetting(flags: FlagValues): number | undefined {
  const raw = flags['pod-max-pids'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^-?[0-9]+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < -1 || n === 0)
    throw invalid(raw, 'pod-max-pids', 'must be -1 or a whole number greater than 0');
  return n;
}

/** Node allocatable: the host's CPUs (×1000 m) and memory, unless --node-cpu / --node-memory say otherwise. */
export function nodeAllocatableSetting(flags: FlagValues): NodeAllocatable {
  return {
    cpuMilli: quantitySetting(flags, 'node-cpu', 'cpu') ?? availableParallelism() * 1000,
    memoryBytes: quantitySetting(flags, 'node-memory', 'memory') ?? totalmem(),
    pods: maxPodsSetting(flags) ?? DEFAULT_MAX_PODS,
  };
}

/** A --runtime other than the ones built in is refused. */
export function runtimeSetting(flags: FlagValues): string {
  const given = String(flags.runtime ?? 'process');
  // Both runtimes, in either order: one agent runs pods on each by RuntimeClass.
  const runtime = given === 'containerd,process' ? MIXED_RUNTIME : given;
  if (!supportedRuntimes.includes(runtime)) {
    throw new InvalidSettingError(`unsupported runtime "${runtime}" for "--runtime" flag: supported runtimes: ${supportedRuntimes.join(', ')}`);
  }
  return runtime;
}

/** The crashLoopBackOff cap in seconds from --max-container-restart-period (1s..300s, as the kubelet checks). */
export function maxRestartPeriodSetting(flags: FlagValues): number | undefined {
  const name = 'max-container-restart-period';
  const raw = flags[name];
  if (raw === undefined || raw === '') return undefined;
  let ms: number;
  try {
    ms = parseGoDuration(String(raw));
  } catch (err) {
    throw invalid(raw, name, (err as Error).message);
  }
  if (ms < 0) throw invalid(raw, name, 'must not be negative');
  if (ms < 1000 || ms > 300_000) throw invalid(raw, name, 'must be between 1s and 300s');
  return ms / 1000;
}

/** An ingress port flag: the port given, else the well-known one then a free one as root, else a free one. */
function ingressPorts(flags: FlagValues, name: string, wellKnown: number): number[] {
  const raw = flags[name];
  if (raw === undefined || raw === '') return process.getuid?.() === 0 ? [wellKnown, 0] : [0];
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw)) || n > 65535) throw invalid(raw, name, 'must be a port number between 0 and 65535 (0: a free port)');
  return [n];
}

/** --service-cluster-ip-range, --nodeport-addresses, --proxy-mode and the ingress ports, checked. */
function serviceSettings(flags: FlagValues, settings: AgentSettings): void {
  const range = flags['service-cluster-ip-range'];
  if (range !== undefined && range !== '') {
    try {
      settings.serviceClusterIPRange = parseIpv4Range(String(range)).cidr;
    } catch (err) {
      throw invalid(range, 'service-cluster-ip-range', (err as Error).message);
    }
  }
  const addrs = flags['nodeport-addresses'];
  if (addrs !== undefined && addrs !== '') {
    const list = String(addrs)
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const bad = list.find((a) => parseIpv4(a) === undefined);
    if (bad !== undefined) throw invalid(addrs, 'nodeport-addresses', `${bad} is not an IPv4 address`);
    settings.nodePortAddresses = list;
  }
  settings.ingressPorts = { http: ingressPorts(flags, 'ingress-http-port', 80), https: ingressPorts(flags, 'ingress-https-port', 443) };
  const mode = flags['proxy-mode'];
  if (mode !== undefined && mode !== '') {
    if (mode !== 'userspace' && mode !== 'iptables') throw invalid(mode, 'proxy-mode', 'must be userspace or iptables');
    settings.proxyMode = mode;
  }
}

/** The settings the agent flags decide; throws InvalidSettingError for a bad value. */
export function agentSettingsOf(flags: FlagValues, place: SettingsPlace): AgentSettings {
  const runtime = runtimeSetting(flags);
  const rootFlag = flags['root-dir'];
  const rootDir = rootFlag ? resolve(place.cwd, String(rootFlag)) : defaultRootDir(place.env);
  const socketProblem = rootDirSocketProblem(rootDir);
  if (socketProblem)
    throw rootFlag
      ? invalid(rootFlag, 'root-dir', socketProblem)
      : new InvalidSettingError(`${socketProblem} (the default root dir ${rootDir}: give --root-dir)`);
  const endpointFlag = flags['container-runtime-endpoint'];
  const withContainerd = runtime !== 'process';
  const managed = withContainerd && !endpointFlag;
  const runtimeEndpoint = endpointFlag ? String(endpointFlag) : managed ? `unix://${managedContainerdLayout(rootDir).socket}` : defaultRuntimeEndpoint(rootDir);
  try {
    criTarget(runtimeEndpoint);
  } catch (err) {
    throw invalid(runtimeEndpoint, 'container-runtime-endpoint', (err as Error).message);
  }
  const settings: AgentSettings = { runtime, rootDir, runtimeEndpoint, node: nodeAllocatableSetting(flags) };
  if (runtime === MIXED_RUNTIME) settings.processRuntimeEndpoint = defaultRuntimeEndpoint(rootDir);
  const cap = maxRestartPeriodSetting(flags);
  if (cap !== undefined) settings.crashLoopBackOffMaxSeconds = cap;
  const evictionHard = flags['eviction-hard'];
  if (evictionHard !== undefined && evictionHard !== '') {
    try {
      settings.evictionHard = parseEvictionHard(String(evictionHard));
    } catch (err) {
      throw invalid(evictionHard, 'eviction-hard', (err as Error).message);
    }
  }
  const transition = flags['eviction-pressure-transition-period'];
  if (transition !== undefined && transition !== '') {
    let ms: number;
    try {
      ms = parseGoDuration(String(transition));
    } catch (err) {
      throw invalid(transition, 'eviction-pressure-transition-period', (err as Error).message);
    }
    if (ms < 0) throw invalid(transition, 'eviction-pressure-transition-period', 'must not be negative');
    settings.evictionHard = { ...settings.evictionHard, pressureTransitionPeriodMs: ms };
  }
  const pids = podMaxPidsSetting(flags);
  if (pids !== undefined) settings.podPidsLimit = pids;
  serviceSettings(flags, settings);
  const cniDir = flags['cni-conf-dir'];
  const cidr = flags['pod-cidr'];
  const podNetwork = flags['pod-network'];
  if (podNetwork !== undefined && podNetwork !== '' && podNetwork !== 'host') {
    if (podNetwork !== 'cni') throw invalid(podNetwork, 'pod-network', 'must be host or cni');
    if (runtime !== 'process') throw new InvalidSettingError('flag "--pod-network" needs --runtime=process (containerd gives every pod a network of its own)');
    settings.podNetwork = 'cni';
    if (cidr) settings.podCIDR = String(cidr);
  }
  if (!withContainerd) {
    managedOnlyFlags(flags);
    for (const [name, v] of [
      ['cni-conf-dir', cniDir],
      ['pod-cidr', settings.podNetwork ? undefined : cidr],
    ] as const) {
      if (v !== undefined && v !== '')
        throw new InvalidSettingError(`flag "--${name}" needs --runtime=containerd${name === 'pod-cidr' ? ' or --pod-network=cni' : ''}`);
    }
    return settings;
  }
  if (cniDir) settings.cniConfDir = resolve(place.cwd, String(cniDir));
  if (managed) managedContainerdSettings(flags, place, settings);
  else managedOnlyFlags(flags);
  if (cidr) {
    if (!settings.cniConfDir) throw new InvalidSettingError('flag "--pod-cidr" needs --cni-conf-dir');
    settings.podCIDR = String(cidr);
  }
  return settings;
}

/** Flags of the containerd podvisor runs, refused with a runtime it does not run. */
const MANAGED_FLAGS = ['pod-infra-container-image', 'registry-config'];

function managedOnlyFlags(flags: FlagValues): void {
  for (const name of MANAGED_FLAGS) {
    const v = flags[name];
    if (v !== undefined && v !== '')
      throw new InvalidSettingError(`flag "--${name}" needs --runtime=containerd without --container-runtime-endpoint (the containerd podvisor starts)`);
  }
}

/** The containerd of the root dir: its socket must fit, its CNI directory is the pod network's. */
function managedContainerdSettings(flags: FlagValues, place: SettingsPlace, settings: AgentSettings): void {
  const layout = managedContainerdLayout(settings.rootDir);
  const longest = `${layout.socket}.ttrpc`;
  if (Buffer.byteLength(longest) > UNIX_SOCKET_PATH_MAX) {
    throw new InvalidSettingError(
      `the root dir is too long for containerd's sockets: ${longest} would be ${Buffer.byteLength(longest)} bytes, and a unix socket path holds at most ${UNIX_SOCKET_PATH_MAX}; give a shorter --root-dir`,
    );
  }
  settings.cniConfDir ??= layout.cniConfDir;
  const image = flags['pod-infra-container-image'];
  const registry = flags['registry-config'];
  settings.managedContainerd = {
    rootDir: settings.rootDir,
    sandboxImage: image ? String(image) : defaultSandboxImage(),
    cniConfDir: settings.cniConfDir,
    ...(registry ? { registryConfigDir: resolve(place.cwd, String(registry)) } : {}),
  };
}
