// The eviction manager's memory.available and pid.available signals (pkg/kubelet/eviction: the
// MemoryPressure and PIDPressure node conditions). memory.available is the node's memory capacity
// less its working set (usage less inactive file pages), as the kubelet's summary gives it;
// pid.available is the node's PID limit (the lower of kernel.pid_max and kernel.threads-max) less
// the tasks running (the kubelet's rlimit stats). Hard thresholds from --eviction-hard; the kubelet's
// default is memory.available<100Mi, and pid.available has none.

import { readFileSync } from 'node:fs';

/** One hard threshold: a signal below a quantity or a percentage of its capacity. */
export type ThresholdValue = { bytes: number } | { percent: number };

/** The kubelet's default hard threshold of memory.available. */
export const DEFAULT_MEMORY_AVAILABLE_BYTES = 100 * 1024 ** 2;

export interface ResourceThresholds {
  /** memory.available; 100Mi by default. */
  memoryAvailable?: ThresholdValue;
  /** pid.available; none by default. */
  pidAvailable?: ThresholdValue;
}

/** What the node's memory and tasks are now (either undefined when it cannot be read). */
export interface ResourceObservation {
  memory?: { capacityBytes: number; workingSetBytes: number };
  pids?: { maxPID: number; running: number };
}

/** /proc/meminfo's fields in bytes. */
function meminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * (line.trimEnd().endsWith('kB') ? 1024 : 1);
  }
  return out;
}

/**
 * The host now, as the kubelet's summary of the root cgroup shows it: capacity MemTotal, working set
 * what is in use (MemTotal less MemFree) less the inactive file pages; tasks from /proc/loadavg.
 */
export function observeHostResources(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): ResourceObservation {
  const out: ResourceObservation = {};
  try {
    const m = meminfo(read('/proc/meminfo'));
    const total = m.MemTotal ?? 0;
    const usage = total - (m.MemFree ?? 0);
    if (total > 0) out.memory = { capacityBytes: total, workingSetBytes: Math.max(0, usage - (m['Inactive(file)'] ?? 0)) };
  } catch {
    // no memory signal
  }
  try {
    const maxPID = Math.min(Number(read('/proc/sys/kernel/pid_max').trim()), Number(read('/proc/sys/kernel/threads-max').trim()));
    const running = Number(/^\S+ \S+ \S+ \d+\/(\d+)/.exec(read('/proc/loadavg'))?.[1]);
    if (Number.isFinite(maxPID) && Number.isFinite(running)) out.pids = { maxPID, running };
  } catch {
    // no PID signal
  }
  return out;
}

const asked = (capacity: number, t: ThresholdValue) => ('bytes' in t ? t.bytes : (capacity * t.percent) / 100);

/** A signal's threshold and what was available of it in an observation (getThresholdMetInfo), for the eviction message. */
export function resourceThresholdMet(o: ResourceObservation, t: ResourceThresholds, signal: string): { quantity: number; available: number } | undefined {
  if (signal === 'memory.available' && o.memory) {
    return {
      quantity: asked(o.memory.capacityBytes, t.memoryAvailable ?? { bytes: DEFAULT_MEMORY_AVAILABLE_BYTES }),
      available: o.memory.capacityBytes - o.memory.workingSetBytes,
    };
  }
  if (signal === 'pid.available' && o.pids && t.pidAvailable)
    return { quantity: asked(o.pids.maxPID, t.pidAvailable), available: o.pids.maxPID - o.pids.running };
  return undefined;
}

/** The signals of an observation that crossed their thresholds: memory.available, pid.available. */
export function crossedResourceSignals(o: ResourceObservation, t: ResourceThresholds): string[] {
  const out: string[] = [];
  if (o.memory) {
    const available = o.memory.capacityBytes - o.memory.workingSetBytes;
    if (available < asked(o.memory.capacityBytes, t.memoryAvailable ?? { bytes: DEFAULT_MEMORY_AVAILABLE_BYTES })) out.push('memory.available');
  }
  if (o.pids && t.pidAvailable && o.pids.maxPID - o.pids.running < asked(o.pids.maxPID, t.pidAvailable)) out.push('pid.available');
  return out;
}

/** The node condition each signal brings (signalToNodeCondition). */
export const conditionOfSignal: Readonly<Record<string, string>> = {
  'memory.available': 'MemoryPressure',
  'pid.available': 'PIDPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
};

/** The node's memory and PID signals, observed afresh at each question. */
export class ResourcePressureObserver {
  /** @param read what the node holds now (the host's /proc when unset; tests give their own) */
  constructor(
    readonly thresholds: ResourceThresholds = {},
    private readonly read: () => ResourceObservation = observeHostResources,
  ) {}

  /** What the node holds now. */
  observe(): ResourceObservation {
    return this.read();
  }

  /** The signals crossed now; what cannot be read counts as no pressure. */
  crossed(): string[] {
    return crossedResourceSignals(this.read(), this.thresholds);
  }
}
