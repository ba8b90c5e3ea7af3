// A description of the machine a run came from, stored with its figures: the numbers mean little
// without it, and the ratios to the same-run floors are what carries across machines.

import os from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  loadAverage: number[];
  platform: string;
  kernel: string;
  node: string;
  date: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryBytes: os.totalmem(),
    loadAverage: os.loadavg().map((v) => Math.round(v * 100) / 100),
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    node: process.version,
    date: new Date().toISOString(),
  };
}
