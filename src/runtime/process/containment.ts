// Holding a container's processes together: a cgroup per container inside its pod's cgroup when the
// host allows (limits enforced, OOM kills seen, every descendant found), else the /proc tree tracker.
// Either way the container and its execs are killed as a whole, whatever they fork or setsid.

import type { Logger } from '../../util/logger.js';
import type { LinuxContainerResources } from '../cri.js';
import { CgroupManager, type Cgroup } from './cgroup.js';
import { childrenTree, ProcSnapshots, ProcTreeTracker, readProcTable } from './proc-tree.js';

/** One container's processes. */
export interface Containment {
  /**
   * The files a process writes `0` into to join the container's cgroup itself, before its program
   * runs (cgroup-join.ts); undefined where no cgroup holds the container.
   */
  joinFiles(): readonly string[] | undefined;
  /** Takes in a group leader that joined the cgroup before it ran anything: the kernel holds the rest. */
  addJoined(pid: number): void;
  /** Takes in a freshly spawned group leader (the main process or an exec) and whatever it forked already. */
  add(pid: number): void;
  /**
   * As add, for a group leader this runtime spawned an instant ago (a container's main process or an
   * exec): the same moves, reading only its own subtree (the kernel's children lists) instead of
   * every process, which on a busy host costs tens of milliseconds per call.
   */
  addSpawned(pid: number): void;
  /**
   * As addSpawned for a container's main process, with the cgroup moves off the event loop (a
   * cgroup v1 write waits for an RCU grace period: milliseconds of wall time, little CPU), so
   * containers started together overlap and share their grace periods. The process is tracked when
   * this returns; the promise resolves once the moves are done, and rejects only when a move fails
   * for another reason than an exit. Execs use addSpawned: the synchronous write costs less CPU.
   */
  addSpawnedInBackground(pid: number): Promise<void>;
  /**
   * An exec's group leader whose group is gone: its pgid, which may name another group later, stops
   * marking processes as the container's; with pipesClosed its stdout/stderr too (nothing holds them,
   * and /proc may reuse their names). Processes it left behind that were seen stay tracked by pid.
   */
  forget(pid: number, pipesClosed: boolean): void;
  /**
   * SIGKILLs everything now, synchronously (agent exit). With a cgroup this reads only what names the
   * container's processes (the cgroup, the processes tracked by pid), never every process of the host.
   */
  killSync(): void;
  /** Kills everything and resolves whether nothing is left (as killSync, repeated until then). */
  killAll(): Promise<boolean>;
  /** The kernel OOM-killed one of its processes (only known with a memory cgroup). */
  oomKilled(): boolean;
  /** Releases the cgroup, once nothing runs. */
  release(): void;
  /** CPU time (ns) and memory in use (bytes), where a cgroup accounts them. */
  usage(): { cpuNanos?: number; memoryBytes?: number };
}

export interface ContainmentOptions {
  /** 'auto' uses cgroups when writable; false never (the /proc fallback). */
  cgroups: 'auto' | false;
  /** pids.max of each pod's cgroup (the kubelet's podPidsLimit); 0 or negative = unlimited. */
  podPidsLimit: number;
  logger: Logger;
}

/** Creates pod and container containments for the runtime. */
export class ContainmentHost {
  private readonly cgroups: CgroupManager | undefined;
  private readonly pods = new Map<string, Cgroup>();
  /** /proc as read this turn, shared by every container's tracker (containers stop together). */
  private readonly procSnapshots = new ProcSnapshots();

  constructor(private readonly opts: ContainmentOptions) {
    this.cgroups = opts.cgroups === false ? undefined : CgroupManager.open();
  }

  /** True when containers get cgroups (limits enforced). */
  get enforcesLimits(): boolean {
    return this.cgroups !== undefined;
  }

  /** Why a field of this runtime config is not honoured here ([] when all are). */
  unhonoured(resources: LinuxContainerResources | undefined): Array<{ field: string; why: string }> {
    if (this.cgroups) return [];
    const why = 'no writable cgroup hierarchy (podvisor is not root, or cgroups are read-only)';
    const out: Array<{ field: string; why: string }> = [];
    if (resources?.memoryLimitInBytes) out.push({ field: 'resources.limits.memory', why });
    if (resources?.cpuQuota) out.push({ field: 'resources.limits.cpu', why });
    return out;
  }

  /** The pod's cgroup (with the pids limit), when cgroups are used. */
  openPod(sandboxId: string): void {
    if (!this.cgroups) return;
    const pidsMax = this.opts.podPidsLimit > 0 ? this.opts.podPidsLimit : 0;
    try {
      this.pods.set(sandboxId, this.cgroups.createPod(sandboxId, { pidsMax }));
    } catch (err) {
      this.opts.logger.warn('Failed to create pod cgroup', { sandboxId, err: String(err) });
    }
  }

  closePod(sandboxId: string): void {
    this.pods.get(sandboxId)?.remove();
    this.pods.delete(sandboxId);
  }

  /** A new container's containment; its cgroup carries the container's limits. */
  container(sandboxId: string, containerId: string, resources: LinuxContainerResources | undefined): Containment {
    const pod = this.pods.get(sandboxId);
    if (pod) {
      const cg = pod.child(containerId, {
        memoryBytes: resources?.memoryLimitInBytes,
        cpuQuotaUs: resources?.cpuQuota,
        cpuPeriodUs: resources?.cpuPeriod,
        cpuShares: resources?.cpuShares,
      });
      return new CgroupContainment(cg, new ProcTreeTracker(this.procSnapshots));
    }
    return new TreeContainment(new ProcTreeTracker(this.procSnapshots));
  }
}

