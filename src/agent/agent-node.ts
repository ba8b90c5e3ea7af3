// The standalone agent's own v1 Node, kept in its object store as a cluster's API server keeps a
// kubelet's: registered at start as the kubelet registers (its labels — kubernetes.io/hostname, os,
// arch, then --node-labels — capacity and allocatable from --node-cpu/--node-memory/--max-pods,
// addresses, nodeInfo, the four conditions; --register-with-taints on first registration only), and
// taken over on a restart with what users changed (labels, taints, cordon) kept. Its status is
// written again when a condition changes and every 5 minutes (nodeStatusReportFrequency); the taints
// of the conditions (node.kubernetes.io/disk-pressure, memory-pressure, pid-pressure, not-ready) are
// added and removed as the node lifecycle controller's TaintNodesByCondition does.

import type { Node, NodeCondition, Taint } from '../api/types.js';
import type { KubeObject, Storage } from '../kubeapi/backend.js';
import { buildNode, nodeLabels, nodeStatus, type NodeReadiness, type NodeSpecOptions } from '../cluster/node-status.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

/** nodeStatusReportFrequency: an unchanged status is still written this often. */
const statusReportMs = 5 * 60_000;

/** The taint each condition puts on the node while it holds (TaintNodesByCondition). */
const conditionTaints: Array<{ type: string; status: string; key: string }> = [
  { type: 'Ready', status: 'False', key: 'node.kubernetes.io/not-ready' },
  { type: 'MemoryPressure', status: 'True', key: 'node.kubernetes.io/memory-pressure' },
  { type: 'DiskPressure', status: 'True', key: 'node.kubernetes.io/disk-pressure' },
  { type: 'PIDPressure', status: 'True', key: 'node.kubernetes.io/pid-pressure' },
];

export interface AgentNodeOptions {
  spec: NodeSpecOptions;
  storage: Storage;
  clock: Clock;
  logger: Logger;
  /** Whether the node is ready and which pressure conditions hold now. */
  readiness: () => NodeReadiness;
}

export class AgentNode {
  private lastReport = -Infinity;
  private writing?: Promise<void>;

  constructor(private readonly o: AgentNodeOptions) {}

  get name(): string {
    return this.o.spec.nodeName;
  }

  /** The Node as stored now. */
  current(): Node | undefined {
    return this.o.storage.get('', this.name) as Node | undefined;
  }

  /** Creates the Node, or takes over the stored one (its labels brought up to date, users' labels, taints and cordon kept), then writes its status. */
  async register(): Promise<void> {
    const now = this.o.clock.now();
    const had = this.current();
    if (!had) {
      await this.o.storage.create!(buildNode(this.o.spec, now) as KubeObject, {});
    } else {
      const labels = { ...(had.metadata?.labels ?? {}), ...nodeLabels(this.o.spec) };
      await this.o.storage.update!({ ...had, metadata: { ...had.metadata, labels } } as KubeObject, {});
    }
    await this.writeStatus(true);
  }

  /** Writes the status when a condition changed or the last report is older than nodeStatusReportFrequency; one write at a time. */
  refresh(): Promise<void> {
    this.writing ??= this.writeStatus(false).finally(() => (this.writing = undefined));
    return this.writing;
  }

  private async writeStatus(force: boolean): Promise<void> {
    const node = this.current();
    if (!node) return;
    const now = this.o.clock.now();
    const previous = node.status?.conditions as NodeCondition[] | undefined;
    const status = nodeStatus(this.o.spec, now, previous, this.o.readiness());
    const changed = (status.conditions ?? []).some((c) => previous?.find((p) => p.type === c.type)?.status !== c.status);
    if (!force && !changed && now - this.lastReport < statusReportMs) return;
    try {
      const written = (await this.o.storage.updateStatus!({ ...node, status } as KubeObject, {})) as Node;
      this.lastReport = now;
      await this.taintByConditions(written);
    } catch (err) {
      this.o.logger.warn('Failed to update the node status', { node: this.name, err: (err as Error).message });
    }
  }

  /** Adds the taints of the conditions that hold and removes those of the ones that no longer do. */
  private async taintByConditions(node: Node): Promise<void> {
    const conditions = node.status?.conditions ?? [];
    const want = new Set(conditionTaints.filter((t) => conditions.some((c) => c.type === t.type && c.status === t.status)).map((t) => t.key));
    const managed = new Set(conditionTaints.map((t) => t.key));
    const taints: Taint[] = (node.spec?.taints ?? []).filter((t) => !(managed.has(t.key) && t.effect === 'NoSchedule' && !want.has(t.key)));
    for (const key of want) {
      if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule'))
        taints.push({ key, effect: 'NoSchedule', timeAdded: new Date(this.o.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') });
    }
    if (JSON.stringify(taints) === JSON.stringify(node.spec?.taints ?? [])) return;
    const spec = { ...(node.spec ?? {}) };
    if (taints.length > 0) spec.taints = taints;
    else delete spec.taints;
    await this.o.storage.update!({ ...node, spec } as KubeObject, {});
  }
}
