// CPU time and resident memory of process groups, read from /proc in one pass: the usage of a
// runtime's containers where they are host processes (RuntimeCapabilities.hostProcesses), for
// /metrics/resource, /stats/summary and pod metrics. Resident set size stands in for the working set.

import { readdir, readFile } from 'node:fs/promises';

/** USER_HZ on Linux. */
const CLOCK_TICKS_PER_SECOND = 100;
const PAGE_SIZE = 4096;

export interface GroupUsage {
  /** Cumulative CPU time of the group's live processes, in nanoseconds. */
  cpuNanos: number;
  rssBytes: number;
  /** The group's live processes. */
  processes: number;
}

/** Usage of each wanted process group (absent from the result when none of its processes lives). */
export async function processGroupUsage(pgids: ReadonlySet<number>): Promise<Map<number, GroupUsage>> {
  const out = new Map<number, GroupUsage>();
  if (pgids.size === 0) return out;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return out;
  }
  await Promise.all(
    entries
      .filter((e) => /^[0-9]+$/.test(e))
      .map(async (pid) => {
        let stat: string;
        try {
          stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        } catch {
          return;
        }
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const pgrp = Number(f[2]);
        if (!pgids.has(pgrp)) return;
        const ticks = Number(f[11]) + Number(f[12]);
        const rss = Number(f[21]) * PAGE_SIZE;
        const u = out.get(pgrp) ?? { cpuNanos: 0, rssBytes: 0, processes: 0 };
        u.cpuNanos += (ticks / CLOCK_TICKS_PER_SECOND) * 1e9;
        u.rssBytes += rss;
        u.processes += 1;
        out.set(pgrp, u);
      }),
  );
  return out;
}

/** The host's CPU time (all CPUs, non-idle) in nanoseconds and memory in use, from /proc. */
export async function nodeUsage(): Promise<{ cpuNanos: number; memoryBytes: number } | undefined> {
  try {
    const [stat, meminfo] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/meminfo', 'utf8')]);
    const cpu = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const busy = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
    return { cpuNanos: (busy / CLOCK_TICKS_PER_SECOND) * 1e9, memoryBytes: kb('MemTotal') - kb('MemAvailable') };
  } catch {
    return undefined;
  }
}
