// Collecting the directories of pods that are gone, as the kubelet's housekeeping does with
// cleanupOrphanedPodDirs (/var/lib/kubelet/pods/<uid>) and its container GC with
// evictPodLogsDirectories (/var/log/pods/<ns>_<name>_<uid>): a pod's sandbox directory and its log
// directory are removed once no pod of that UID is known and the runtime holds no sandbox of it.

import { readdir } from 'node:fs/promises';
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
 * Removes the sandbox and log directories of pods that are gone; resolves to the paths removed.
 * The directories are listed before the pods known are read, so a pod that appears meanwhile (whose
 * directories are made after it is known) never loses them.
 */
export async function cleanupOrphanedPodDirs(opts: OrphanedPodDirsOptions): Promise<string[]> {
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
  if (unknown.length === 0) return [];
  const withSandbox = new Set((await opts.runtime.listPodSandbox()).map((sb) => sb.metadata.uid));
  const removed: string[] = [];
  for (const c of unknown) {
    if (withSandbox.has(c.uid)) continue;
    await removeUnder(opts.rootDir, c.path);
    removed.push(c.path);
  }
  return removed;
}
