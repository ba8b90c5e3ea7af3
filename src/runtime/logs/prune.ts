// Old instances' logs: as the kubelet keeps one dead instance per container (the container GC's
// MaxPerPodContainer) and removes a container's log with it, only the current and the previous
// instance's logs (`<n>.log` and their rotated files) stay in a container's log directory.

import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** `<attempt>.log`, or one of its rotated files `<attempt>.log.<YYYYMMDD-hhmmss>[.<k>]`. */
const logName = /^(\d+)\.log(?:\.\d{8}-\d{6}(?:\.\d+)?)?$/;

/**
 * Removes the log files of every instance before `keepFrom` in dir (a container's log directory).
 * Only names of that exact shape are touched, and unlink never follows a symlink. Returns the names removed.
 */
export async function pruneContainerLogs(dir: string, keepFrom: number): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = logName.exec(name);
    if (!m || Number(m[1]) >= keepFrom) continue;
    try {
      await unlink(join(dir, name));
      removed.push(name);
    } catch {
      // gone already, or not ours
    }
  }
  return removed;
}
