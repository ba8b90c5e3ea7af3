// The container runtime interface the pod logic talks to, shaped like the CRI RuntimeService
// (k8s.io/cri-api runtime/v1): pod sandboxes, containers, ExecSync and log locations. Every runtime
// (host processes today, containerd's CRI where the host has it) implements exactly this.

/** Key/value pair, as CRI's KeyValue. */
export interface KeyValue {
  key: string;
  value: string;
}

export interface PortMapping {
  protocol: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort: number;
  hostIp: string;
}

/** CRI's DNSConfig: what the sandbox's resolv.conf holds. */
export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** CRI's NamespaceMode: POD shares the sandbox's namespace, NODE the host's, CONTAINER its own. */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
}

/** CRI's LinuxContainerResources (cgroup settings); 0 = unset for every number. */
export interface LinuxContainerResources {
  cpuPeriod: number;
  cpuQuota: number;
  cpuShares: number;
  memoryLimitInBytes: number;
  oomScoreAdj: number;
  cpusetCpus?: string;
  cpusetMems?: string;
  /** cgroup v2 key/values (e.g. `pids.max`). */
  unified?: Record<string, string>;
}

export interface Capability {
  addCapabilities: string[];
  dropCapabilities: string[];
}

/** CRI's LinuxContainerSecurityContext, as far as the pod spec can express it. */
export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  /** Unset (undefined) means the image's user. */
  runAsUser?: number;
  runAsGroup?: number;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  noNewPrivs?: boolean;
}

/** CRI's LinuxSandboxSecurityContext. */
export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  runAsUser?: number;
  runAsGroup?: number;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  privileged?: boolean;
}

export interface LinuxPodSandboxConfig {
  cgroupParent?: string;
  securityContext?: LinuxSandboxSecurityContext;
  sysctls?: Record<string, string>;
  /** Pod-level resources (sum of the containers' plus overhead), for the sandbox's cgroup. */
  resources?: LinuxContainerResources;
}

export interface PodSandboxConfig {
  metadata: { name: string; namespace: string; uid: string; attempt: number };
  hostname: string;
  /** Absolute directory holding this pod's container logs (`<root>/pods/<ns>_<name>_<uid>`). */
  logDirectory: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  portMappings: PortMapping[];
  dnsConfig?: DNSConfig;
  linux?: LinuxPodSandboxConfig;
}

/** CRI's Mount: a host path bound into the container. */
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

/** CRI's ImageSpec. */
export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
}

/** CRI's AuthConfig, from a dockerconfigjson pull secret. */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** CRI's Image. */
export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** bytes */
  size: number;
  /** The image config's user, when numeric. */
  uid?: number;
  username?: string;
}

/** CRI v1 ImageService. A runtime without images (host processes) has none. */
export interface ImageService {
  listImages(filter?: { image?: ImageSpec }): Promise<Image[]>;
  /** null when the image is not present (CRI returns an empty image). */
  imageStatus(image: ImageSpec): Promise<Image | null>;
  /** Resolves to the image reference (the runtime's image id, e.g. `sha256:…`). */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string>;
  removeImage(image: ImageSpec): Promise<void>;
}

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxConfig['metadata'];
  state: SandboxState;
  /** ms since epoch */
  createdAt: number;
  network: { ip: string; additionalIps: string[] };
  /** The labels and annotations the sandbox was created with (how a restarted agent recovers pods). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PodSandboxFilter {
  id?: string;
  state?: SandboxState;
  /** Every pair must match. */
  labelSelector?: Record<string, string>;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: string;
  /** Entrypoint, already combined from the container's command/args by Kubernetes' rules. */
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValue[];
  /** Log path relative to the sandbox's logDirectory: `<container>/<attempt>.log`. */
  logPath: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Signal sent by StopContainer before SIGKILL; SIGTERM when unset. */
  stopSignal?: NodeJS.Signals;
  /** Volumes bound into the container (a runtime with no mount namespace refuses any). */
  mounts?: Mount[];
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface ContainerStatus {
  /** Runtime-local id (without the `<runtime>://` prefix). */
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number };
  state: ContainerState;
  /** ms since epoch; 0 when not reached. */
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: string;
  imageRef: string;
  /** `Completed`, `Error`, `OOMKilled`, `ContainerCannotRun`, `StartError`, or empty. */
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Absolute path of this container's current log file. */
  logPath: string;
}

/** One entry of a container listing: what CRI ListContainers gives without ContainerStatus. */
export interface ContainerListing {
  id: string;
  podSandboxId: string;
  state: ContainerState;
}

