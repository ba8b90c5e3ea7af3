// Control groups for the process runtime: a cgroup per pod (pids.max from --pod-max-pids) under a
// `podvisor` parent, and one per container inside it (memory and CPU limits), on cgroup v2 or on the
// v1 memory/cpu/pids hierarchies. They track every descendant, kill them all, and report OOM kills.

import { accessSync, constants, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Directory of the parent cgroup under each hierarchy (as the kubelet's `kubepods`). */
export const CGROUP_PARENT = 'podvisor';

/** cgroup settings of one container or pod; 0 means unset, as in CRI's LinuxContainerResources. */
export interface CgroupLimits {
  memoryBytes?: number;
  cpuQuotaUs?: number;
  cpuPeriodUs?: number;
  cpuShares?: number;
  pidsMax?: number;
}

/** Where the hierarchies are: one cgroup2 mount, or the v1 mounts of the controllers used. */
export type CgroupLayout = { version: 2; root: string } | { version: 1; memory: string; cpu: string; pids: string };

const V1_CONTROLLERS = ['memory', 'cpu', 'pids'] as const;
const V2_CONTROLLERS = ['memory', 'cpu', 'pids'];

/** Reads /proc/self/mountinfo for a usable layout: cgroup v2 with memory/cpu/pids, else v1 mounts of all three. */
export function detectCgroupLayout(mountinfo = safeRead('/proc/self/mountinfo')): CgroupLayout | undefined {
  const v1: Partial<Record<(typeof V1_CONTROLLERS)[number], string>> = {};
  let v2: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const mountPoint = line.slice(0, sep).split(' ')[4];
    const [fstype, , superOpts = ''] = line.slice(sep + 3).split(' ');
    if (!mountPoint) continue;
    if (fstype === 'cgroup2') {
      const controllers = safeRead(join(mountPoint, 'cgroup.controllers')).split(/\s+/);
      if (V2_CONTROLLERS.every((c) => controllers.includes(c))) v2 ??= mountPoint;
    } else if (fstype === 'cgroup') {
      const opts = superOpts.split(',');
      for (const c of V1_CONTROLLERS) if (opts.includes(c)) v1[c] ??= mountPoint;
    }
  }
  if (v2) return { version: 2, root: v2 };
  if (v1.memory && v1.cpu && v1.pids) return { version: 1, memory: v1.memory, cpu: v1.cpu, pids: v1.pids };
  return undefined;
}

/**
 * Creates pod and container cgroups under `<hierarchy>/podvisor`. `open` returns undefined when the
 * hierarchy is not writable (not root, a read-only cgroupfs), and the runtime falls back to /proc.
 */
export class CgroupManager {
  private constructor(private readonly layout: CgroupLayout) {}

  static open(layout: CgroupLayout | undefined = detectCgroupLayout()): CgroupManager | undefined {
    if (!layout) return undefined;
    try {
      for (const dir of parentDirs(layout)) {
        mkdirSync(dir, { recursive: true });
        accessSync(dir, constants.W_OK);
      }
      if (layout.version === 2) {
        enableControllers(layout.root);
        enableControllers(join(layout.root, CGROUP_PARENT));
      }
      return new CgroupManager(layout);
    } catch {
      return undefined;
    }
  }

  get version(): 1 | 2 {
    return this.layout.version;
  }

  /** A pod's cgroup, named by its sandbox id (hex, never pod data), with the pod's pids limit. */
  createPod(sandboxId: string, limits: CgroupLimits): Cgroup {
    checkName(sandboxId);
    const cg = new Cgroup(
      this.layout,
      parentDirs(this.layout).map((d) => join(d, sandboxId)),
    );
    cg.create(limits);
    if (this.layout.version === 2) enableControllers(cg.dirs[0]!);
    return cg;
  }
}

/** One cgroup (a directory per hierarchy). */
export class Cgroup {
  constructor(
    private readonly layout: CgroupLayout,
    readonly dirs: string[],
  ) {}

  /** A child cgroup (a container inside its pod), named by the runtime's hex id. */
  child(name: string, limits: CgroupLimits): Cgroup {
    checkName(name);
    const cg = new Cgroup(
      this.layout,
      this.dirs.map((d) => join(d, name)),
    );
    cg.create(limits);
    return cg;
  }

  create(limits: CgroupLimits): void {
    for (const d of this.dirs) mkdirSync(d, { recursive: true });
    const mem = limits.memoryBytes ?? 0;
    const quota = limits.cpuQuotaUs ?? 0;
    const period = limits.cpuPeriodUs || 100_000;
    const pids = limits.pidsMax ?? 0;
    if (this.layout.version === 2) {
      const d = this.dirs[0]!;
      if (mem > 0) {
        writeFileSync(join(d, 'memory.max'), String(mem));
        // As runc: no swap beyond the memory limit, so the limit is what the kernel enforces.
        tryWrite(join(d, 'memory.swap.max'), '0');
      }
      if (quota > 0) writeFileSync(join(d, 'cpu.max'), `${quota} ${period}`);
      if (limits.cpuShares) tryWrite(join(d, 'cpu.weight'), String(sharesToWeight(limits.cpuShares)));
      if (pids > 0) writeFileSync(join(d, 'pids.max'), String(pids));
      return;
    }
    const [memDir, cpuDir, pidsDir] = this.dirs as [string, string, string];
    if (mem > 0) {
      writeFileSync(join(memDir, 'memory.limit_in_bytes'), String(mem));
      tryWrite(join(memDir, 'memory.memsw.limit_in_bytes'), String(mem));
    }
    if (quota > 0) {
      writeFileSync(join(cpuDir, 'cpu.cfs_period_us'), String(period));
      writeFileSync(join(cpuDir, 'cpu.cfs_quota_us'), String(quota));
    }
    if (limits.cpuShares) tryWrite(join(cpuDir, 'cpu.shares'), String(limits.cpuShares));
    if (pids > 0) writeFileSync(join(pidsDir, 'pids.max'), String(pids));
  }

  /** The cgroup.procs file of each hierarchy: a process writing `0` into each joins the cgroup. */
  procsFiles(): string[] {
    return this.dirs.map((d) => join(d, 'cgroup.procs'));
  }

  /** Moves a process (all its threads) into this cgroup; false when it is gone already. */
  addProcess(pid: number): boolean {
    try {
      for (const d of this.dirs) writeFileSync(join(d, 'cgroup.procs'), String(pid));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw err;
    }
  }

  /**
   * As addProcess, off the event loop: on cgroup v1 a write to cgroup.procs waits for an RCU grace
   * period (milliseconds of wall time on a busy host, little CPU), so the writes go to the thread
   * pool, one per hierarchy at once; writes that overlap share their grace period.
   */
  async addProcessAsync(pid: number): Promise<boolean> {
    const results = await Promise.allSettled(this.dirs.map((d) => writeFile(join(d, 'cgroup.procs'), String(pid))));
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      if ((r.reason as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw r.reason;
    }
    return true;
  }

  /** The processes in this cgroup and below. */
  procs(): number[] {
    const out = new Set<number>();
    const walk = (dir: string) => {
      for (const p of safeRead(join(dir, 'cgroup.procs')).split('\n')) if (p) out.add(Number(p));
      for (const e of safeReaddir(dir)) walk(join(dir, e));
    };
    // Every process is in the pids hierarchy on v1 (the one whose membership bounds forks).
    walk(this.layout.version === 2 ? this.dirs[0]! : this.dirs[2]!);
    return [...out];
  }

  /** True when the kernel OOM-killed a process of this cgroup (memory.events / memory.oom_control). */
  oomKilled(): boolean {
    const file = this.layout.version === 2 ? join(this.dirs[0]!, 'memory.events') : join(this.dirs[0]!, 'memory.oom_control');
    const m = /^oom_kill (\d+)$/m.exec(safeRead(file));
    return m !== null && Number(m[1]) > 0;
  }

  /** CPU time (ns) and memory in use (bytes), for metrics; undefined where a file is unreadable. */
  usage(): { cpuNanos?: number; memoryBytes?: number } {
    if (this.layout.version === 2) {
      const usec = /^usage_usec (\d+)$/m.exec(safeRead(join(this.dirs[0]!, 'cpu.stat')));
      const mem = safeRead(join(this.dirs[0]!, 'memory.current')).trim();
      return { cpuNanos: usec ? Number(usec[1]) * 1000 : undefined, memoryBytes: mem ? Number(mem) : undefined };
    }
    const usec = /^usage_usec (\d+)$/m.exec(safeRead(join(this.dirs[1]!, 'cpu.stat')));
    const mem = safeRead(join(this.dirs[0]!, 'memory.usage_in_bytes')).trim();
    return { cpuNanos: usec ? Number(usec[1]) * 1000 : undefined, memoryBytes: mem ? Number(mem) : undefined };
  }

  /** SIGKILLs every process of the cgroup now (cgroup.kill on v2), synchronously. */
  killSync(): void {
    if (this.layout.version === 2 && tryWrite(join(this.dirs[0]!, 'cgroup.kill'), '1')) return;
    for (const pid of this.procs()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }

  /**
   * Kills everything in the cgroup, repeating while processes remain (a fork racing the kill), and
   * resolves whether the cgroup became empty within maxMs.
   */
  async killAll(maxMs = 5000): Promise<boolean> {
    let waited = 0;
    let step = 1;
    for (;;) {
      this.killSync();
      if (this.procs().length === 0) return true;
      if (waited >= maxMs) return false;
      await sleep(step);
      waited += step;
      step = Math.min(step * 2, 50);
    }
  }

  /** Removes the cgroup's directories (children first); quietly leaves what is still busy. */
  remove(): void {
    for (const d of this.dirs) removeTree(d);
  }
}

/** cgroup v1 shares → v2 weight, as runc converts them. */
export function sharesToWeight(shares: number): number {
  if (shares <= 0) return 100;
  return Math.round(1 + ((shares - 2) * 9999) / 262142);
}

function parentDirs(layout: CgroupLayout): string[] {
  if (layout.version === 2) return [join(layout.root, CGROUP_PARENT)];
  return [join(layout.memory, CGROUP_PARENT), join(layout.cpu, CGROUP_PARENT), join(layout.pids, CGROUP_PARENT)];
}

function enableControllers(dir: string): void {
  const available = safeRead(join(dir, 'cgroup.controllers')).split(/\s+/);
  const want = V2_CONTROLLERS.filter((c) => available.includes(c));
  writeFileSync(join(dir, 'cgroup.subtree_control'), want.map((c) => `+${c}`).join(' '));
}

function checkName(name: string): void {
  if (!/^[0-9a-f]{1,64}$/.test(name)) throw new Error(`invalid cgroup name ${JSON.stringify(name)}`);
}

function removeTree(dir: string): void {
  for (const e of safeReaddir(dir)) removeTree(join(dir, e));
  try {
    rmdirSync(dir);
  } catch {
    // busy or gone
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Sub-cgroup directories of dir (cgroupfs lists its control files as regular files). */
function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

function tryWrite(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    return false;
  }
}
