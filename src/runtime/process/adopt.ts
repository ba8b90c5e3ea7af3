// Recognising a process again after the runtime restarted: a pid is the same process only if its
// start time (/proc/<pid>/stat field 22) and the boot match what was recorded, so a recycled pid is
// never mistaken for a container. Processes the runtime did not spawn itself cannot be waited for;
// ExitWatcher polls them instead.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { setLongTimeout } from '../../util/timer.js';

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // fields[0] is field 3 (state); field N is fields[N - 3].
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** The process's start time in clock ticks since boot, or undefined when there is no such process. */
export function procStartTime(pid: number): string | undefined {
  return statFields(pid)?.[22 - 3];
}

let cachedBootId: string | undefined;

/** This boot's id (a pid and start time only identify a process within one boot). */
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/**
 * 'running' when pid is still the process that started at startTime in this boot; 'gone' when it
 * exited (a zombie counts as exited: only its parent's reaping is left), or the pid now names
 * another process.
 */
export function processState(pid: number, startTime: string, boot: string = bootId()): 'running' | 'gone' {
  if (boot !== bootId()) return 'gone';
  const f = statFields(pid);
  if (!f || f[22 - 3] !== startTime) return 'gone';
  return f[0] === 'Z' || f[0] === 'X' ? 'gone' : 'running';
}

/** Delays of the polls that follow a sign of an exit (ExitWatcher.pollSoon). */
const SOON_MS = [10, 50, 200, 500];

/**
 * Polls a set of processes (one timer for all) and calls each one's callback once it is gone. The
 * sweep is slow (every intervalMs, one /proc read per process): the caller polls at once on what
 * tells of an exit (a container's output reaching end-of-file, a signal sent), see pollSoon.
 */
export class ExitWatcher {
  private readonly watched = new Map<number, { startTime: string; onGone: () => void }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 2000) {}

  /**
   * Polls now and a few times over the next half second: a process whose output just closed is
   * still finishing its exit for an instant before /proc shows it gone.
   */
  pollSoon(): void {
    this.poll();
    for (const ms of SOON_MS) setLongTimeout(() => this.poll(), ms, { ref: false });
  }

  /** Watches pid; returns the function that stops watching it. */
  watch(pid: number, startTime: string, onGone: () => void): () => void {
    const entry = { startTime, onGone };
    this.watched.set(pid, entry);
    this.timer ??= setInterval(() => this.poll(), this.intervalMs);
    // A process that is gone already is reported on the next poll, never synchronously.
    return () => {
      if (this.watched.get(pid) === entry) this.watched.delete(pid);
      this.stopIfIdle();
    };
  }

  /** Checks now (e.g. right after a signal was sent). */
  poll(): void {
    for (const [pid, w] of [...this.watched]) {
      if (processState(pid, w.startTime) === 'gone') {
        this.watched.delete(pid);
        w.onGone();
      }
    }
    this.stopIfIdle();
  }

  close(): void {
    this.watched.clear();
    this.stopIfIdle();
  }

  private stopIfIdle(): void {
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/**
 * The process a runtime spawned with these output FIFOs as its stdout/stderr, when it died before
 * recording the pid: every process holding one of them is the container's (the FIFOs are its own);
 * its main process is the group leader among them (it was spawned in a session of its own) that
 * started first. undefined when none runs any more, or the files are gone.
 */
export function findSpawned(fifos: string[]): { pid: number; startTime: string } | undefined {
  const inodes = new Set<string>();
  for (const f of fifos) {
    try {
      const st = statSync(f);
      inodes.add(`${st.dev}:${st.ino}`);
    } catch {
      // not made yet: nothing can hold it
    }
  }
  if (inodes.size === 0) return undefined;
  let best: { pid: number; startTime: string; leader: boolean } | undefined;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (!holdsAny(pid, inodes)) continue;
    const f = statFields(pid);
    if (!f || f[0] === 'Z' || f[0] === 'X') continue;
    const startTime = f[22 - 3]!;
    const leader = Number(f[5 - 3]) === pid;
    const better = !best || (leader && !best.leader) || (leader === best.leader && BigInt(startTime) < BigInt(best.startTime));
    if (better) best = { pid, startTime, leader };
  }
  return best && { pid: best.pid, startTime: best.startTime };
}

function holdsAny(pid: number, inodes: Set<string>): boolean {
  for (const fd of [1, 2]) {
    try {
      const st = statSync(`/proc/${pid}/fd/${fd}`);
      if (inodes.has(`${st.dev}:${st.ino}`)) return true;
    } catch {
      // gone, or no such descriptor
    }
  }
  return false;
}