/**
 * A container cgroup. A process spawned through cgroup-join.ts joins it before its program runs, so
 * the cgroup holds everything it ever forks. One moved in after spawn (adopted after a restart, or
 * started where no shell can do the join) may fork in that instant: the moves repeat until none is
 * needed, and what it had forked already is tracked by pid, so it is killed with the container.
 */
class CgroupContainment implements Containment {
  constructor(
    private readonly cg: Cgroup,
    private readonly tree: ProcTreeTracker,
  ) {}

  joinFiles(): readonly string[] {
    return this.cg.procsFiles();
  }
  addJoined(): void {
    // The kernel adds to the cgroup whatever the process forks.
  }

  add(pid: number): void {
    this.tree.addRoot(pid);
    // The process runs from the moment spawn returns: bring in anything it forked before the move.
    // A child forked by a process before that process moved is found on the next pass, until a
    // pass moves nothing: from then on every fork happens inside the cgroup.
    if (!this.cg.addProcess(pid)) return;
    const moved = new Set([pid]);
    for (let pass = 0; pass < 20; pass++) {
      const table = readProcTable();
      const tree = new Set([pid]);
      let movedNow = 0;
      for (let grew = true; grew;) {
        grew = false;
        for (const e of table.values()) {
          if (tree.has(e.pid) || !tree.has(e.ppid)) continue;
          tree.add(e.pid);
          grew = true;
          if (!moved.has(e.pid)) {
            moved.add(e.pid);
            this.cg.addProcess(e.pid);
            movedNow++;
          }
        }
      }
      if (movedNow === 0) return;
    }
  }
  addSpawned(pid: number): void {
    const forked = childrenTree(pid);
    if (forked === undefined) return this.add(pid);
    this.tree.addFreshRoot(pid, forked);
    if (!this.cg.addProcess(pid)) return;
    // As add: repeat until a pass moves nothing, each pass reading the subtree after the moves.
    const moved = new Set([pid]);
    for (let pass = 0; pass < 20; pass++) {
      let movedNow = 0;
      for (const p of childrenTree(pid) ?? []) {
        if (moved.has(p)) continue;
        moved.add(p);
        this.cg.addProcess(p);
        movedNow++;
      }
      if (movedNow === 0) return;
    }
  }
  addSpawnedInBackground(pid: number): Promise<void> {
    const forked = childrenTree(pid);
    if (forked === undefined) {
      try {
        this.add(pid);
        return Promise.resolve();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    this.tree.addFreshRoot(pid, forked);
    return this.moveInBackground(pid);
  }
  private async moveInBackground(pid: number): Promise<void> {
    if (!(await this.cg.addProcessAsync(pid))) return;
    // As addSpawned: repeat until a pass moves nothing, each pass reading the subtree after the moves.
    const moved = new Set([pid]);
    for (let pass = 0; pass < 20; pass++) {
      const fresh = (childrenTree(pid) ?? []).filter((p) => !moved.has(p));
      if (fresh.length === 0) return;
      for (const p of fresh) moved.add(p);
      await Promise.all(fresh.map((p) => this.cg.addProcessAsync(p)));
    }
  }
  forget(pid: number, pipesClosed: boolean): void {
    this.tree.forgetRoot(pid, pipesClosed);
  }
  killSync(): void {
    this.cg.killSync();
    this.tree.killKnownSync();
  }
  async killAll(): Promise<boolean> {
    const [inCgroup, escaped] = await Promise.all([this.cg.killAll(), this.tree.killKnown()]);
    return inCgroup && escaped;
  }
  oomKilled(): boolean {
    return this.cg.oomKilled();
  }
  release(): void {
    this.cg.remove();
  }
  usage(): { cpuNanos?: number; memoryBytes?: number } {
    return this.cg.usage();
  }
}

/** How often the /proc tree is rescanned while a container runs, so a child seen once stays tracked. */
const TREE_SCAN_MS = 1000;

class TreeContainment implements Containment {
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly tree: ProcTreeTracker) {}
  joinFiles(): undefined {
    return undefined;
  }
  addJoined(pid: number): void {
    this.add(pid);
  }
  add(pid: number): void {
    this.tree.addRoot(pid);
    if (!this.timer) {
      this.timer = setInterval(() => this.tree.scan(), TREE_SCAN_MS);
      this.timer.unref();
    }
  }
  addSpawned(pid: number): void {
    this.add(pid);
  }
  addSpawnedInBackground(pid: number): Promise<void> {
    this.add(pid);
    return Promise.resolve();
  }
  forget(pid: number, pipesClosed: boolean): void {
    this.tree.forgetRoot(pid, pipesClosed);
  }
  killSync(): void {
    this.tree.killSync();
  }
  async killAll(): Promise<boolean> {
    const gone = await this.tree.killAll();
    if (gone) this.stop();
    return gone;
  }
  oomKilled(): boolean {
    return false;
  }
  release(): void {
    this.stop();
  }
  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
  usage(): { cpuNanos?: number; memoryBytes?: number } {
    return {};
  }
}
