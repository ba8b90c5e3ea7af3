// Several runtimes behind one RuntimeService, chosen per pod by its RuntimeClass handler, as the CRI
// runtime of a node with several handlers does it (containerd's CRI plugin with several runtimes):
// RunPodSandbox goes to the runtime of its handler; every later call names a sandbox or a container,
// which is routed back to the runtime that holds it; listings merge every runtime's; the image
// service is the default runtime's. A handler no runtime serves is answered as containerd answers it.
// Upstream: the kubelet's RuntimeService face (pkg/kubelet/cri/remote) over containerd's
// per-handler runtimes (pkg/cri/server RunPodSandbox, getSandboxRuntime).

import {
  CRI_RUNTIME_CAPABILITIES,
  NotFoundError,
  noRuntimeForHandler,
  type ContainerConfig,
  type ContainerEvent,
  type ContainerFilter,
  type ContainerListing,
  type ContainerStatus,
  type ExecSyncResult,
  type HandlerRuntime,
  type ImageService,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type RuntimeCapabilities,
  type RuntimeService,
  type StreamingRequest,
  type StreamingURL,
} from './cri.js';

/** One runtime of the multiplexer and the handlers it serves. */
export interface MuxRuntime {
  runtime: RuntimeService;
  /** The RuntimeClass handlers it serves (`process`; `runc` for containerd). */
  handlers: readonly string[];
  /** The handler RunPodSandbox passes on (containerd's `runc`; '' for a runtime of one handler). */
  passHandler: (handler: string) => string;
}

/** Thrown for a RunPodSandbox whose handler no runtime serves (the message is containerd's, as gRPC reports it). */
export class NoRuntimeForHandlerError extends Error {
  constructor(readonly handler: string) {
    super(`rpc error: code = Unknown desc = ${noRuntimeForHandler(handler)}`);
    this.name = 'NoRuntimeForHandlerError';
  }
}

export class RuntimeMultiplexer implements RuntimeService {
  readonly name: string;
  readonly capabilities: RuntimeCapabilities;
  readonly images: ImageService;
  /** Which runtime holds each sandbox and container id seen. */
  private readonly owner = new Map<string, RuntimeService>();
  private readonly all: RuntimeService[];

  /** `defaultRuntime` runs pods of the default handler ('') and holds the images. */
  constructor(
    private readonly defaultRuntime: MuxRuntime,
    private readonly others: readonly MuxRuntime[],
  ) {
    this.name = defaultRuntime.runtime.name;
    this.capabilities = defaultRuntime.runtime.capabilities ?? CRI_RUNTIME_CAPABILITIES;
    this.images = defaultRuntime.runtime.images;
    this.all = [defaultRuntime.runtime, ...others.map((o) => o.runtime)];
  }

  /** The runtimes behind it, default first. */
  runtimes(): readonly RuntimeService[] {
    return this.all;
  }

  private entryOf(handler: string): MuxRuntime | undefined {
    if (handler === '') return this.defaultRuntime;
    return [this.defaultRuntime, ...this.others].find((m) => m.handlers.includes(handler));
  }

  handlerRuntime(handler: string): HandlerRuntime | undefined {
    const e = this.entryOf(handler);
    return e ? { name: e.runtime.name, capabilities: e.runtime.capabilities } : undefined;
  }

  version() {
    return this.defaultRuntime.runtime.version();
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    const e = this.entryOf(runtimeHandler);
    if (!e) throw new NoRuntimeForHandlerError(runtimeHandler);
    const id = await e.runtime.runPodSandbox(config, e.passHandler(runtimeHandler));
    this.owner.set(id, e.runtime);
    return id;
  }

  /** The runtime that holds an id: as seen, else found by listing each runtime. */
  private async runtimeOf(id: string, kind: 'sandbox' | 'container'): Promise<RuntimeService> {
    const known = this.owner.get(id);
    if (known) return known;
    for (const rt of this.all) {
      const found =
        kind === 'sandbox' ? (await rt.listPodSandbox({ id }).catch(() => [])).length : (await rt.listContainerStates({ id }).catch(() => [])).length;
      if (found) {
        this.owner.set(id, rt);
        return rt;
      }
    }
    throw new NotFoundError(`${kind} ${JSON.stringify(id)} not found`);
  }

