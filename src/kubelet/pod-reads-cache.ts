// The pod workers' view of the runtime with the kubelet's pod cache (pkg/kubelet/container/cache.go)
// for what a sync reads of a pod: while the runtime pushes container events, a pod's containers and
// its sandbox's status are asked once and kept until an event, a relist or a change made through
// this view says the pod changed, so the periodic resync of a pod where nothing happened makes no
// runtime call. Without a connected event stream every read goes to the runtime.

import type { ContainerFilter, ContainerStatus, PodSandboxStatus, RuntimeService } from '../runtime/cri.js';

/** The runtime's reads this view answers from the cache; every other member is passed through. */
const CACHED = new Set<string | symbol>(['listContainers', 'podSandboxStatus']);
/** Members that change nothing in the runtime: passed through without forgetting anything. */
const READS = new Set<string | symbol>([
  'name',
  'capabilities',
  'handlerRuntime',
  'images',
  'version',
  'listPodSandbox',
  'containerStatus',
  'containerInfo',
  'listContainerStates',
  'containerEventsConnection',
  'onContainerEvent',
  'execSync',
  'exec',
  'attach',
  'portForward',
]);

interface Entry<T> {
  value: Promise<T>;
  /** The event stream connection it was read under. */
  connection: number;
}

export class PodReadsCache {
  /** The runtime as the pod workers use it. */
  readonly runtime: RuntimeService;
  private readonly containers = new Map<string, Entry<ContainerStatus[]>>();
  private readonly sandboxes = new Map<string, Entry<PodSandboxStatus>>();
  /** Bumped by every change: a read that began before one is not kept. */
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly source: RuntimeService) {
    this.unsubscribe = source.onContainerEvent((ev) => (ev.podSandboxId ? this.invalidate(ev.podSandboxId) : this.forgetAll()));
    const cachedReads: Partial<RuntimeService> = {
      listContainers: (filter?: ContainerFilter) => this.listContainers(filter),
      podSandboxStatus: (id: string) => this.podSandboxStatus(id),
    };
    this.runtime = new Proxy(source, {
      get: (target, key) => {
        if (CACHED.has(key)) return cachedReads[key as keyof RuntimeService];
        const member: unknown = Reflect.get(target, key, target);
        if (typeof member !== 'function') return member;
        if (READS.has(key)) return (member as (...a: unknown[]) => unknown).bind(target);
        // A change (a sandbox or container started, stopped, removed): nothing kept is trusted after it.
        return (...args: unknown[]) => {
          this.forgetAll();
          const result = (member as (...a: unknown[]) => unknown).apply(target, args);
          if (result instanceof Promise) return result.finally(() => this.forgetAll());
          return result;
        };
      },
    });
  }

  /** A change of the pod with this sandbox seen elsewhere (a relist): its reads go to the runtime again. */
  invalidate(podSandboxId: string): void {
    this.generation++;
    this.containers.delete(podSandboxId);
    this.sandboxes.delete(podSandboxId);
  }

  close(): void {
    this.unsubscribe();
    this.forgetAll();
  }

  private forgetAll(): void {
    this.generation++;
    this.containers.clear();
    this.sandboxes.clear();
  }

  private async listContainers(filter?: ContainerFilter): Promise<ContainerStatus[]> {
    // Only a whole pod's listing is kept: the resync's.
    const sandboxId = filter?.podSandboxId;
    const wholePod = sandboxId !== undefined && filter?.id === undefined && filter?.state === undefined && filter?.labelSelector === undefined;
    if (!wholePod) return this.source.listContainers(filter);
    return [...(await this.read(this.containers, sandboxId, () => this.source.listContainers({ podSandboxId: sandboxId })))];
  }

  private podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    return this.read(this.sandboxes, id, () => this.source.podSandboxStatus(id));
  }

  private read<T>(entries: Map<string, Entry<T>>, key: string, fetch: () => Promise<T>): Promise<T> {
    const connection = this.source.containerEventsConnection();
    if (connection === undefined) return fetch();
    const kept = entries.get(key);
    if (kept && kept.connection === connection) return kept.value;
    const generation = this.generation;
    const value = fetch();
    value.then(
      () => {
        // Kept only when nothing changed while it was read and the stream is still the same.
        if (this.generation === generation && this.source.containerEventsConnection() === connection) entries.set(key, { value, connection });
      },
      () => undefined,
    );
    return value;
  }
}
