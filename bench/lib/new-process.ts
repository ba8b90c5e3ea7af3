// Restart latency as a supervisor's user sees it: from killing a process to the moment a new process
// with the same command line exists, found by looking at the pids /proc gains (only those), about
// every millisecond, so the figure is the same measure for podvisor, pm2 and the floor.

import { readdirSync, readFileSync } from 'node:fs';
import { preciseNow } from './stats.js';

function pids(): number[] {
  return readdirSync('/proc')
    .filter((e) => e.charCodeAt(0) >= 48 && e.charCodeAt(0) <= 57)
    .map(Number);
}

/** The command line, with the program by its base name (pm2 runs `sleep` as `/usr/bin/sleep`). */
function cmdline(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').split('\0');
    argv[0] = argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1);
    return argv.join(' ');
  } catch {
    return undefined;
  }
}

/** The pid of the running process whose command line is cmd (the program by its base name). */
export function findProcess(cmd: string): number | undefined {
  for (const pid of pids()) if (cmdline(pid) === cmd) return pid;
  return undefined;
}

/**
 * SIGKILLs the process of each command line, and resolves to the ms from the kill until a new
 * process with that command line appeared, per command (NaN when none did within timeoutMs).
 */
export async function killAndTimeRestart(cmds: readonly string[], timeoutMs = 30_000): Promise<number[]> {
  const before = new Set(pids());
  const victims = cmds.map((c) => findProcess(c));
  const found = cmds.map(() => NaN);
  const t0 = preciseNow();
  for (const pid of victims) if (pid !== undefined) process.kill(pid, 'SIGKILL');
  const seen = new Set(before);
  while (found.some(Number.isNaN) && preciseNow() - t0 < timeoutMs) {
    for (const pid of pids()) {
      if (seen.has(pid)) continue;
      const cmd = cmdline(pid);
      const i = cmd === undefined ? -1 : cmds.indexOf(cmd);
      if (i >= 0 && Number.isNaN(found[i]!)) found[i] = preciseNow() - t0;
      // A forked child shows its parent's command line (or title: pm2's daemon names itself) until
      // it execs, and none while it does: every new pid is looked at again until the end.
      if (i >= 0) seen.add(pid);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  return found;
}
