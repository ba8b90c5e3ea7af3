// The agent's own status document, GET /podvisor/v1/status (what `podvisor agent status` prints): the
// process, its node and runtime, and its pods counted by phase. Both long-lived modes (the standalone
// agent and the cluster node) serve it, each adding what only it has (sources, listeners, the cluster).

import type { Pod } from '../api/types.js';
import type { RuntimeCapabilities } from '../runtime/cri.js';
import { DISK_PRESSURE_TAINT } from '../kubelet/disk-pressure.js';

/** What names the agent in its status; fixed for its life. */
export interface AgentIdentity {
  version: string;
  nodeName: string;
  rootDir: string;
  /** The runtime's name, as the runtime service reports it. */
  runtime: string;
  /** What the runtime can run (a client checks manifests against them before it applies anything). */
  capabilities: RuntimeCapabilities;
  /** When the agent started (ms since the epoch). */
  startedAt: number;
}

/** The taint the node lifecycle controller puts on a node for each condition the eviction manager reports. */
const conditionTaints: Record<string, string> = { DiskPressure: `${DISK_PRESSURE_TAINT.key}:${DISK_PRESSURE_TAINT.effect}` };

/**
 * The status document at `now` for these pods (a pod being deleted counts as Terminating) and the
 * node's pressure conditions (DiskPressure), with the taints a cluster would give the node for them.
 */
export function agentStatusDocument(id: AgentIdentity, pods: readonly Pod[], now: number, nodeConditions: readonly string[] = []): Record<string, unknown> {
  const phases: Record<string, number> = {};
  for (const p of pods) {
    const ph = p.metadata?.deletionTimestamp ? 'Terminating' : (p.status?.phase ?? 'Pending');
    phases[ph] = (phases[ph] ?? 0) + 1;
  }
  return {
    pid: process.pid,
    version: id.version,
    nodeName: id.nodeName,
    rootDir: id.rootDir,
    runtime: id.runtime,
    runtimeCapabilities: id.capabilities,
    startTime: new Date(id.startedAt).toISOString(),
    uptimeSeconds: Math.floor((now - id.startedAt) / 1000),
    pods: { total: pods.length, ...phases },
    node: { conditions: [...nodeConditions], taints: nodeConditions.flatMap((c) => conditionTaints[c] ?? []) },
  };
}
