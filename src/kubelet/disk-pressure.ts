// The eviction manager's nodefs signals for the root dir's file system (pkg/kubelet/eviction: the
// hard thresholds of --eviction-hard, the DiskPressure node condition, and its admit handler, which
// refuses new pods with reason Evicted while the node has the condition).

import { statfsSync } from 'node:fs';
import type { Pod } from '../api/types.js';
import { configSourceAnnotation } from '../api/defaults.js';
import { parseQuantity } from '../api/quantity.js';
import type { AdmitResult } from './types.js';
import { tolerates } from '../api/tolerations.js';
import { getPodQOS } from '../status/qos.js';
import type { ResourceThresholds, ThresholdValue } from './resource-pressure.js';

export type { ThresholdValue } from './resource-pressure.js';

/** The eviction manager's reason and message for a pod refused under a node condition (eviction/helpers.go). */
export const EVICTED_REASON = 'Evicted';
export const nodeConditionMessage = (conditions: readonly string[]) => `The node had condition: [${conditions.join(' ')}]. `;

/** The taint the node lifecycle controller puts on a node with the DiskPressure condition. */
export const DISK_PRESSURE_TAINT = { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' } as const;
/** The taint the node lifecycle controller puts on a node with the MemoryPressure condition. */
export const MEMORY_PRESSURE_TAINT = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' } as const;

/**
 * The nodefs hard thresholds: what is free of the root dir's file system below which it is under
 * pressure; with them, how long the eviction manager keeps the condition once they are met no more.
 */
export interface DiskThresholds {
  /** nodefs.available; the default is 10% of the file system, never more than 1 GiB. */
  available?: ThresholdValue;
  /** nodefs.inodesFree; 5% by default. */
  inodesFree?: ThresholdValue;
  /** --eviction-pressure-transition-period in ms; the kubelet's 5 min when unset. */
  pressureTransitionPeriodMs?: number;
}

/** The kubelet's nodefs.available default is 10%; on a shared disk podvisor asks no more than this. */
export const DEFAULT_AVAILABLE_CAP_BYTES = 1024 ** 3;
const DEFAULT_AVAILABLE_PERCENT = 10;
const DEFAULT_INODES_FREE_PERCENT = 5;

const signals = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'pid.available'] as const;

/** Every hard threshold of --eviction-hard: the root dir's nodefs ones and the node's memory and PID ones. */
export type EvictionThresholds = DiskThresholds & ResourceThresholds;

/**
 * The value of --eviction-hard (`memory.available<100Mi,nodefs.available<500Mi,pid.available<5%`):
 * each signal podvisor observes, below a quantity or a percentage. A signal left out keeps its
 * default. Throws with the reason on a bad entry.
 */
export function parseEvictionHard(raw: string): EvictionThresholds {
  const out: EvictionThresholds = {};
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z.]+)<(.+)$/.exec(entry);
    if (!m) throw new Error(`"${entry}" is not of the form signal<value`);
    const [, signal, value] = m as unknown as [string, string, string];
    if (!(signals as readonly string[]).includes(signal)) throw new Error(`unsupported eviction signal "${signal}": podvisor observes ${signals.join(', ')}`);
    const v = thresholdValue(value.trim(), signal === 'nodefs.inodesFree' || signal === 'pid.available');
    if (signal === 'nodefs.available') out.available = v;
    else if (signal === 'nodefs.inodesFree') out.inodesFree = v;
    else if (signal === 'memory.available') out.memoryAvailable = v;
    else out.pidAvailable = v;
  }
  return out;
}

function thresholdValue(value: string, count: boolean): ThresholdValue {
  if (value.endsWith('%')) {
    const percent = Number(value.slice(0, -1));
    if (!/^[0-9.]+%$/.test(value) || !Number.isFinite(percent) || percent < 0 || percent > 100) throw new Error(`invalid percentage "${value}"`);
    return { percent };
  }
  let bytes: number;
  try {
    bytes = Number(parseQuantity(value).value());
  } catch {
    throw new Error(`invalid quantity "${value}"`);
  }
  if (!Number.isFinite(bytes) || bytes < 0) throw new Error(`invalid quantity "${value}"`);
  return count ? { bytes: Math.round(bytes) } : { bytes };
}

