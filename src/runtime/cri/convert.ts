// Conversions between podvisor's CRI-shaped types (runtime/cri.ts: ms timestamps, Node signal names,
// optional fields) and the CRI v1 wire messages as @grpc/proto-loader presents them (camelCase
// fields, enums as their names, int64 as decimal strings, nanosecond timestamps).

import type {
  AuthConfig,
  ContainerConfig,
  ContainerEvent,
  ContainerFilter,
  ContainerStatus,
  Image,
  ImageSpec,
  LinuxContainerResources,
  LinuxContainerSecurityContext,
  LinuxPodSandboxConfig,
  Mount,
  NamespaceOption,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
} from '../cri.js';

/** A wire message: plain object as proto-loader builds and accepts them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Wire = Record<string, any>;

const NS_PER_MS = 1_000_000n;

/** ms since the epoch → CRI int64 nanoseconds (as a decimal string, exact beyond 2^53). 0 stays 0. */
export function msToNs(ms: number): string {
  if (!ms) return '0';
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

/** CRI int64 nanoseconds (string, number or Long-like) → ms since the epoch, whole ms rounded down. */
export function nsToMs(ns: unknown): number {
  if (ns === undefined || ns === null || ns === '' || ns === 0 || ns === '0') return 0;
  try {
    return Number(BigInt(String(ns)) / NS_PER_MS);
  } catch {
    return 0;
  }
}

/** An int64 field (decimal string with `longs: String`) as a number. */
export function int64(v: unknown): number {
  if (v === undefined || v === null || v === '') return 0;
  return Number(v);
}

function optionalInt64(w: Wire | null | undefined): number | undefined {
  return w ? int64(w.value) : undefined;
}

function map(m: Record<string, string> | null | undefined): Record<string, string> {
  return { ...(m ?? {}) };
}

// --- signals: CRI's Signal enum is `SIGNAL_<name>`, with SIGNAL_RUNTIME_DEFAULT for "unset" ---

/** A stop signal as the CRI enum name; unset → SIGNAL_RUNTIME_DEFAULT. */
export function signalToWire(sig: string | undefined): string {
  if (!sig) return 'SIGNAL_RUNTIME_DEFAULT';
  return `SIGNAL_${sig.toUpperCase().startsWith('SIG') ? sig.toUpperCase() : `SIG${sig.toUpperCase()}`}`;
}

/** The CRI enum name as a Node signal name; undefined for the runtime default (or a real-time signal Node cannot name). */
export function signalFromWire(v: unknown): NodeJS.Signals | undefined {
  const s = String(v ?? '');
  if (!s.startsWith('SIGNAL_SIG')) return undefined;
  const name = s.slice('SIGNAL_'.length);
  if (/^SIGRT/.test(name)) return undefined;
  return name as NodeJS.Signals;
}

// --- shared pieces ---

function namespaceOptionToWire(n: NamespaceOption | undefined): Wire | undefined {
  if (!n) return undefined;
  return { network: n.network ?? 'POD', pid: n.pid ?? 'CONTAINER', ipc: n.ipc ?? 'POD' };
}

function namespaceOptionFromWire(w: Wire | null | undefined): NamespaceOption | undefined {
  if (!w) return undefined;
  return { network: w.network, pid: w.pid, ipc: w.ipc };
}

export function resourcesToWire(r: LinuxContainerResources | undefined): Wire | undefined {
  if (!r) return undefined;
  return {
    cpuPeriod: r.cpuPeriod,
    cpuQuota: r.cpuQuota,
    cpuShares: r.cpuShares,
    memoryLimitInBytes: r.memoryLimitInBytes,
    oomScoreAdj: r.oomScoreAdj,
    cpusetCpus: r.cpusetCpus ?? '',
    cpusetMems: r.cpusetMems ?? '',
    unified: r.unified ?? {},
  };
}

export function resourcesFromWire(w: Wire | null | undefined): LinuxContainerResources | undefined {
  if (!w) return undefined;
  const r: LinuxContainerResources = {
    cpuPeriod: int64(w.cpuPeriod),
    cpuQuota: int64(w.cpuQuota),
    cpuShares: int64(w.cpuShares),
    memoryLimitInBytes: int64(w.memoryLimitInBytes),
    oomScoreAdj: int64(w.oomScoreAdj),
  };
  if (w.cpusetCpus) r.cpusetCpus = w.cpusetCpus;
  if (w.cpusetMems) r.cpusetMems = w.cpusetMems;
  if (w.unified && Object.keys(w.unified).length > 0) r.unified = map(w.unified);
  return r;
}

function int64Value(v: number | undefined): Wire | undefined {
  return v === undefined ? undefined : { value: v };
}

function mountToWire(m: Mount): Wire {
  return {
    containerPath: m.containerPath,
    hostPath: m.hostPath,
    readonly: m.readonly,
    selinuxRelabel: m.selinuxRelabel ?? false,
    propagation: m.propagation ?? 'PROPAGATION_PRIVATE',
  };
}

function mountFromWire(w: Wire): Mount {
  const m: Mount = { containerPath: w.containerPath, hostPath: w.hostPath, readonly: !!w.readonly };
  if (w.selinuxRelabel) m.selinuxRelabel = true;
  if (w.propagation && w.propagation !== 'PROPAGATION_PRIVATE') m.propagation = w.propagation;
  return m;
}

/** The fields the sandbox's and the container's Linux security contexts share. */
type SharedSecurity = Pick<
  LinuxContainerSecurityContext,
  'namespaceOptions' | 'runAsUser' | 'runAsGroup' | 'readonlyRootfs' | 'supplementalGroups' | 'privileged'
>;

function sharedSecurityToWire(sc: SharedSecurity): Wire {
  return {
    namespaceOptions: namespaceOptionToWire(sc.namespaceOptions),
    runAsUser: int64Value(sc.runAsUser),
    runAsGroup: int64Value(sc.runAsGroup),
    readonlyRootfs: sc.readonlyRootfs ?? false,
    supplementalGroups: sc.supplementalGroups ?? [],
    privileged: sc.privileged ?? false,
  };
}

function sharedSecurityFromWire(w: Wire): SharedSecurity {
  const sc: SharedSecurity = {};
  const ns = namespaceOptionFromWire(w.namespaceOptions);
  if (ns) sc.namespaceOptions = ns;
  const uid = optionalInt64(w.runAsUser);
  if (uid !== undefined) sc.runAsUser = uid;
  const gid = optionalInt64(w.runAsGroup);
  if (gid !== undefined) sc.runAsGroup = gid;
  if (w.readonlyRootfs) sc.readonlyRootfs = true;
  if (w.supplementalGroups?.length) sc.supplementalGroups = w.supplementalGroups.map(int64);
  if (w.privileged) sc.privileged = true;
  return sc;
}

// --- pod sandboxes ---

function linuxSandboxToWire(l: LinuxPodSandboxConfig | undefined): Wire | undefined {
  if (!l) return undefined;
  const sc = l.securityContext;
  return {
    cgroupParent: l.cgroupParent ?? '',
    sysctls: l.sysctls ?? {},
    resources: resourcesToWire(l.resources),
    securityContext: sc && sharedSecurityToWire(sc),
  };
}

function linuxSandboxFromWire(w: Wire | null | undefined): LinuxPodSandboxConfig | undefined {
  if (!w) return undefined;
  const l: LinuxPodSandboxConfig = {};
  if (w.cgroupParent) l.cgroupParent = w.cgroupParent;
  if (w.sysctls && Object.keys(w.sysctls).length > 0) l.sysctls = map(w.sysctls);
  const resources = resourcesFromWire(w.resources);
  if (resources) l.resources = resources;
  const sc = w.securityContext as Wire | null | undefined;
  if (sc) l.securityContext = sharedSecurityFromWire(sc);
  return l;
}

export function sandboxConfigToWire(c: PodSandboxConfig): Wire {
  return {
    metadata: { name: c.metadata.name, uid: c.metadata.uid, namespace: c.metadata.namespace, attempt: c.metadata.attempt },
    hostname: c.hostname,
    logDirectory: c.logDirectory,
    dnsConfig: c.dnsConfig && { servers: c.dnsConfig.servers, searches: c.dnsConfig.searches, options: c.dnsConfig.options },
    portMappings: c.portMappings.map((p) => ({ protocol: p.protocol, containerPort: p.containerPort, hostPort: p.hostPort, hostIp: p.hostIp })),
    labels: c.labels,
    annotations: c.annotations,
    linux: linuxSandboxToWire(c.linux),
  };
}

function sandboxMetadataFromWire(w: Wire | null | undefined): PodSandboxConfig['metadata'] {
  return { name: w?.name ?? '', namespace: w?.namespace ?? '', uid: w?.uid ?? '', attempt: w?.attempt ?? 0 };
}

export function sandboxConfigFromWire(w: Wire): PodSandboxConfig {
  const c: PodSandboxConfig = {
    metadata: sandboxMetadataFromWire(w.metadata),
    hostname: w.hostname ?? '',
    logDirectory: w.logDirectory ?? '',
    labels: map(w.labels),
    annotations: map(w.annotations),
    portMappings: (w.portMappings ?? []).map((p: Wire) => ({
      protocol: p.protocol ?? 'TCP',
      containerPort: p.containerPort ?? 0,
      hostPort: p.hostPort ?? 0,
      hostIp: p.hostIp ?? '',
    })),
  };
  if (w.dnsConfig)
    c.dnsConfig = { servers: [...(w.dnsConfig.servers ?? [])], searches: [...(w.dnsConfig.searches ?? [])], options: [...(w.dnsConfig.options ?? [])] };
  const linux = linuxSandboxFromWire(w.linux);
  if (linux) c.linux = linux;
  return c;
}

export function sandboxStatusToWire(s: PodSandboxStatus): Wire {
  return {
    id: s.id,
    metadata: s.metadata,
    state: s.state,
    createdAt: msToNs(s.createdAt),
    network: { ip: s.network.ip, additionalIps: s.network.additionalIps.map((ip) => ({ ip })) },
    labels: s.labels ?? {},
    annotations: s.annotations ?? {},
  };
}

/** Both PodSandboxStatus and ListPodSandbox's PodSandbox (which has no network) read into PodSandboxStatus. */
export function sandboxStatusFromWire(w: Wire): PodSandboxStatus {
  return {
    id: w.id,
    metadata: sandboxMetadataFromWire(w.metadata),
    state: w.state ?? 'SANDBOX_READY',
    createdAt: nsToMs(w.createdAt),
    network: { ip: w.network?.ip ?? '', additionalIps: (w.network?.additionalIps ?? []).map((p: Wire) => p.ip) },
    labels: map(w.labels),
    annotations: map(w.annotations),
  };
}

/** ListPodSandbox's PodSandbox item. */
export function sandboxItemToWire(s: PodSandboxStatus): Wire {
  return { id: s.id, metadata: s.metadata, state: s.state, createdAt: msToNs(s.createdAt), labels: s.labels ?? {}, annotations: s.annotations ?? {} };
}

export function sandboxFilterToWire(f: PodSandboxFilter | undefined): Wire | undefined {
  if (!f) return undefined;
  return { id: f.id ?? '', state: f.state ? { state: f.state } : undefined, labelSelector: f.labelSelector ?? {} };
}

export function sandboxFilterFromWire(w: Wire | null | undefined): PodSandboxFilter | undefined {
  if (!w) return undefined;
  const f: PodSandboxFilter = {};
  if (w.id) f.id = w.id;
  if (w.state) f.state = w.state.state;
  if (w.labelSelector && Object.keys(w.labelSelector).length > 0) f.labelSelector = map(w.labelSelector);
  return f;
}

// --- containers ---

function securityContextToWire(sc: LinuxContainerSecurityContext | undefined): Wire | undefined {
  if (!sc) return undefined;
  return {
    ...sharedSecurityToWire(sc),
    capabilities: sc.capabilities && { addCapabilities: sc.capabilities.addCapabilities, dropCapabilities: sc.capabilities.dropCapabilities },
    runAsUsername: sc.runAsUsername ?? '',
    noNewPrivs: sc.noNewPrivs ?? false,
  };
}

function securityContextFromWire(w: Wire | null | undefined): LinuxContainerSecurityContext | undefined {
  if (!w) return undefined;
  const sc: LinuxContainerSecurityContext = sharedSecurityFromWire(w);
  if (w.capabilities) {
    sc.capabilities = { addCapabilities: [...(w.capabilities.addCapabilities ?? [])], dropCapabilities: [...(w.capabilities.dropCapabilities ?? [])] };
  }
  if (w.runAsUsername) sc.runAsUsername = w.runAsUsername;
  if (w.noNewPrivs) sc.noNewPrivs = true;
  return sc;
}

export function containerConfigToWire(c: ContainerConfig): Wire {
  return {
    metadata: { name: c.metadata.name, attempt: c.metadata.attempt },
    image: { image: c.image },
    command: c.command,
    args: c.args,
    workingDir: c.workingDir,
    envs: c.envs.map((e) => ({ key: e.key, value: e.value })),
    mounts: (c.mounts ?? []).map(mountToWire),
    labels: c.labels,
    annotations: c.annotations,
    logPath: c.logPath,
    stdin: c.stdin ?? false,
    stdinOnce: c.stdinOnce ?? false,
    tty: c.tty ?? false,
    linux: c.linux && { resources: resourcesToWire(c.linux.resources), securityContext: securityContextToWire(c.linux.securityContext) },
    stopSignal: signalToWire(c.stopSignal),
  };
}

export function containerConfigFromWire(w: Wire): ContainerConfig {
  const c: ContainerConfig = {
    metadata: { name: w.metadata?.name ?? '', attempt: w.metadata?.attempt ?? 0 },
    image: w.image?.image ?? '',
    command: [...(w.command ?? [])],
    args: [...(w.args ?? [])],
    workingDir: w.workingDir ?? '',
    envs: (w.envs ?? []).map((e: Wire) => ({ key: e.key, value: Buffer.isBuffer(e.value) ? e.value.toString('utf8') : String(e.value ?? '') })),
    logPath: w.logPath ?? '',
    labels: map(w.labels),
    annotations: map(w.annotations),
  };
  const sig = signalFromWire(w.stopSignal);
  if (sig) c.stopSignal = sig;
  if (w.mounts?.length) c.mounts = w.mounts.map(mountFromWire);
  if (w.linux) {
    c.linux = {};
    const r = resourcesFromWire(w.linux.resources);
    if (r) c.linux.resources = r;
    const sc = securityContextFromWire(w.linux.securityContext);
    if (sc) c.linux.securityContext = sc;
  }
  if (w.stdin) c.stdin = true;
  if (w.stdinOnce) c.stdinOnce = true;
  if (w.tty) c.tty = true;
  return c;
}

export function containerStatusToWire(s: ContainerStatus): Wire {
  return {
    id: s.id,
    metadata: s.metadata,
    state: s.state,
    createdAt: msToNs(s.createdAt),
    startedAt: msToNs(s.startedAt),
    finishedAt: msToNs(s.finishedAt),
    exitCode: s.exitCode,
    image: { image: s.image },
    imageRef: s.imageRef,
    reason: s.reason,
    message: s.message,
    labels: s.labels,
    annotations: s.annotations,
    logPath: s.logPath,
  };
}

/**
 * ContainerStatus from the wire. The pod sandbox id is not part of CRI's ContainerStatus; the
 * caller supplies it (from the Container list item, or from the sandbox it asked about).
 */
export function containerStatusFromWire(w: Wire, podSandboxId: string): ContainerStatus {
  return {
    id: w.id,
    podSandboxId,
    metadata: { name: w.metadata?.name ?? '', attempt: w.metadata?.attempt ?? 0 },
    state: w.state ?? 'CONTAINER_UNKNOWN',
    createdAt: nsToMs(w.createdAt),
    startedAt: nsToMs(w.startedAt),
    finishedAt: nsToMs(w.finishedAt),
    exitCode: w.exitCode ?? 0,
    image: w.image?.image ?? '',
    imageRef: w.imageRef ?? '',
    reason: w.reason ?? '',
    message: w.message ?? '',
    labels: map(w.labels),
    annotations: map(w.annotations),
    logPath: w.logPath ?? '',
  };
}

/** ListContainers' Container item. */
export function containerItemToWire(s: ContainerStatus): Wire {
  return {
    id: s.id,
    podSandboxId: s.podSandboxId,
    metadata: s.metadata,
    image: { image: s.image },
    imageRef: s.imageRef,
    state: s.state,
    createdAt: msToNs(s.createdAt),
    labels: s.labels,
    annotations: s.annotations,
  };
}

export function containerFilterToWire(f: ContainerFilter | undefined): Wire | undefined {
  if (!f) return undefined;
  return { id: f.id ?? '', podSandboxId: f.podSandboxId ?? '', state: f.state ? { state: f.state } : undefined, labelSelector: f.labelSelector ?? {} };
}

export function containerFilterFromWire(w: Wire | null | undefined): ContainerFilter | undefined {
  if (!w) return undefined;
  const f: ContainerFilter = {};
  if (w.id) f.id = w.id;
  if (w.podSandboxId) f.podSandboxId = w.podSandboxId;
  if (w.state) f.state = w.state.state;
  if (w.labelSelector && Object.keys(w.labelSelector).length > 0) f.labelSelector = map(w.labelSelector);
  return f;
}

export function containerEventToWire(ev: ContainerEvent): Wire {
  return { containerId: ev.containerId, containerEventType: ev.type, createdAt: msToNs(ev.createdAt), podSandboxStatus: { id: ev.podSandboxId } };
}

export function containerEventFromWire(w: Wire): ContainerEvent {
  return {
    containerId: w.containerId,
    podSandboxId: w.podSandboxStatus?.id ?? '',
    type: w.containerEventType ?? 'CONTAINER_CREATED_EVENT',
    createdAt: nsToMs(w.createdAt),
  };
}

// --- images ---

export function imageSpecToWire(s: ImageSpec): Wire {
  return { image: s.image, annotations: s.annotations ?? {} };
}

export function imageSpecFromWire(w: Wire | null | undefined): ImageSpec {
  const s: ImageSpec = { image: w?.image ?? '' };
  if (w?.annotations && Object.keys(w.annotations).length > 0) s.annotations = map(w.annotations);
  return s;
}

export function authToWire(a: AuthConfig | undefined): Wire | undefined {
  if (!a) return undefined;
  return {
    username: a.username ?? '',
    password: a.password ?? '',
    auth: a.auth ?? '',
    serverAddress: a.serverAddress ?? '',
    identityToken: a.identityToken ?? '',
    registryToken: a.registryToken ?? '',
  };
}

export function authFromWire(w: Wire | null | undefined): AuthConfig | undefined {
  if (!w) return undefined;
  const a: AuthConfig = {};
  for (const k of ['username', 'password', 'auth', 'serverAddress', 'identityToken', 'registryToken'] as const) if (w[k]) a[k] = w[k];
  return a;
}

export function imageToWire(i: Image): Wire {
  return {
    id: i.id,
    repoTags: i.repoTags,
    repoDigests: i.repoDigests,
    size: i.size,
    uid: int64Value(i.uid),
    username: i.username ?? '',
  };
}

export function imageFromWire(w: Wire): Image {
  const i: Image = { id: w.id, repoTags: [...(w.repoTags ?? [])], repoDigests: [...(w.repoDigests ?? [])], size: int64(w.size) };
  const uid = optionalInt64(w.uid);
  if (uid !== undefined) i.uid = uid;
  if (w.username) i.username = w.username;
  return i;
}
