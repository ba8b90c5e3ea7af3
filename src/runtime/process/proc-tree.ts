// A container's processes found from /proc where no cgroup can hold them: descendants of its main and
// exec processes (by parent pid), members of their process groups and sessions, and whatever still
// holds their stdout/stderr — which catches children that `setsid` away and are reparented to init.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** One letter: R, S, D, Z (zombie: dead, waiting for its parent to reap it), … */
  state: string;
  /** Clock ticks since boot at which the process started: tells a reused pid apart. */
  startTime: string;
}

/** Parses `/proc/<pid>/stat` (the command name may hold spaces and parentheses). */
export function parseStat(text: string): ProcEntry | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number(text.slice(0, text.indexOf(' ')));
  const f = text.slice(close + 2).split(' ');
  // After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice num_threads itrealvalue starttime
  if (f.length < 20) return undefined;
  return { pid, state: f[0]!, ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), startTime: f[19]! };
}

/** Every process visible in /proc. */
export function readProcTable(procRoot = '/proc'): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch {
    return table;
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const e = parseStat(readFileSync(`${procRoot}/${n}/stat`, 'utf8'));
      // A zombie runs nothing and cannot be killed; its parent (or init) reaps it.
      if (e && e.state !== 'Z') table.set(e.pid, e);
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/** The entry of one process, undefined when it is gone. */
export function readProcEntry(pid: number, procRoot = '/proc'): ProcEntry | undefined {
  try {
    return parseStat(readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The descendants of pid (children, theirs, …) from the kernel's per-task children lists, reading
 * only that subtree rather than every process; undefined where the kernel keeps no such lists
 * (CONFIG_PROC_CHILDREN unset), so the caller falls back to readProcTable.
 */
export function childrenTree(pid: number, procRoot = '/proc'): number[] | undefined {
  const out: number[] = [];
  const seen = new Set<number>([pid]);
  const queue = [pid];
  while (queue.length) {
    const p = queue.pop()!;
    let tids: string[];
    try {
      tids = readdirSync(`${procRoot}/${p}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tids) {
      let text: string;
      try {
        text = readFileSync(`${procRoot}/${p}/task/${tid}/children`, 'utf8');
      } catch (err) {
        if (p === pid && (err as NodeJS.ErrnoException).code === 'ENOENT' && tid === String(pid)) {
          // The task is there but has no children file: the kernel does not provide them.
          try {
            readdirSync(`${procRoot}/${p}/task/${tid}`);
            return undefined;
          } catch {
            // the task exited meanwhile
          }
        }
        continue;
      }
      for (const c of text.split(/\s+/)) {
        if (!c) continue;
        const n = Number(c);
        if (Number.isInteger(n) && n > 0 && !seen.has(n)) {
          seen.add(n);
          out.push(n);
          queue.push(n);
        }
      }
    }
  }
  return out;
}

/** The stdout/stderr of pid as /proc names them (`pipe:[n]`, `socket:[n]`): shared by whatever inherits them. */
export function stdioTargets(pid: number, procRoot = '/proc'): string[] {
  return pipesAndSockets(pid, ['1', '2'], procRoot);
}

/** The pipes and sockets among a process's descriptors `fds` (gone or closed ones are skipped). */
function pipesAndSockets(pid: number, fds: readonly string[], procRoot: string): string[] {
  const out: string[] = [];
  for (const fd of fds) {
    try {
      const t = readlinkSync(`${procRoot}/${pid}/fd/${fd}`);
      if (t.startsWith('pipe:') || t.startsWith('socket:')) out.push(t);
    } catch {
      // gone, or closed meanwhile
    }
  }
  return out;
}

/**
 * Reads of /proc shared by every tracker of a runtime: the process table, and which processes hold
 * each pipe or socket as a descriptor, read at most once per turn of the event loop. Stopping N
 * containers together made N reads of every process's stat and descriptors — quadratic in the pods
 * (400 pods: ~14 s of teardown CPU; 1000: over two minutes). A snapshot is as fresh as a read made
 * by the tracker itself at the start of its turn; a kill loop sleeps between passes, so each pass
 * still sees a table read after its previous kills.
 */
export class ProcSnapshots {
  private current: { table: Map<number, ProcEntry>; holders?: Map<string, number[]> } | undefined;

  constructor(readonly procRoot = '/proc') {}

  /** Every process visible in /proc (readProcTable), as read in this turn. */
  table(): Map<number, ProcEntry> {
    return this.snapshot().table;
  }

  /** The pids of the table's processes holding each pipe or socket (`pipe:[n]`) as a descriptor. */
  holders(): Map<string, number[]> {
    const s = this.snapshot();
    if (!s.holders) {
      s.holders = new Map();
      for (const pid of s.table.keys()) {
        for (const target of descriptorTargets(pid, this.procRoot)) {
          const list = s.holders.get(target);
          if (!list) s.holders.set(target, [pid]);
          else if (list[list.length - 1] !== pid) list.push(pid);
        }
      }
    }
    return s.holders;
  }

  /** The next read is a fresh one: a process was just started, which this turn's snapshot lacks. */
  invalidate(): void {
    this.current = undefined;
  }

  private snapshot() {
    if (!this.current) {
      this.current = { table: readProcTable(this.procRoot) };
      setImmediate(() => (this.current = undefined));
    }
    return this.current;
  }
}

/** The pipes and sockets a process holds as descriptors. */
function descriptorTargets(pid: number, procRoot: string): string[] {
  try {
    return pipesAndSockets(pid, readdirSync(`${procRoot}/${pid}/fd`), procRoot);
  } catch {
    return [];
  }
}

/**
 * Tracks one container's processes. Roots are its main process and its execs (each a process group
 * and session leader); `scan` adds every process related to a tracked one, so a child recorded once
 * stays tracked after its parent exits. `killAll` scans and SIGKILLs until nothing is left.
 */
export class ProcTreeTracker {
  private readonly tracked = new Map<number, string>();
  private readonly groups = new Set<number>();
  /** stdout/stderr names, each with how many roots recorded it (execs share none, but be exact). */
  private readonly stdio = new Map<string, number>();
  private readonly rootStdio = new Map<number, string[]>();

  private readonly procRoot: string;

  constructor(private readonly snapshots = new ProcSnapshots()) {
    this.procRoot = snapshots.procRoot;
  }

  /** Starts tracking a freshly spawned group leader (container main process or exec). */
  addRoot(pid: number): void {
    this.addGroup(pid);
    this.scan();
  }

  /**
   * Stops following a root whose process group is gone (an exec that ended): its pgid may be reused.
   * With pipesClosed, its stdout/stderr are dropped too. What was tracked by pid stays tracked.
   */
  forgetRoot(pid: number, pipesClosed: boolean): void {
    this.groups.delete(pid);
    const targets = this.rootStdio.get(pid) ?? [];
    this.rootStdio.delete(pid);
    // Still held by something it left behind: those stay, for as long as the container runs.
    if (!pipesClosed) return;
    for (const t of targets) {
      const n = (this.stdio.get(t) ?? 1) - 1;
      if (n > 0) this.stdio.set(t, n);
      else this.stdio.delete(t);
    }
    this.rootStdio.delete(pid);
  }

  private addGroup(pid: number): void {
    this.snapshots.invalidate();
    this.groups.add(pid);
    const targets = stdioTargets(pid, this.procRoot);
    for (const t of targets) this.stdio.set(t, (this.stdio.get(t) ?? 0) + 1);
    this.rootStdio.set(pid, targets);
  }

  /**
   * As addRoot, for a group leader spawned an instant ago whose descendants the caller read with
   * childrenTree: no scan of every process. The leader itself is found again by its group on every
   * scan; what it forked already is tracked by pid, so it stays tracked after it leaves the group.
   */
  addFreshRoot(pid: number, descendants: readonly number[]): void {
    this.addGroup(pid);
    for (const p of descendants) {
      const e = readProcEntry(p, this.procRoot);
      if (e && e.state !== 'Z') this.tracked.set(p, e.startTime);
    }
  }

  /** The processes tracked and alive after a scan (of this turn's snapshot of /proc). */
  scan(withStdio = false): number[] {
    const table = this.snapshots.table();
    // Forget the dead and the reused.
    for (const [pid, start] of this.tracked) if (table.get(pid)?.startTime !== start) this.tracked.delete(pid);
    const add = (e: ProcEntry) => this.tracked.set(e.pid, e.startTime);
    for (const e of table.values()) {
      if (this.groups.has(e.pid) || this.groups.has(e.pgid) || this.groups.has(e.sid)) add(e);
    }
    if (withStdio && this.stdio.size > 0) {
      const holders = this.snapshots.holders();
      for (const target of this.stdio.keys()) {
        for (const pid of holders.get(target) ?? []) {
          const e = table.get(pid);
          if (e && !this.tracked.has(pid)) add(e);
        }
      }
    }
    // Descendants of anything tracked, to a fixed point (children listed before their parents).
    let grew = true;
    while (grew) {
      grew = false;
      for (const e of table.values()) {
        if (!this.tracked.has(e.pid) && this.tracked.has(e.ppid) && e.pid !== process.pid) {
          add(e);
          grew = true;
        }
      }
    }
    this.tracked.delete(process.pid);
    return [...this.tracked.keys()];
  }

  /** SIGKILLs every tracked process now, after a full scan. */
  killSync(): number {
    const pids = this.scan(true);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, or not ours to kill
      }
    }
    return pids.length;
  }

  /**
   * SIGKILLs what this tracker already names, reading nothing of other processes: its roots' process
   * groups, the processes it tracks by pid (start time checked, so a reused pid is spared) and their
   * descendants (the kernel's children lists). Returns how many live ones it found. For a container
   * whose cgroup holds the rest: the cost does not grow with the processes of the host.
   */
  killKnownSync(): number {
    for (const g of this.groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // gone, or not ours to kill
      }
    }
    const live = new Set<number>();
    for (const [pid, start] of this.tracked) {
      const e = readProcEntry(pid, this.procRoot);
      if (!e || e.startTime !== start) this.tracked.delete(pid);
      else if (e.state !== 'Z') live.add(pid);
    }
    for (const pid of [...live]) for (const p of childrenTree(pid, this.procRoot) ?? []) live.add(p);
    live.delete(process.pid);
    for (const pid of live) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    return live.size;
  }

  /** As killAll, with killKnownSync's passes. */
  killKnown(maxMs = 5000): Promise<boolean> {
    return killUntilNone(() => this.killKnownSync(), maxMs);
  }

  /** Kills until a scan finds nothing left (or maxMs passes); resolves whether all are gone. */
  killAll(maxMs = 5000): Promise<boolean> {
    return killUntilNone(() => this.killSync(), maxMs);
  }
}

/** Runs a kill pass until one finds nothing alive (or maxMs passes); resolves whether it did. */
async function killUntilNone(pass: () => number, maxMs: number): Promise<boolean> {
  let waited = 0;
  let step = 1;
  for (;;) {
    if (pass() === 0) return true;
    if (waited >= maxMs) return false;
    await sleep(step);
    waited += step;
    step = Math.min(step * 2, 50);
  }
}