/** What statfs tells of the root dir's file system. */
export interface DiskObservation {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

/** The file system of dir, as the eviction manager's summary reads it (available: what an unprivileged writer may use). */
export function observeDisk(dir: string): DiskObservation {
  const s = statfsSync(dir);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
}

/** What a threshold asks of a signal, in its unit (evictionapi.GetThresholdQuantity). */
const asked = (capacity: number, t: ThresholdValue) => ('bytes' in t ? t.bytes : (capacity * t.percent) / 100);

/** The threshold of nodefs.available for an observation: the given one, or 10% capped at 1 GiB. */
const availableThreshold = (o: DiskObservation, t: DiskThresholds): ThresholdValue =>
  t.available ?? { bytes: Math.min(DEFAULT_AVAILABLE_CAP_BYTES, (o.capacityBytes * DEFAULT_AVAILABLE_PERCENT) / 100) };

/** The signals of an observation that crossed their thresholds (empty: no pressure). */
export function crossedSignals(o: DiskObservation, t: DiskThresholds): string[] {
  const out: string[] = [];
  if (o.capacityBytes > 0 && o.availableBytes < asked(o.capacityBytes, availableThreshold(o, t))) out.push('nodefs.available');
  // A file system without an inode count (btrfs reports 0) has no inode signal.
  if (o.inodes > 0 && o.inodesFree < asked(o.inodes, t.inodesFree ?? { percent: DEFAULT_INODES_FREE_PERCENT })) out.push('nodefs.inodesFree');
  return out;
}

/** A signal's threshold and what is available of it (getThresholdMetInfo), for the eviction message. */
export function thresholdMetInfo(o: DiskObservation, t: DiskThresholds, signal: string): { quantity: number; available: number } {
  if (signal === 'nodefs.inodesFree')
    return { quantity: Math.floor(asked(o.inodes, t.inodesFree ?? { percent: DEFAULT_INODES_FREE_PERCENT })), available: o.inodesFree };
  return { quantity: Math.floor(asked(o.capacityBytes, availableThreshold(o, t))), available: o.availableBytes };
}

/** The DiskPressure signals of the root dir's file system, observed afresh at each question. */
export class DiskPressureObserver {
  /**
   * @param read what the file system holds now (statfs of the root dir when unset; tests give their
   *   own source)
   */
  constructor(
    private readonly rootDir: string,
    readonly thresholds: DiskThresholds = {},
    private readonly read: (dir: string) => DiskObservation = observeDisk,
  ) {}

  /** The file system now; undefined when it cannot be read (the root dir gone). */
  observe(): DiskObservation | undefined {
    try {
      return this.read(this.rootDir);
    } catch {
      return undefined;
    }
  }

  /** The signals crossed now; a file system that cannot be read counts as no pressure. */
  crossed(): string[] {
    const o = this.observe();
    return o ? crossedSignals(o, this.thresholds) : [];
  }

  /** The node conditions the eviction manager holds now: DiskPressure, or none. */
  conditions(): string[] {
    return this.crossed().length > 0 ? ['DiskPressure'] : [];
  }
}

/** kubelettypes.IsCriticalPod: a static or mirror pod, or one of system-critical priority. */
export function isCriticalPod(pod: Pod): boolean {
  const annotations = pod.metadata?.annotations ?? {};
  const source = annotations[configSourceAnnotation];
  if ((source !== undefined && source !== 'api') || annotations['kubernetes.io/config.mirror'] !== undefined) return true;
  const priority = (pod.spec as { priority?: number } | undefined)?.priority;
  return priority !== undefined && priority >= 2_000_000_000;
}

/**
 * The eviction manager's Admit: under a node condition, every pod but a critical one is refused —
 * except that under MemoryPressure alone a pod that is not BestEffort, or that tolerates the
 * memory-pressure taint, is admitted.
 */
export function evictionAdmit(pod: Pod, conditions: readonly string[]): AdmitResult {
  if (conditions.length === 0 || isCriticalPod(pod)) return { admit: true };
  if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
    if (getPodQOS(pod) !== 'BestEffort') return { admit: true };
    if ((pod.spec?.tolerations ?? []).some((t) => tolerates(t, MEMORY_PRESSURE_TAINT))) return { admit: true };
  }
  return { admit: false, reason: EVICTED_REASON, message: nodeConditionMessage(conditions) };
}
