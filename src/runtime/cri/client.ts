// The CRI v1 gRPC client: podvisor's RuntimeService (and ImageService) over a unix socket to any CRI
// server — podvisor's own process runtime service, containerd, CRI-O — as the kubelet's remote runtime.

import * as grpc from '@grpc/grpc-js';
import {
  capabilitiesFromInfo,
  CRI_RUNTIME_CAPABILITIES,
  NotFoundError,
  type AuthConfig,
  type ContainerConfig,
  type ContainerEvent,
  type ContainerFilter,
  type ContainerListing,
  type ContainerState,
  type ContainerStatus,
  type ExecSyncResult,
  type Image,
  type ImageService,
  type ImageSpec,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type RuntimeCapabilities,
  type RuntimeService,
  type StreamingRequest,
  type StreamingURL,
} from '../cri.js';
import type { Logger } from '../../util/logger.js';
import {
  authToWire,
  containerConfigToWire,
  containerEventFromWire,
  containerFilterToWire,
  containerStatusFromWire,
  imageFromWire,
  imageSpecToWire,
  int64,
  nsToMs,
  sandboxConfigToWire,
  sandboxFilterToWire,
  sandboxStatusFromWire,
  type Wire,
} from './convert.js';
import { criTarget, loadCriServices, warmCodecs } from './proto.js';

/** The longest delay a Node timer takes as it is. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The kubelet's default --runtime-request-timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 2 * 60_000;
/** Extra time given to calls that wait on the runtime (StopContainer, ExecSync) beyond their own timeout. */
const CALL_GRACE_MS = 5_000;
const EVENTS_RECONNECT_MIN_MS = 100;
const EVENTS_RECONNECT_MAX_MS = 2_000;

/** A CRI call that failed with a gRPC status other than NOT_FOUND (which becomes NotFoundError). */
export class CriError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details || `${method}: ${grpc.status[code]}`);
    this.name = 'CriError';
  }
}

/** True when the error says nothing answered on the endpoint. */
export function isUnavailable(err: unknown): boolean {
  return err instanceof CriError && err.code === grpc.status.UNAVAILABLE;
}

function mapError(method: string, err: grpc.ServiceError): Error {
  if (err.code === grpc.status.NOT_FOUND) {
    const e = new NotFoundError(method);
    e.message = err.details || e.message;
    return e;
  }
  return new CriError(method, err.code, err.details);
}

export interface CriClientOptions {
  /** `unix:///path/to/socket`, as --container-runtime-endpoint. */
  endpoint: string;
  logger: Logger;
  /** The runtime's name (the scheme of container ids, e.g. `containerd`); identify() takes it from Version. */
  name?: string;
  /** Deadline of each call (default 2 min, the kubelet's --runtime-request-timeout). */
  requestTimeoutMs?: number;
  /** Generate the message codecs ahead of the first calls (warmCodecs): for a long-lived client. */
  warmCodecs?: boolean;
}

/** Runtime status conditions (RuntimeReady, NetworkReady), as CRI Status answers. */
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

/** CRI ContainerStats, reduced to numbers (undefined where the runtime gives none). */
export interface ContainerStatsSample {
  id: string;
  name: string;
  labels: Record<string, string>;
  /** ms since the epoch */
  timestamp: number;
  cpuUsageCoreNanoSeconds?: number;
  cpuUsageNanoCores?: number;
  memoryWorkingSetBytes?: number;
  memoryUsageBytes?: number;
  memoryRssBytes?: number;
  writableLayerBytes?: number;
}

export interface FilesystemUsageSample {
  mountpoint: string;
  usedBytes?: number;
  inodesUsed?: number;
}

type UnaryMethod = (req: Wire, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Wire) => void) => grpc.ClientUnaryCall;

/**
 * RuntimeService and ImageService over one gRPC channel. What the runtime is — its name and
 * capabilities — is asked once, by identify() (connectCriRuntime and connectOrLaunch call it); until
 * then the client takes it for a CRI runtime of images (CRI_RUNTIME_CAPABILITIES), as containerd is.
 */
