// A measurement window inside a measured process: CPU time from process.cpuUsage() (microsecond
// resolution, this process only), named counters and lateness samples, all since the last begin().

import { distribution, type Distribution } from './stats.js';

export interface WindowReport {
  wallMs: number;
  /** user+sys CPU seconds of this process during the window. */
  cpuS: number;
  cpuUserS: number;
  cpuSysS: number;
  counters: Record<string, number>;
  /** Actual start minus due time, ms, of every scheduled action in the window. */
  lateness: Distribution;
}

export class MeasureWindow {
  private startCpu = process.cpuUsage();
  private startWall = performance.now();
  private counters: Record<string, number> = {};
  private lateness: number[] = [];

  begin(): void {
    this.counters = {};
    this.lateness = [];
    this.startWall = performance.now();
    this.startCpu = process.cpuUsage();
  }

  count(name: string, by = 1): void {
    this.counters[name] = (this.counters[name] ?? 0) + by;
  }

  late(ms: number): void {
    this.lateness.push(ms);
  }

  read(): WindowReport {
    const cpu = process.cpuUsage(this.startCpu);
    const wallMs = performance.now() - this.startWall;
    return {
      wallMs,
      cpuS: (cpu.user + cpu.system) / 1e6,
      cpuUserS: cpu.user / 1e6,
      cpuSysS: cpu.system / 1e6,
      counters: { ...this.counters },
      lateness: distribution(this.lateness),
    };
  }
}
