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
 * beside it (an interactive exec spawned by the agent, /proc usage) can join its context. The process
 * runtime service sends it as the `info` of a verbose ContainerStatus, as CRI runtimes do for debugging.
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

/** A container's process context: its info, whether it runs, and the exec groups that die with it. */
/** A container's process context as a runtime reports it (the CRI client, from a verbose ContainerStatus). */
export interface ContainerProcessView extends ContainerProcessInfo {
  running: boolean;
}

/** The context of a container in this process's runtime, where an exec can be started beside it. */
export interface ContainerProcessContext extends ContainerProcessView {
  /** Registers an exec's process group: killed with the container (at once if it is not running). */
  trackGroup(pgid: number): void;
  untrackGroup(pgid: number): void;
}

/** The key of the verbose ContainerStatus info entry holding a ContainerProcessInfo as JSON. */
export const PROCESS_INFO_KEY = 'podvisor.process';

export interface RuntimeService {
  /** `process` or `containerd`; also the scheme of container IDs (`process://<id>`). */
  readonly name: string;
  version(): Promise<{ runtimeName: string; runtimeVersion: string }>;

  runPodSandbox(config: PodSandboxConfig): Promise<string>;
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
  listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]>;
  /**
   * Optional: the containers' ids, sandboxes and states only (one CRI ListContainers, without each
   * container's full status), for a relist that only looks for state changes.
   */
  listContainerStates?(filter?: ContainerFilter): Promise<ContainerListing[]>;
  /**
   * While the runtime's container event stream is connected: a number that changes with every new
   * connection (events of a gap between two are lost); undefined while it is not. Lets the relist
   * slow down as the kubelet's evented PLEG does.
   */
  containerEventsConnection?(): number | undefined;

  /** Runs cmd in the container's context; timeoutSeconds 0 = no timeout. Rejects on runtime errors. */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;

  /** CRI Exec/Attach/PortForward: a URL on the runtime's streaming server (optional: not every runtime streams). */
  exec?(req: StreamingRequest): Promise<StreamingURL>;
  attach?(req: Omit<StreamingRequest, 'cmd'>): Promise<StreamingURL>;
  portForward?(podSandboxId: string, ports: number[]): Promise<StreamingURL>;

  /** The runtime's ImageService; absent where there are no images (host processes). */
  readonly images?: ImageService;

  /** Subscribes to container state changes; returns the unsubscribe function. */
  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void;

  /**
   * Optional: container output as it is written to the log, one call per CRI record (a line without
   * its newline; a line over 16 KiB arrives in pieces). Returns the unsubscribe function.
   */
  onContainerOutput?(listener: (containerId: string, stream: 'stdout' | 'stderr', line: string) => void): () => void;

  /** Stops everything this runtime started (agent shutdown). */
  close(): Promise<void>;

  /** Kills everything at once, synchronously, when the agent exits without a graceful stop. */
  killAllSync?(): void;

  /** Verbose ContainerStatus info (CRI's debugging map); optional. */
  containerInfo?(containerId: string): Promise<Record<string, string>>;
}
