// Collecting the directories of pods that are gone, as the kubelet's housekeeping does with
// cleanupOrphanedPodDirs (/var/lib/kubelet/pods/<uid>) and its container GC with
// evictPodLogsDirectories (/var/log/pods/<ns>_<name>_<uid>): a pod's sandbox directory and its log
// directory are removed once no pod of that UID is known and the runtime holds no sandbox of it.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeService } from '../runtime/cri.js';
import { removeUnder } from '../runtime/root-dir.js';

export interface OrphanedPodDirsOptions {
  rootDir: string;
  runtime: Pick<RuntimeService, 'listPodSandbox'>;
  /** UIDs of every pod the node knows (running, terminating, or waiting to start). */
  knownPodUids: () => Iterable<string>;
}

/** A log directory's pod UID: the part after the last `_` of `<namespace>_<name>_<uid>`. */
function uidOfLogDir(name: string): string {
  return name.slice(name.lastIndexOf('_') + 1);
}

async function entries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * Removes the sandbox and log directories of pods that are gone; resolves to the paths removed and
 * the number of directories of unknown pods kept because the runtime still holds their sandbox.
 * The directories are listed before the pods known are read, so a pod that appears meanwhile (whose
 * directories are made after it is known) never loses them.
 */
async function cleanupOrphanedPodDirs(opts: OrphanedPodDirsOptions): Promise<{ removed: string[]; kept: number }> {
  const sandboxes = join(opts.rootDir, 'sandboxes');
  const logs = join(opts.rootDir, 'pods');
  const candidates = [
    ...(await entries(sandboxes)).map((name) => ({ uid: name, path: join(sandboxes, name) })),
    ...(await entries(logs)).map((name) => ({ uid: uidOfLogDir(name), path: join(logs, name) })),
  ];
  const known = new Set(opts.knownPodUids());
  const unknown = candidates.filter((c) => !known.has(c.uid));
  // The runtime is asked only about directories no known pod holds: a node whose directories all
  // belong to its pods makes no runtime call here (an idle node's housekeeping stays local).
  if (unknown.length === 0) return { removed: [], kept: 0 };
  const withSandbox = new Set((await opts.runtime.listPodSandbox()).map((sb) => sb.metadata.uid));
  const removed: string[] = [];
  for (const c of unknown) {
    if (withSandbox.has(c.uid)) continue;
    await removeUnder(opts.rootDir, c.path);
    removed.push(c.path);
  }
  return { removed, kept: unknown.length - removed.length };
}

/** How long a sweep that found nothing to do is trusted while nothing it looked at changed. */
export const SETTLED_SWEEP_MS = 60_000;

/**
 * The sweep as housekeeping runs it every period: once a sweep found every directory held by a
 * known pod, the next ones read only the two directories' modification times and the pods known,
 * and sweep again when either changed (a pod added or gone, a directory made or removed) or
 * SETTLED_SWEEP_MS passed.
 */
export class OrphanedPodDirs {
  private settled?: { key: string; at: number };

  constructor(
    private readonly opts: OrphanedPodDirsOptions,
    private readonly now: () => number,
  ) {}

  async sweep(): Promise<string[]> {
    // Read before the sweep: a change after it shows as a new key next time.
    const key = await this.key();
    if (this.settled && this.settled.key === key && this.now() - this.settled.at < SETTLED_SWEEP_MS) return [];
    const at = this.now();
    const { removed, kept } = await cleanupOrphanedPodDirs(this.opts);
    this.settled = removed.length === 0 && kept === 0 ? { key, at } : undefined;
    return removed;
  }

  private async key(): Promise<string> {
    const mtime = async (dir: string) => (await stat(dir).catch(() => undefined))?.mtimeMs ?? -1;
    const [a, b] = await Promise.all([mtime(join(this.opts.rootDir, 'sandboxes')), mtime(join(this.opts.rootDir, 'pods'))]);
    return `${a} ${b} ${[...this.opts.knownPodUids()].sort().join(',')}`;
  }
}
