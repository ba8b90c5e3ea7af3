// Signals to a container's process group and the exit code the runtime reports for a process:
// its own code, or 128 + the signal number when a signal ended it (SIGKILL → 137, SIGTERM → 143).

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
 * Waits, in real time, until no process of the group is left. Members outside our own children are
 * reaped by init, so this polls; it gives up after maxMs and reports whether the group is gone.
 */
export async function waitGroupGone(pgid: number, maxMs = 2000): Promise<boolean> {
  let waited = 0;
  let step = 1;
  while (signalGroup(pgid, 0)) {
    if (waited >= maxMs) return false;
    await sleep(step);
    waited += step;
    step = Math.min(step * 2, 50);
  }
  return true;
}
