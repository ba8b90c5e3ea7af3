// The probe history: what every probe worker saw and did, per pod — each result with its latency,
// output, streak and effect (the readiness or start-up it published, the restart it caused), the last
// 100 per worker within a per-container memory bound. Kept in memory only: a restarted agent starts
// with an empty history. The history of a removed pod stays readable among the last removed ones.

import type { ProbeType } from '../api/types.js';
import type { ProbeHistoryEntry, ProbeHistoryReader, ProbeName } from './types.js';

export type { ProbeEffect, ProbeHistoryEntry, ProbeHistoryReader, ProbeName } from './types.js';

/** Results kept per worker. */
export const HISTORY_PER_WORKER = 100;
/** Most bytes of output kept per result. */
export const HISTORY_OUTPUT_BYTES = 1024;
/** Most bytes of output kept per container, over its probes; the oldest results go first. */
export const HISTORY_BYTES_PER_CONTAINER = 64 * 1024;
/** Histories of removed pods kept readable (the most recently removed). */
export const REMOVED_PODS_KEPT = 64;

export const probeNames: Record<ProbeType, ProbeName> = { Liveness: 'liveness', Readiness: 'readiness', Startup: 'startup' };

/** Cuts text to at most max bytes of UTF-8, on a character boundary. */
export function truncateOutput(text: string, max = HISTORY_OUTPUT_BYTES): string {
  if (text.length * 3 <= max) return text; // fast path: cannot exceed, whatever the characters
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return text;
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // do not split a character
  return buf.subarray(0, end).toString('utf8');
}

/** The results of one container (all its probes), oldest first, within the per-worker and byte bounds. */
class ContainerHistory {
  readonly entries: ProbeHistoryEntry[] = [];
  private readonly counts = new Map<ProbeName, number>();
  private bytes = 0;

  add(e: ProbeHistoryEntry): void {
    this.entries.push(e);
    this.bytes += e.output.length;
    const n = (this.counts.get(e.probe) ?? 0) + 1;
    this.counts.set(e.probe, n);
    if (n > HISTORY_PER_WORKER) this.dropOldest((x) => x.probe === e.probe);
    while (this.bytes > HISTORY_BYTES_PER_CONTAINER && this.entries.length > 1) this.dropOldest(() => true);
  }

  private dropOldest(match: (e: ProbeHistoryEntry) => boolean): void {
    const at = this.entries.findIndex(match);
    if (at < 0) return;
    const [gone] = this.entries.splice(at, 1);
    this.bytes -= gone!.output.length;
    this.counts.set(gone!.probe, (this.counts.get(gone!.probe) ?? 1) - 1);
  }
}

class PodHistory {
  readonly containers = new Map<string, ContainerHistory>();
  readonly listeners = new Set<(e: ProbeHistoryEntry) => void>();

  /** Every result of the pod, oldest first. */
  entries(): ProbeHistoryEntry[] {
    const all: ProbeHistoryEntry[] = [];
    for (const c of this.containers.values()) all.push(...c.entries);
    return all.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }
}

export class ProbeHistory implements ProbeHistoryReader {
  private readonly pods = new Map<string, PodHistory>();
  /** UIDs of removed pods whose history is still kept, oldest removal first. */
  private readonly removed: string[] = [];

  record(podUid: string, e: ProbeHistoryEntry): void {
    let pod = this.pods.get(podUid);
    if (!pod) {
      pod = new PodHistory();
      this.pods.set(podUid, pod);
    }
    let c = pod.containers.get(e.container);
    if (!c) {
      c = new ContainerHistory();
      pod.containers.set(e.container, c);
    }
    c.add(e);
    for (const l of pod.listeners) l(e);
  }

  entries(podUid: string): ProbeHistoryEntry[] {
    return this.pods.get(podUid)?.entries() ?? [];
  }

  watch(podUid: string, listener: (e: ProbeHistoryEntry) => void): () => void {
    let pod = this.pods.get(podUid);
    if (!pod) {
      pod = new PodHistory();
      this.pods.set(podUid, pod);
    }
    const p = pod;
    p.listeners.add(listener);
    return () => {
      p.listeners.delete(listener);
    };
  }

  /** The pod's workers are gone: its history stays readable until REMOVED_PODS_KEPT newer removals. */
  podRemoved(podUid: string): void {
    if (!this.pods.has(podUid) || this.removed.includes(podUid)) return;
    this.removed.push(podUid);
    while (this.removed.length > REMOVED_PODS_KEPT) this.pods.delete(this.removed.shift()!);
  }

  /** Number of pods with a history (live or recently removed). */
  size(): number {
    return this.pods.size;
  }
}