export class CriRuntimeClient implements RuntimeService {
  name: string;
  capabilities: RuntimeCapabilities = CRI_RUNTIME_CAPABILITIES;
  readonly images: ImageService;
  private readonly runtimeClient: grpc.Client;
  private readonly imageClient: grpc.Client;
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  /** CRI's ContainerStatus has no sandbox id: remembered from CreateContainer and ListContainers. */
  private readonly sandboxOf = new Map<string, string>();
  private readonly eventListeners = new Set<(ev: ContainerEvent) => void>();
  private events: grpc.ClientReadableStream<Wire> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelay = EVENTS_RECONNECT_MIN_MS;
  private eventsLive = false;
  private eventsConnection = 0;
  private closed = false;
  private stopWarming: (() => void) | undefined;
  private readonly namedByOptions: boolean;

  constructor(opts: CriClientOptions) {
    const services = loadCriServices();
    if (opts.warmCodecs) this.stopWarming = warmCodecs(services.messageTypes);
    const target = criTarget(opts.endpoint);
    this.runtimeClient = new services.RuntimeService(target, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      // A local runtime restarts in well under a second: reconnect quickly rather than after gRPC's default 1-120 s.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 2000,
    });
    this.imageClient = new services.ImageService(target, grpc.credentials.createInsecure(), {
      channelOverride: this.runtimeClient.getChannel(),
    });
    this.name = opts.name ?? 'cri';
    this.namedByOptions = opts.name !== undefined;
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.logger = opts.logger;
    this.images = {
      listImages: (filter) => this.listImages(filter),
      imageStatus: (image) => this.imageStatus(image),
      pullImage: (image, auth, sandboxConfig) => this.pullImage(image, auth, sandboxConfig),
      removeImage: (image) => this.removeImage(image),
    };
  }

  private call(client: grpc.Client, method: string, req: Wire, timeoutMs = this.timeoutMs): Promise<Wire> {
    const fn = (client as unknown as Record<string, UnaryMethod>)[method];
    if (!fn) return Promise.reject(new Error(`unknown CRI method ${method}`));
    return new Promise((resolve, reject) => {
      // A deadline beyond a timer's range (2^31-1 ms) is sent as none: the server's timer for it
      // would overflow and fire at once (a 3,000,000 s grace period or exec timeout).
      const deadline = timeoutMs > MAX_TIMER_MS ? Infinity : Date.now() + timeoutMs;
      fn.call(client, req, { deadline }, (err, res) => (err ? reject(mapError(method, err)) : resolve(res)));
    });
  }

  private rt(method: string, req: Wire = {}, timeoutMs?: number): Promise<Wire> {
    return this.call(this.runtimeClient, method, req, timeoutMs);
  }

  private img(method: string, req: Wire = {}, timeoutMs?: number): Promise<Wire> {
    return this.call(this.imageClient, method, req, timeoutMs);
  }

  // --- version, status ---

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const res = await this.rt('Version', { version: 'v1' });
    return { runtimeName: res.runtimeName, runtimeVersion: res.runtimeVersion, runtimeApiVersion: res.runtimeApiVersion };
  }

  /**
   * Learns what the runtime is: its name from CRI Version (unless the options named it) and its
   * capabilities from the info of a verbose CRI Status. Called once, when connecting.
   */
  async identify(): Promise<void> {
    const v = await this.version();
    const res = await this.rt('Status', { verbose: true });
    if (!this.namedByOptions) this.name = v.runtimeName;
    this.capabilities = capabilitiesFromInfo({ ...(res.info ?? {}) });
  }

  /** CRI Status with verbose=true: the runtime's info map (containerd: its CRI `config` as JSON). */
  async statusInfo(): Promise<Record<string, string>> {
    const res = await this.rt('Status', { verbose: true });
    return { ...(res.info ?? {}) };
  }

  /** CRI Status: the runtime's conditions (RuntimeReady, NetworkReady). */
  async status(): Promise<RuntimeCondition[]> {
    const res = await this.rt('Status', { verbose: false });
    return (res.status?.conditions ?? []).map((c: Wire) => ({ type: c.type, status: !!c.status, reason: c.reason, message: c.message }));
  }

  /** CRI UpdateRuntimeConfig: the node's pod CIDR. */
  async updateRuntimeConfig(podCidr: string): Promise<void> {
    await this.rt('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr } } });
  }

  // --- sandboxes ---

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    const res = await this.rt('RunPodSandbox', { config: sandboxConfigToWire(config), runtimeHandler });
    return res.podSandboxId;
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandboxStatus[]> {
    const res = await this.rt('ListPodSandbox', { filter: sandboxFilterToWire(filter) });
    return (res.items ?? []).map(sandboxStatusFromWire);
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.rt('StopPodSandbox', { podSandboxId });
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.rt('RemovePodSandbox', { podSandboxId });
    for (const [c, sb] of this.sandboxOf) if (sb === podSandboxId) this.sandboxOf.delete(c);
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const res = await this.rt('PodSandboxStatus', { podSandboxId, verbose: false });
    return sandboxStatusFromWire(res.status ?? {});
  }

  // --- containers ---

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const res = await this.rt('CreateContainer', {
      podSandboxId,
      config: containerConfigToWire(config),
      sandboxConfig: sandboxConfigToWire(sandboxConfig),
    });
    this.sandboxOf.set(res.containerId, podSandboxId);
    return res.containerId;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.rt('StartContainer', { containerId });
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    const timeout = Math.max(0, Math.ceil(timeoutSeconds));
    await this.rt('StopContainer', { containerId, timeout }, this.timeoutMs + timeout * 1000);
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.rt('RemoveContainer', { containerId });
    this.sandboxOf.delete(containerId);
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    const [res, sandboxId] = await Promise.all([this.rt('ContainerStatus', { containerId, verbose: false }), this.sandboxIdOf(containerId)]);
    return containerStatusFromWire(res.status ?? {}, sandboxId);
  }

  /** CRI ContainerStatus with verbose=true: the runtime's info map (empty where it gives none). */
  async containerInfo(containerId: string): Promise<Record<string, string>> {
    const res = await this.rt('ContainerStatus', { containerId, verbose: true });
    return { ...(res.info ?? {}) };
  }

  /**
   * CRI ListContainers gives ids, states and labels only; as the kubelet's GetPodStatus does, each
   * listed container's full status (times, exit code, reason, log path) is then asked for.
   */
  async listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]> {
    const res = await this.rt('ListContainers', { filter: containerFilterToWire(filter) });
    const items: Wire[] = res.containers ?? [];
    for (const it of items) this.sandboxOf.set(it.id, it.podSandboxId);
    const statuses = await Promise.all(
      items.map(async (it) => {
        try {
          const st = await this.rt('ContainerStatus', { containerId: it.id, verbose: false });
          return containerStatusFromWire(st.status ?? {}, it.podSandboxId);
        } catch (err) {
          if (err instanceof NotFoundError) return undefined; // removed between the two calls
          throw err;
        }
      }),
    );
    return statuses.filter((s): s is ContainerStatus => s !== undefined);
  }

  /** CRI ListContainers alone: ids, sandboxes and states (a relist's view, one round-trip). */
  async listContainerStates(filter?: ContainerFilter): Promise<ContainerListing[]> {
    const res = await this.rt('ListContainers', { filter: containerFilterToWire(filter) });
    return ((res.containers ?? []) as Wire[]).map((it) => {
      this.sandboxOf.set(it.id, it.podSandboxId);
      return { id: it.id, podSandboxId: it.podSandboxId, state: (it.state ?? 'CONTAINER_UNKNOWN') as ContainerState };
    });
  }

  private async sandboxIdOf(containerId: string): Promise<string> {
    const known = this.sandboxOf.get(containerId);
    if (known !== undefined) return known;
    try {
      const res = await this.rt('ListContainers', { filter: { id: containerId } });
      const it = (res.containers ?? [])[0] as Wire | undefined;
      if (it) this.sandboxOf.set(containerId, it.podSandboxId);
      return it?.podSandboxId ?? '';
    } catch {
      return '';
    }
  }

  /**
   * CRI ExecSync. A command that outlives its timeout ends the call with DEADLINE_EXCEEDED (from the
   * server or from the call's own deadline), which is a timed-out result, as the kubelet reads it.
   */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    const timeout = Math.max(0, Math.ceil(timeoutSeconds));
    const deadline = timeout > 0 ? timeout * 1000 + CALL_GRACE_MS : this.timeoutMs;
    try {
      const res = await this.rt('ExecSync', { containerId, cmd, timeout }, deadline);
      return { exitCode: res.exitCode ?? 0, stdout: Buffer.from(res.stdout ?? []), stderr: Buffer.from(res.stderr ?? []), timedOut: false };
    } catch (err) {
      if (err instanceof CriError && err.code === grpc.status.DEADLINE_EXCEEDED && timeout > 0) {
        return { exitCode: -1, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), timedOut: true };
      }
      throw err;
    }
  }

  async exec(req: StreamingRequest): Promise<StreamingURL> {
    const res = await this.rt('Exec', { containerId: req.containerId, cmd: req.cmd, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr });
    return { url: res.url };
  }

  async attach(req: Omit<StreamingRequest, 'cmd'>): Promise<StreamingURL> {
    const res = await this.rt('Attach', { containerId: req.containerId, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr });
    return { url: res.url };
  }

  async portForward(podSandboxId: string, ports: number[]): Promise<StreamingURL> {
    const res = await this.rt('PortForward', { podSandboxId, port: ports });
    return { url: res.url };
  }

  // --- stats ---

  async containerStats(containerId: string): Promise<ContainerStatsSample> {
    const res = await this.rt('ContainerStats', { containerId });
    return statsFromWire(res.stats ?? {});
  }

  async listContainerStats(filter?: { id?: string; podSandboxId?: string; labelSelector?: Record<string, string> }): Promise<ContainerStatsSample[]> {
    const res = await this.rt('ListContainerStats', {
      filter: filter && { id: filter.id ?? '', podSandboxId: filter.podSandboxId ?? '', labelSelector: filter.labelSelector ?? {} },
    });
    return (res.stats ?? []).map(statsFromWire);
  }

  // --- images ---

  async listImages(filter?: { image?: ImageSpec }): Promise<Image[]> {
    const res = await this.img('ListImages', { filter: filter?.image ? { image: imageSpecToWire(filter.image) } : undefined });
    return (res.images ?? []).map(imageFromWire);
  }

  async imageStatus(image: ImageSpec): Promise<Image | null> {
    const res = await this.img('ImageStatus', { image: imageSpecToWire(image), verbose: false });
    return res.image && res.image.id ? imageFromWire(res.image) : null;
  }

  async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string> {
    // Pulls take as long as the registry does: no request deadline beyond a generous bound.
    const res = await this.img(
      'PullImage',
      { image: imageSpecToWire(image), auth: authToWire(auth), sandboxConfig: sandboxConfig && sandboxConfigToWire(sandboxConfig) },
      Math.max(this.timeoutMs, 30 * 60_000),
    );
    return res.imageRef;
  }

  async removeImage(image: ImageSpec): Promise<void> {
    await this.img('RemoveImage', { image: imageSpecToWire(image) });
  }

  async imageFsInfo(): Promise<{ imageFilesystems: FilesystemUsageSample[]; containerFilesystems: FilesystemUsageSample[] }> {
    const res = await this.img('ImageFsInfo', {});
    const fs = (l: Wire[] | undefined) =>
      (l ?? []).map((f) => ({ mountpoint: f.fsId?.mountpoint ?? '', usedBytes: optional(f.usedBytes), inodesUsed: optional(f.inodesUsed) }));
    return { imageFilesystems: fs(res.imageFilesystems), containerFilesystems: fs(res.containerFilesystems) };
  }

  // --- events ---

  /**
   * Subscribes to CRI GetContainerEvents. The stream is opened with the first listener and reopened
   * (after a short, growing delay) whenever it ends while someone listens — e.g. the runtime
   * restarted. Events of the gap are not replayed: callers relist, as the kubelet's PLEG does.
   */
  containerEventsConnection(): number | undefined {
    return this.eventsLive ? this.eventsConnection : undefined;
  }

  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void {
    this.eventListeners.add(listener);
    if (this.eventListeners.size === 1) this.openEvents();
    return () => {
      this.eventListeners.delete(listener);
      if (this.eventListeners.size === 0) this.closeEvents();
    };
  }

  private openEvents(): void {
    if (this.closed || this.events || this.eventListeners.size === 0) return;
    const fn = (this.runtimeClient as unknown as Record<string, (req: Wire) => grpc.ClientReadableStream<Wire>>).GetContainerEvents!;
    const stream = fn.call(this.runtimeClient, {});
    this.events = stream;
    // The server sends its headers on subscribing: from then on no change goes unreported.
    stream.on('metadata', () => {
      if (this.events !== stream) return;
      this.eventsConnection++;
      this.eventsLive = true;
    });
    stream.on('data', (w: Wire) => {
      this.reconnectDelay = EVENTS_RECONNECT_MIN_MS;
      const ev = containerEventFromWire(w);
      for (const l of this.eventListeners) {
        try {
          l(ev);
        } catch (err) {
          this.logger.warn('Container event listener failed', { err: String(err) });
        }
      }
    });
    const ended = (err?: grpc.ServiceError) => {
      if (this.events !== stream) return;
      this.events = undefined;
      this.eventsLive = false;
      if (this.closed || this.eventListeners.size === 0) return;
      // A runtime without the stream (containerd 1.6): callers find changes by relisting.
      if (err?.code === grpc.status.UNIMPLEMENTED) return;
      if (err && err.code !== grpc.status.UNAVAILABLE && err.code !== grpc.status.CANCELLED) {
        this.logger.warn('Container event stream failed', { code: grpc.status[err.code], details: err.details });
      }
      const delay = this.reconnectDelay;
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, EVENTS_RECONNECT_MAX_MS);
      // eslint-disable-next-line no-restricted-syntax -- the delay doubles up to EVENTS_RECONNECT_MAX_MS
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        this.openEvents();
      }, delay);
      this.reconnectTimer.unref();
    };
    stream.on('error', (err: grpc.ServiceError) => ended(err));
    stream.on('end', () => ended());
  }

  private closeEvents(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const s = this.events;
    this.events = undefined;
    this.eventsLive = false;
    s?.cancel();
  }

  /** Closes the connection. The containers belong to the runtime service and keep running. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWarming?.();
    this.closeEvents();
    this.imageClient.close();
    this.runtimeClient.close();
  }
}

function optional(w: Wire | null | undefined): number | undefined {
  return w ? int64(w.value) : undefined;
}

function statsFromWire(w: Wire): ContainerStatsSample {
  const s: ContainerStatsSample = {
    id: w.attributes?.id ?? '',
    name: w.attributes?.metadata?.name ?? '',
    labels: { ...(w.attributes?.labels ?? {}) },
    timestamp: nsToMs(w.cpu?.timestamp ?? w.memory?.timestamp ?? 0),
  };
  const set = (k: keyof ContainerStatsSample, v: number | undefined) => {
    if (v !== undefined) (s as unknown as Record<string, number>)[k] = v;
  };
  set('cpuUsageCoreNanoSeconds', optional(w.cpu?.usageCoreNanoSeconds));
  set('cpuUsageNanoCores', optional(w.cpu?.usageNanoCores));
  set('memoryWorkingSetBytes', optional(w.memory?.workingSetBytes));
  set('memoryUsageBytes', optional(w.memory?.usageBytes));
  set('memoryRssBytes', optional(w.memory?.rssBytes));
  set('writableLayerBytes', optional(w.writableLayer?.usedBytes));
  return s;
}

/** A client that knows what the runtime is (identify()): its name (e.g. `containerd`, `process`) and capabilities. */
export async function connectCriRuntime(opts: CriClientOptions): Promise<CriRuntimeClient> {
  const client = new CriRuntimeClient(opts);
  try {
    await client.identify();
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}
