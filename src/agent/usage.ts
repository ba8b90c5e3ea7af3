// Container and pod CPU/memory as the process runtime can measure them (/proc, by process group):
// one sample serves /metrics/resource, /stats/summary and pod metrics; CPU rates come from the
// previous sample of the same container.

import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../kuberuntime/container-config.js';
import { containerProcessInfo, type RuntimeService } from '../runtime/cri.js';
import { nodeUsage, processGroupUsage } from '../runtime/proc-usage.js';
import type { Clock } from '../util/clock.js';
import type { PodResourceStats } from '../kubelet/eviction-ranking.js';

export interface ContainerUsage {
  name: string;
  id: string;
  startedAt: number;
  cpuNanos: number;
  /** Cores used since the previous sample; undefined on the first. */
  cpuCores?: number;
  memoryBytes: number;
  /** The container's live processes. */
  processes: number;
}

export interface PodUsage {
  namespace: string;
  name: string;
  uid: string;
  containers: ContainerUsage[];
}

export interface UsageSample {
  time: number;
  /** Since the previous sample, for the metrics window. */
  windowMs: number;
  node?: { cpuNanos: number; memoryBytes: number; cpuCores?: number };
  pods: PodUsage[];
}

/**
 * The runtime usage is measured on: where its containers are host processes (capabilities), each
 * container's process group comes from its verbose ContainerStatus info.
 */
export type ProcessAwareRuntime = RuntimeService;

/** Samples are reused for this long, so scrapes in a burst read /proc once. */
const SAMPLE_TTL_MS = 1000;

/** A pod's memory (working set: the resident set of its processes) and process count from a sample, as the eviction manager ranks pods by them. */
export function podResourceStats(sample: UsageSample, uid: string): PodResourceStats | undefined {
  const p = sample.pods.find((x) => x.uid === uid);
  if (!p) return undefined;
  return {
    containers: p.containers.map((c) => ({ name: c.name, workingSetBytes: c.memoryBytes })),
    processes: p.containers.reduce((n, c) => n + c.processes, 0),
  };
}

export class UsageCollector {
  private last?: UsageSample;
  private pending?: Promise<UsageSample>;
  private readonly prevCpu = new Map<string, { t: number; cpu: number }>();
  private prevNode?: { t: number; cpu: number };

  constructor(
    private readonly runtime: ProcessAwareRuntime,
    private readonly clock: Clock,
  ) {}

  /** The latest sample without waiting (undefined before the first). */
  get latest(): UsageSample | undefined {
    return this.last;
  }

  async sample(): Promise<UsageSample> {
    if (this.last && this.clock.now() - this.last.time < SAMPLE_TTL_MS) return this.last;
    this.pending ??= this.take().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async take(): Promise<UsageSample> {
    const now = this.clock.now();
    const running = await this.runtime.listContainers({ state: 'CONTAINER_RUNNING' });
    const pgidOf = new Map<string, number>();
    if (this.runtime.capabilities.hostProcesses) {
      await Promise.all(
        running.map(async (c) => {
          const pgid = (await containerProcessInfo(this.runtime, c.id).catch(() => undefined))?.pgid;
          if (pgid !== undefined) pgidOf.set(c.id, pgid);
        }),
      );
    }
    const [usage, node] = await Promise.all([processGroupUsage(new Set(pgidOf.values())), nodeUsage()]);
    const pods = new Map<string, PodUsage>();
    const seen = new Set<string>();
    for (const c of running) {
      const uid = c.labels[LABEL_POD_UID] ?? '';
      let p = pods.get(uid);
      if (!p) {
        p = { namespace: c.labels[LABEL_POD_NAMESPACE] ?? '', name: c.labels[LABEL_POD_NAME] ?? '', uid, containers: [] };
        pods.set(uid, p);
      }
      const u = usage.get(pgidOf.get(c.id) ?? -1) ?? { cpuNanos: 0, rssBytes: 0, processes: 0 };
      const prev = this.prevCpu.get(c.id);
      const cu: ContainerUsage = {
        name: c.labels[LABEL_CONTAINER_NAME] ?? c.metadata.name,
        id: c.id,
        startedAt: c.startedAt,
        cpuNanos: u.cpuNanos,
        memoryBytes: u.rssBytes,
        processes: u.processes,
      };
      if (prev && now > prev.t) cu.cpuCores = Math.max(0, (u.cpuNanos - prev.cpu) / ((now - prev.t) * 1e6));
      this.prevCpu.set(c.id, { t: now, cpu: u.cpuNanos });
      seen.add(c.id);
      p.containers.push(cu);
    }
    for (const id of this.prevCpu.keys()) if (!seen.has(id)) this.prevCpu.delete(id);
    const sample: UsageSample = { time: now, windowMs: this.last ? now - this.last.time : 0, pods: [...pods.values()] };
    if (node) {
      sample.node = { ...node };
      if (this.prevNode && now > this.prevNode.t) sample.node.cpuCores = Math.max(0, (node.cpuNanos - this.prevNode.cpu) / ((now - this.prevNode.t) * 1e6));
      this.prevNode = { t: now, cpu: node.cpuNanos };
    }
    this.last = sample;
    return sample;
  }
}
