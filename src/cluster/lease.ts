// The node's heartbeat Lease (coordination.k8s.io/v1 in kube-node-lease), as the kubelet's lease
// controller keeps it: 40 s duration, renewed every quarter of that (10 s), owned by the Node, created
// when missing; a failed renewal is retried sooner, with back-off up to the renew interval.

import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isNotFound, MERGE_PATCH, RetryBackoff, type ApiClient } from './client.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's nodeLeaseDurationSeconds default. */
export const DEFAULT_LEASE_DURATION_SECONDS = 40;
/** renewInterval = 0.25 × duration, as the kubelet's nodeLeaseRenewIntervalFraction. */
export const LEASE_RENEW_FRACTION = 0.25;

/** A MicroTime: RFC 3339 with exactly six fractional digits, as the API server requires. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface NodeLeaseOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  /** The Node's uid, for the owner reference (set once known). */
  nodeUid?: () => string | undefined;
  durationSeconds?: number;
  /** Defaults to durationSeconds × 0.25. */
  renewIntervalMs?: number;
}

export class NodeLease {
  private readonly o: NodeLeaseOptions;
  private readonly backoff: RetryBackoff;
  private timer?: Timer;
  private stopped = false;
  private exists = false;
  /** Successful renewals (creation included). */
  renewals = 0;
  lastRenewTime?: string;

  constructor(opts: NodeLeaseOptions) {
    this.o = opts;
    this.backoff = new RetryBackoff(200, this.renewIntervalMs);
  }

  get durationSeconds(): number {
    return this.o.durationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
  }

  get renewIntervalMs(): number {
    return this.o.renewIntervalMs ?? this.durationSeconds * 1000 * LEASE_RENEW_FRACTION;
  }

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let delay = this.renewIntervalMs;
    try {
      await this.renew();
      this.backoff.reset();
    } catch (err) {
      if (this.stopped) return;
      delay = this.backoff.next();
      this.o.logger.warn('Failed to update lease, will retry', { node: this.o.nodeName, err: (err as Error).message, retryInMs: delay });
    }
    if (!this.stopped) this.timer = this.o.clock.setTimer(delay, () => void this.tick());
  }

  private ownerReferences(): OwnerReference[] | undefined {
    const uid = this.o.nodeUid?.();
    return uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid }] : undefined;
  }

  private async renew(): Promise<void> {
    const { client, nodeName, clock } = this.o;
    const renewTime = microTime(clock.now());
    const owners = this.ownerReferences();
    if (this.exists) {
      try {
        await client.request<Lease>('PATCH', this.path(nodeName), {
          body: {
            ...(owners ? { metadata: { ownerReferences: owners } } : {}),
            spec: { holderIdentity: nodeName, leaseDurationSeconds: this.durationSeconds, renewTime },
          },
          contentType: MERGE_PATCH,
        });
        this.renewed(renewTime);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.exists = false;
      }
    }
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: nodeName, namespace: NODE_LEASE_NAMESPACE, ...(owners ? { ownerReferences: owners } : {}) },
      spec: { holderIdentity: nodeName, leaseDurationSeconds: this.durationSeconds, renewTime },
    };
    try {
      await client.request<Lease>('POST', this.path(), { body: lease });
    } catch (err) {
      // Created by an earlier run: renew it from now on.
      if ((err as { code?: number }).code !== 409) throw err;
      this.exists = true;
      return this.renew();
    }
    this.renewed(renewTime);
  }

  private renewed(renewTime: string): void {
    this.exists = true;
    this.renewals++;
    this.lastRenewTime = renewTime;
  }
}
