// Signals to a container's process group and the exit code the runtime reports for a process:
// its own code, or 128 + the signal number when a signal ended it (SIGKILL → 137, SIGTERM → 143).

import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** 128 + signal number for a signal exit, else the exit code. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal) return 128 + (constants.signals[signal] ?? 0);
  return 128;
}

/** True when sig names a signal this platform knows. */
export function isKnownSignal(sig: string): sig is NodeJS.Signals {
  return Object.prototype.hasOwnProperty.call(constants.signals, sig);
}

/** Sends sig to every process of the group; false when the group no longer exists. */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    // EPERM: a member changed credentials (setuid); nothing more this agent can do to it.
    if (code === 'EPERM') return true;
    throw err;
  }
}

/**
 * True while some member of the group is more than a zombie. A group whose members all exited
 * still answers signals until their parent (init, for orphans) reaps them, which a host may do late;
 * a group of zombies runs nothing, so it counts as stopped. Reads /proc (fields 3 and 5 of stat).
 */
export function groupHasLiveMember(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => n.charCodeAt(0) >= 48 && n.charCodeAt(0) <= 57);
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

/**
 * Waits, in real time, until no process of the group is left running. Members outside our own
 * children are reaped by init, so this polls (zombies count as gone: see groupHasLiveMember); it
 * gives up after maxMs and reports whether the group is gone.
 */
export async function waitGroupGone(pgid: number, maxMs = 2000): Promise<boolean> {
  let waited = 0;
  let step = 1;
  // The cheap check first; /proc is read only for a group that still answers after a few polls.
  while (waited < 8 ? signalGroup(pgid, 0) : groupHasLiveMember(pgid)) {
    if (waited >= maxMs) return false;
    await sleep(step);
    waited += step;
    step = Math.min(step * 2, 50);
  }
  return true;
}
