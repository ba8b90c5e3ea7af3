// A pod's use of the root dir's file system, as the eviction manager ranks it (the summary's
// ephemeral-storage of pkg/kubelet/stats: container logs + local volumes + writable layer, measured
// as du measures: allocated blocks and inodes, symlinks not followed).

import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import { podLogDir, sandboxDir } from '../runtime/root-dir.js';

/** What one container's logs hold. */
export interface ContainerDiskUsage {
  name: string;
  /** Its log files (every instance's), in allocated bytes. */
  logsBytes: number;
}

/** A pod's ephemeral-storage usage. */
export interface PodDiskUsage {
  /** Logs, the sandbox directory (local volumes and what containers write in their working directory). */
  bytes: number;
  inodes: number;
  containers: ContainerDiskUsage[];
}

interface Tally {
  bytes: number;
  inodes: number;
}

/** du of a tree: allocated bytes and entries, a missing tree counting as empty; the walk stays on the tree. */
async function tally(path: string): Promise<Tally> {
  const out: Tally = { bytes: 0, inodes: 0 };
  const stack = [path];
  while (stack.length > 0) {
    const p = stack.pop()!;
    let st;
    try {
      st = await lstat(p);
    } catch {
      continue;
    }
    out.bytes += st.blocks * 512;
    out.inodes += 1;
    if (!st.isDirectory()) continue;
    let entries: Dirent[];
    try {
      entries = await readdir(p, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) stack.push(join(p, e.name));
  }
  return out;
}

/**
 * Measures a pod under rootDir: its log directory, container by container, and its sandbox
 * directory. The process runtime has no writable layer: a container writes in the sandbox directory,
 * which is counted; containerd's writable layers live in its snapshotter and are not measured here.
 */
export async function measurePodDiskUsage(rootDir: string, pod: Pod): Promise<PodDiskUsage> {
  const m = pod.metadata ?? {};
  const logDir = podLogDir(rootDir, m.namespace ?? 'default', m.name ?? '', m.uid ?? '');
  const containers: ContainerDiskUsage[] = [];
  let bytes = 0;
  let inodes = 0;
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    const t = await tally(join(logDir, c.name));
    containers.push({ name: c.name, logsBytes: t.bytes });
    bytes += t.bytes;
    inodes += t.inodes;
  }
  const sandbox = await tally(sandboxDir(rootDir, m.uid ?? ''));
  return { bytes: bytes + sandbox.bytes, inodes: inodes + sandbox.inodes, containers };
}
