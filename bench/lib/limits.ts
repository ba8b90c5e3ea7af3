// Keeps a requested pod count within what the host's resource limits allow, so a large size fails
// up front with a clear message instead of as EMFILE errors counted against the agent.

import { readLimits, type Limits } from './proc.js';

/**
 * Descriptors the agent holds per pod: the container's stdout and stderr pipes, its log file, and
 * headroom for the probes and exec children in flight.
 */
export const FDS_PER_POD = 8;
/** Descriptors the agent process needs whatever the pod count (libuv, IPC, the loader, stdio). */
export const BASE_FDS = 128;
/** Processes per pod: the container plus headroom for an exec probe or floor child in flight. */
export const PROCS_PER_POD = 2;
export const BASE_PROCS = 256;

export interface Fit {
  requested: number;
  allowed: number;
  /** Set when allowed < requested, explaining why and how to raise the limit. */
  message?: string;
}

export function fitPodCount(requested: number, limits: Limits = readLimits()): Fit {
  const byFiles = Math.floor((limits.openFiles - BASE_FDS) / FDS_PER_POD);
  const byProcs = Math.floor((limits.processes - BASE_PROCS) / PROCS_PER_POD);
  const allowed = Math.max(0, Math.min(requested, byFiles, byProcs));
  if (allowed >= requested) return { requested, allowed: requested };
  const which =
    byFiles <= byProcs
      ? `open files limit (ulimit -n) is ${limits.openFiles}; ${requested} pods need about ${BASE_FDS + FDS_PER_POD * requested}`
      : `process limit (ulimit -u) is ${limits.processes}; ${requested} pods need about ${BASE_PROCS + PROCS_PER_POD * requested}`;
  return {
    requested,
    allowed,
    message: `lowering N from ${requested} to ${allowed}: the ${which}. Raise it (e.g. \`ulimit -n 8192\`) to run the full size.`,
  };
}