  private async merged<T>(list: (rt: RuntimeService) => Promise<T[]>, idOf: (x: T) => string): Promise<T[]> {
    const parts = await Promise.all(this.all.map(async (rt) => ({ rt, items: await list(rt) })));
    const out: T[] = [];
    for (const { rt, items } of parts) {
      for (const x of items) {
        this.owner.set(idOf(x), rt);
        out.push(x);
      }
    }
    return out;
  }

  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandboxStatus[]> {
    return this.merged(
      (rt) => rt.listPodSandbox(filter),
      (s) => s.id,
    );
  }

  async stopPodSandbox(id: string): Promise<void> {
    await (await this.runtimeOf(id, 'sandbox')).stopPodSandbox(id);
  }

  async removePodSandbox(id: string): Promise<void> {
    await (await this.runtimeOf(id, 'sandbox')).removePodSandbox(id);
    this.owner.delete(id);
  }

  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    return (await this.runtimeOf(id, 'sandbox')).podSandboxStatus(id);
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const rt = await this.runtimeOf(podSandboxId, 'sandbox');
    const id = await rt.createContainer(podSandboxId, config, sandboxConfig);
    this.owner.set(id, rt);
    return id;
  }

  async startContainer(id: string): Promise<void> {
    await (await this.runtimeOf(id, 'container')).startContainer(id);
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    await (await this.runtimeOf(id, 'container')).stopContainer(id, timeoutSeconds);
  }

  async removeContainer(id: string): Promise<void> {
    await (await this.runtimeOf(id, 'container')).removeContainer(id);
    this.owner.delete(id);
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    return (await this.runtimeOf(id, 'container')).containerStatus(id);
  }

  async containerInfo(id: string): Promise<Record<string, string>> {
    return (await this.runtimeOf(id, 'container')).containerInfo(id);
  }

  async listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]> {
    if (filter?.podSandboxId) return (await this.runtimeOf(filter.podSandboxId, 'sandbox').catch(() => this.defaultRuntime.runtime)).listContainers(filter);
    return this.merged(
      (rt) => rt.listContainers(filter),
      (c) => c.id,
    );
  }

  async listContainerStates(filter?: ContainerFilter): Promise<ContainerListing[]> {
    if (filter?.podSandboxId)
      return (await this.runtimeOf(filter.podSandboxId, 'sandbox').catch(() => this.defaultRuntime.runtime)).listContainerStates(filter);
    return this.merged(
      (rt) => rt.listContainerStates(filter),
      (c) => c.id,
    );
  }

  /** A number that changes when any runtime's event stream reconnects; undefined while one is not connected. */
  containerEventsConnection(): number | undefined {
    let n = 0;
    for (const rt of this.all) {
      const c = rt.containerEventsConnection();
      if (c === undefined) return undefined;
      n = n * 1_000_003 + c;
    }
    return n;
  }

  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    return (await this.runtimeOf(id, 'container')).execSync(id, cmd, timeoutSeconds);
  }

  async exec(req: StreamingRequest): Promise<StreamingURL> {
    return (await this.runtimeOf(req.containerId, 'container')).exec(req);
  }

  async attach(req: Omit<StreamingRequest, 'cmd'>): Promise<StreamingURL> {
    return (await this.runtimeOf(req.containerId, 'container')).attach(req);
  }

  async portForward(podSandboxId: string, ports: number[]): Promise<StreamingURL> {
    return (await this.runtimeOf(podSandboxId, 'sandbox')).portForward(podSandboxId, ports);
  }

  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void {
    const offs = this.all.map((rt) => rt.onContainerEvent(listener));
    return () => offs.forEach((off) => off());
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((rt) => rt.close()));
  }
}
