// The node-level reclaim the eviction manager tries before evicting for nodefs (containerGC's
// DeleteAllUnusedContainers, pkg/kubelet/kuberuntime/kuberuntime_gc.go with evictNonDeletedPods):
// exited containers beyond the newest one of each name, every exited container of a finished pod,
// and their log files (rotated ones too), as the kubelet's removeContainer removes the log with the container.

import type { ContainerStatus, RuntimeService } from '../runtime/cri.js';
import { listRotatedLogs } from '../runtime/logs/rotation.js';
import { removeUnder } from '../runtime/root-dir.js';
import type { Logger } from '../util/logger.js';

/** Exited instances of a container name kept in a pod that still runs (the GC policy's MaxPerPodContainer). */
export const MAX_PER_POD_CONTAINER = 1;

export interface ContainerGCInputs {
  runtime: RuntimeService;
  rootDir: string;
  logger: Logger;
  /** The sandboxes of pods that finished for good: every exited container of theirs goes. */
  finishedSandboxes: ReadonlySet<string>;
  /** The sandboxes of the kubelet's pods; containers of other sandboxes are left to recovery. */
  knownSandboxes: ReadonlySet<string>;
}

/** The container log manager's Clean: the log and its rotated files. */
async function removeContainerLogs(rootDir: string, logPath: string): Promise<void> {
  const rotated = await listRotatedLogs(logPath).catch(() => []);
  for (const path of [logPath, ...rotated]) await removeUnder(rootDir, path).catch(() => undefined);
}

/** Removes the unused containers and their logs; resolves with how many were removed. */
export async function deleteAllUnusedContainers(inputs: ContainerGCInputs): Promise<number> {
  const { runtime, rootDir, logger } = inputs;
  const groups = new Map<string, ContainerStatus[]>();
  for (const c of await runtime.listContainers()) {
    if (!inputs.knownSandboxes.has(c.podSandboxId)) continue;
    const key = `${c.podSandboxId}/${c.metadata.name}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  let removed = 0;
  for (const instances of groups.values()) {
    const exited = instances.filter((c) => c.state === 'CONTAINER_EXITED').sort((a, b) => b.createdAt - a.createdAt);
    const finished = inputs.finishedSandboxes.has(exited[0]?.podSandboxId ?? '');
    for (const c of exited.slice(finished ? 0 : MAX_PER_POD_CONTAINER)) {
      try {
        // The log path is in the container's status (a listing need not carry it).
        const logPath = c.logPath || (await runtime.containerStatus(c.id)).logPath;
        await runtime.removeContainer(c.id);
        if (logPath && logPath.startsWith('/')) await removeContainerLogs(rootDir, logPath);
        removed++;
      } catch (e) {
        logger.warn('Failed to remove an unused container', { container: c.id, err: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  return removed;
}
