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

export interface PodSandboxConfig {
  metadata: { name: string; namespace: string; uid: string; attempt: number };
  hostname: string;
  /** Absolute directory holding this pod's container logs (`<root>/pods/<ns>_<name>_<uid>`). */
  logDirectory: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  portMappings: PortMapping[];
}

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxConfig['metadata'];
  state: SandboxState;
  /** ms since epoch */
  createdAt: number;
  network: { ip: string; additionalIps: string[] };
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

export interface ContainerFilter {
  podSandboxId?: string;
  state?: ContainerState;
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

export interface RuntimeService {
  /** `process` or `containerd`; also the scheme of container IDs (`process://<id>`). */
  readonly name: string;
  version(): Promise<{ runtimeName: string; runtimeVersion: string }>;

  runPodSandbox(config: PodSandboxConfig): Promise<string>;
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

  /** Runs cmd in the container's context; timeoutSeconds 0 = no timeout. Rejects on runtime errors. */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;

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
}