export interface ContainerFilter {
  id?: string;
  podSandboxId?: string;
  state?: ContainerState;
  /** Every pair must match. */
  labelSelector?: Record<string, string>;
}

/** CRI's ExecRequest/AttachRequest/PortForwardRequest answer: a URL on the runtime's streaming server. */
export interface StreamingURL {
  url: string;
}

export interface StreamingRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export interface ExecSyncResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** True when the command was killed because the timeout elapsed. */
  timedOut: boolean;
}

/** Pushed by the runtime when a container changes state, as CRI's GetContainerEvents stream. */
export interface ContainerEvent {
  containerId: string;
  podSandboxId: string;
  type: 'CONTAINER_CREATED_EVENT' | 'CONTAINER_STARTED_EVENT' | 'CONTAINER_STOPPED_EVENT' | 'CONTAINER_DELETED_EVENT';
  /** ms since epoch */
  createdAt: number;
}

/** Thrown by runtime calls for an id the runtime does not know (CRI NotFound). */
export class NotFoundError extends Error {
  constructor(what: string) {
    super(`${what} not found`);
    this.name = 'NotFoundError';
  }
}

/**
 * What a runtime whose containers are host processes tells about one of them, so that what runs
 * beside it (/proc usage) can find its processes. The process runtime sends it as the `info` of a
 * verbose ContainerStatus, as CRI runtimes do for debugging.
 */
export interface ContainerProcessInfo {
  /** The main process (the leader of the container's process group) and its start time in /proc. */
  pid?: number;
  pgid?: number;
  startTime?: string;
  env: Record<string, string>;
  cwd: string;
  /** Set only where the container runs as another user or group than the runtime. */
  uid?: number;
  gid?: number;
  groups?: number[];
}

/** The key of the verbose ContainerStatus info entry holding a ContainerProcessInfo as JSON. */
export const PROCESS_INFO_KEY = 'podvisor.process';

/** A host-process container's context from its verbose status info; undefined where the runtime gives none or the id is unknown. */
export async function containerProcessInfo(runtime: Pick<RuntimeService, 'containerInfo'>, containerId: string): Promise<ContainerProcessInfo | undefined> {
  let info: Record<string, string>;
  try {
    info = await runtime.containerInfo(containerId);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
  const raw = info[PROCESS_INFO_KEY];
  return raw ? (JSON.parse(raw) as ContainerProcessInfo) : undefined;
}

/**
 * What differs between runtimes, as a client learns it once, when it connects: the runtime announces
 * it in the info of a verbose CRI Status (key CAPABILITIES_INFO_KEY); a runtime that announces
 * nothing (containerd, CRI-O) is a CRI runtime of images, CRI_RUNTIME_CAPABILITIES.
 */
export interface RuntimeCapabilities {
  /**
   * Images are pulled and give the entrypoint and user. Without, an image only names what runs: a
   * container needs its command, and every image is present (`<runtime>://<image>`).
   */
  images: boolean;
  /**
   * Volumes are mounted into the container (a mount namespace). Without, a pod's volumeMounts cannot
   * be honoured and a container's termination message goes to a file named in its environment
   * (PODVISOR_TERMINATION_MESSAGE_PATH) instead of one mounted at its terminationMessagePath.
   */
  mounts: boolean;
  /**
   * Containers are host processes: the verbose ContainerStatus info holds each one's process context
   * (PROCESS_INFO_KEY), so their usage is read from /proc by process group.
   */
  hostProcesses: boolean;
  /** `host`: every pod shares the host's network (its sandbox IP is the loopback); `pod`: each has its own. */
  network: 'host' | 'pod';
  /** Containers get a stdin (attach -i reaches it); without, an attach only follows the output, as the log does. */
  stdin: boolean;
  /** Which CRI streaming calls the runtime serves (the others answer UNIMPLEMENTED). */
  streaming: { exec: boolean; attach: boolean; portForward: boolean };
}

/** The verbose CRI Status info key of a runtime's RuntimeCapabilities (JSON). */
export const CAPABILITIES_INFO_KEY = 'podvisor.capabilities';

/** A CRI runtime of images that announces nothing else (containerd, CRI-O). */
export const CRI_RUNTIME_CAPABILITIES: RuntimeCapabilities = Object.freeze({
  images: true,
  mounts: true,
  hostProcesses: false,
  network: 'pod',
  stdin: true,
  streaming: Object.freeze({ exec: true, attach: true, portForward: true }),
});

/** The capabilities a runtime announced in its verbose Status info; a CRI runtime of images when it announced none. */
export function capabilitiesFromInfo(info: Record<string, string>): RuntimeCapabilities {
  const raw = info[CAPABILITIES_INFO_KEY];
  if (!raw) return CRI_RUNTIME_CAPABILITIES;
  const c = JSON.parse(raw) as Partial<RuntimeCapabilities>;
  const d = CRI_RUNTIME_CAPABILITIES;
  return {
    images: c.images ?? d.images,
    mounts: c.mounts ?? d.mounts,
    hostProcesses: c.hostProcesses ?? d.hostProcesses,
    network: c.network === 'host' ? 'host' : 'pod',
    stdin: c.stdin ?? d.stdin,
    streaming: { ...d.streaming, ...c.streaming },
  };
}

/** The runtime behind one handler: its name (the scheme of its container IDs) and what it can do. */
export interface HandlerRuntime {
  name: string;
  capabilities: RuntimeCapabilities;
}

/** The answer of a runtime to RunPodSandbox with a handler it does not have (containerd's words). */
export function noRuntimeForHandler(handler: string): string {
  return `failed to get sandbox runtime: no runtime for ${JSON.stringify(handler)} is configured`;
}

/** Thrown by a runtime for a CRI call it does not serve (CRI UNIMPLEMENTED); its capabilities say which. */
export class UnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedError';
  }
}

