// Names and order of rotated log files, as the kubelet's container log manager names them:
// `<log>.<YYYYMMDD-hhmmss>`; a second rotation within the same second adds `.<n>` so none is lost.

import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { rotationSuffix } from './timestamp.js';

const rotatedPattern = /^(\d{8}-\d{6})(?:\.(\d+))?$/;

interface RotatedFile {
  path: string;
  stamp: string;
  seq: number;
}

function parseRotated(dir: string, base: string, name: string): RotatedFile | undefined {
  if (!name.startsWith(`${base}.`)) return undefined;
  const m = rotatedPattern.exec(name.slice(base.length + 1));
  if (!m) return undefined;
  return { path: join(dir, name), stamp: m[1]!, seq: m[2] === undefined ? 0 : Number(m[2]) };
}

/** The rotated files of a log, oldest first (the current file itself excluded). */
export async function listRotatedLogs(logPath: string): Promise<string[]> {
  const dir = dirname(logPath);
  const base = basename(logPath);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map((n) => parseRotated(dir, base, n))
    .filter((r): r is RotatedFile => r !== undefined)
    .sort((a, b) => (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : a.seq - b.seq))
    .map((r) => r.path);
}

/** The name the current log gets when rotated at ms, avoiding every name in taken. */
export function rotatedName(logPath: string, ms: number, taken: ReadonlySet<string>): string {
  const first = `${logPath}.${rotationSuffix(ms)}`;
  if (!taken.has(first)) return first;
  for (let n = 1; ; n++) {
    const candidate = `${first}.${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
