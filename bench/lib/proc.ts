// Readers for what /proc knows about a measured process (RSS, CPU ticks) and the host (TIME_WAIT
// sockets, resource limits). Read from outside the process so a figure never depends on its honesty.

import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export interface MemorySample {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size, bytes. */
  hwm: number;
}

function statusField(text: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : NaN;
}

export function readMemory(pid: number): MemorySample {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rss: statusField(text, 'VmRSS'), hwm: statusField(text, 'VmHWM') };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

/**
 * The runtime service and its process spawner (a child titled `podvisor-spawner`, where perl is
 * installed): the processes whose CPU and memory are the service's.
 */
export function runtimeServiceProcesses(servicePid: number): number[] {
  const out = [servicePid];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== servicePid) continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')[0] === 'podvisor-spawner') out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** user+sys seconds of these processes together (each its own, not its children's). */
export function cpuOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + readCpu(pid).self, 0);
}

/** RSS and peak RSS of these processes together, bytes. */
export function memoryOf(pids: readonly number[]): MemorySample {
  return pids.map(readMemory).reduce((a, b) => ({ rss: a.rss + b.rss, hwm: a.hwm + b.hwm }), { rss: 0, hwm: 0 });
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export interface CpuSample {
  /** user+sys seconds of the process itself. */
  self: number;
  /** user+sys seconds of its reaped children. */
  children: number;
}

export function readCpu(pid: number): CpuSample {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i - 3]);
    const hz = ticksPerSecond();
    return { self: (n(14) + n(15)) / hz, children: (n(16) + n(17)) / hz };
  } catch {
    return { self: NaN, children: NaN };
  }
}

/** TCP sockets in TIME_WAIT whose local or remote port is one of ports (IPv4 and IPv6). */
export function countTimeWait(ports: readonly number[]): number {
  const wanted = new Set(ports);
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== '06') continue;
      const local = parseInt(cols[1]!.split(':')[1]!, 16);
      const remote = parseInt(cols[2]!.split(':')[1]!, 16);
      if (wanted.has(local) || wanted.has(remote)) count++;
    }
  }
  return count;
}

export interface Limits {
  openFiles: number;
  processes: number;
}

/** Soft limits this process (and so every child it starts) runs under; Infinity when unlimited. */
export function readLimits(): Limits {
  const parse = (text: string, name: string) => {
    const m = new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(text);
    if (!m || m[1] === 'unlimited') return Infinity;
    return Number(m[1]);
  };
  try {
    const text = readFileSync('/proc/self/limits', 'utf8');
    return { openFiles: parse(text, 'Max open files'), processes: parse(text, 'Max processes') };
  } catch {
    return { openFiles: Infinity, processes: Infinity };
  }
}