/**
 * A container runtime as the kubelet sees it: what CRI's RuntimeService and ImageService serve, and
 * what the runtime is (its name and capabilities, learnt once at connect). Every member is there for
 * every runtime; what a runtime does not serve it refuses with UnsupportedError, as its capabilities say.
 */
export interface RuntimeService {
  /** `process` or `containerd`; also the scheme of container IDs (`process://<id>`). */
  readonly name: string;
  /** What differs between runtimes (images, mounts, host processes, networking, streaming). */
  readonly capabilities: RuntimeCapabilities;
  version(): Promise<{ runtimeName: string; runtimeVersion: string }>;

  /**
   * CRI RunPodSandbox: runtimeHandler is the handler of the pod's RuntimeClass ('' for the default);
   * a runtime answers `no runtime for "<handler>" is configured` for one it does not have.
   */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  /**
   * For a runtime that serves several handlers (the agent's multiplexer, runtime-mux.ts): the name and
   * capabilities of the runtime behind a handler, undefined for a handler none serves.
   */
  handlerRuntime?(runtimeHandler: string): HandlerRuntime | undefined;
  /** Every sandbox the runtime holds (ready or not), as CRI ListPodSandbox. */
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandboxStatus[]>;
  /** Stops every container of the sandbox (SIGKILL) and releases its resources; idempotent. */
  stopPodSandbox(podSandboxId: string): Promise<void>;
  removePodSandbox(podSandboxId: string): Promise<void>;
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;

  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /**
   * Sends the container's stop signal to all its processes, waits up to timeoutSeconds for them to
   * exit, then SIGKILLs them; resolves once nothing of the container runs. timeout 0 = SIGKILL now.
   */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  /** Verbose ContainerStatus info (CRI's debugging map; a host-process container's PROCESS_INFO_KEY). */
  containerInfo(containerId: string): Promise<Record<string, string>>;
  listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]>;
  /**
   * The containers' ids, sandboxes and states only (one CRI ListContainers, without each container's
   * full status), for a relist that only looks for state changes.
   */
  listContainerStates(filter?: ContainerFilter): Promise<ContainerListing[]>;
  /**
   * While the runtime's container event stream is connected: a number that changes with every new
   * connection (events of a gap between two are lost); undefined while it is not. Lets the relist
   * slow down as the kubelet's evented PLEG does.
   */
  containerEventsConnection(): number | undefined;

  /** Runs cmd in the container's context; timeoutSeconds 0 = no timeout. Rejects on runtime errors. */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;

  /** CRI Exec/Attach/PortForward: a URL on the runtime's streaming server (capabilities.streaming says which it serves). */
  exec(req: StreamingRequest): Promise<StreamingURL>;
  attach(req: Omit<StreamingRequest, 'cmd'>): Promise<StreamingURL>;
  portForward(podSandboxId: string, ports: number[]): Promise<StreamingURL>;

  /** The runtime's ImageService (a runtime without images has every image: capabilities.images). */
  readonly images: ImageService;

  /** Subscribes to container state changes; returns the unsubscribe function. */
  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void;

  /** Lets go of the runtime (a client closes its connection; a runtime in this process stops what it started). */
  close(): Promise<void>;
}
