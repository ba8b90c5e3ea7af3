// The standalone agent's node Lease (coordination.k8s.io/v1 in kube-node-lease, named after the
// node), kept as the kubelet's node lease controller keeps it: created when missing (owned by the
// Node, holder the node, 40 s duration), its renewTime written every quarter of the duration (10 s)
// by one timer; a failed write is retried sooner, at the controller's 200 ms doubling up to the
// renew interval. Each renewal is one write to the object store, no request.
// Upstream: pkg/kubelet/nodelease and k8s.io/component-helpers/apimachinery/lease/controller.go.

import type { KubeObject, Storage } from '../kubeapi/backend.js';
import { DEFAULT_LEASE_DURATION_SECONDS, LEASE_RENEW_FRACTION, microTime, NODE_LEASE_NAMESPACE } from '../cluster/lease.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

/** The first retry of a failed renewal (the lease controller's maxBackoff caps it at the renew interval). */
const firstRetryMs = 200;

export interface AgentNodeLeaseOptions {
  nodeName: string;
  /** The object store's Leases. */
  storage: Storage;
  /** The Node's uid as stored now, for the owner reference (undefined before registration). */
  nodeUid(): string | undefined;
  clock: Clock;
  logger: Logger;
}

export class AgentNodeLease {
  readonly durationSeconds = DEFAULT_LEASE_DURATION_SECONDS;
  readonly renewIntervalMs = DEFAULT_LEASE_DURATION_SECONDS * 1000 * LEASE_RENEW_FRACTION;
  private timer?: Timer;
  private retryMs = firstRetryMs;
  private stopped = false;

  constructor(private readonly o: AgentNodeLeaseOptions) {}

  /** Renews now, then every renew interval until stop(). */
  start(): void {
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private async tick(): Promise<void> {
    let delay = this.renewIntervalMs;
    try {
      await this.renew();
      this.retryMs = firstRetryMs;
    } catch (err) {
      delay = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, this.renewIntervalMs);
      this.o.logger.warn('Failed to update lease, will retry', { node: this.o.nodeName, err: (err as Error).message, retryInMs: delay });
    }
    if (!this.stopped) this.timer = this.o.clock.setTimer(delay, () => void this.tick());
  }

  /** The Lease as stored now. */
  current(): KubeObject | undefined {
    return this.o.storage.get(NODE_LEASE_NAMESPACE, this.o.nodeName);
  }

  /** One renewal: the stored Lease with a new renewTime (and the holder, duration and owner it must have), or a new Lease. */
  async renew(): Promise<void> {
    const renewTime = microTime(this.o.clock.now());
    const uid = this.o.nodeUid();
    const ownerReferences = uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid }] : undefined;
    const had = this.current() as (KubeObject & { spec?: Record<string, unknown> }) | undefined;
    if (had) {
      const metadata = ownerReferences && !had.metadata?.ownerReferences?.length ? { ...had.metadata, ownerReferences } : had.metadata;
      const spec = { ...had.spec, holderIdentity: this.o.nodeName, leaseDurationSeconds: this.durationSeconds, renewTime };
      await this.o.storage.update!({ ...had, metadata, spec } as KubeObject, {});
      return;
    }
    await this.o.storage.create!(
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.nodeName, namespace: NODE_LEASE_NAMESPACE, ...(ownerReferences ? { ownerReferences } : {}) },
        spec: { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.durationSeconds, renewTime },
      } as KubeObject,
      {},
    );
  }
}
