// Which endpoint a new connection to a service port goes to, as kube-proxy's userspace
// LoadBalancerRR (pkg/proxy/userspace/roundrobin.go) chooses: round robin over the Ready endpoints,
// or, with sessionAffinity ClientIP, the endpoint a client last used while within the timeout.

import type { Clock } from '../util/clock.js';

export interface Endpoint {
  ip: string;
  port: number;
}

const same = (a: Endpoint, b: Endpoint) => a.ip === b.ip && a.port === b.port;

export class RoundRobin {
  private endpoints: Endpoint[] = [];
  private next = 0;
  private readonly affinity = new Map<string, { endpoint: Endpoint; lastUsed: number }>();
  /** ClientIP affinity timeout; 0: no affinity. */
  private affinityMs = 0;

  constructor(private readonly clock: Clock) {}

  /** Replaces the endpoints; clients stuck to one that is gone choose again. */
  setEndpoints(endpoints: readonly Endpoint[]): void {
    this.endpoints = [...endpoints];
    if (this.next >= this.endpoints.length) this.next = 0;
    for (const [client, a] of this.affinity) if (!this.endpoints.some((e) => same(e, a.endpoint))) this.affinity.delete(client);
  }

  setAffinity(timeoutSeconds: number | undefined): void {
    this.affinityMs = (timeoutSeconds ?? 0) * 1000;
    if (!this.affinityMs) this.affinity.clear();
  }

  size(): number {
    return this.endpoints.length;
  }

  /** The endpoint for a new connection from clientIP, skipping `tried`; undefined when none is left. */
  choose(clientIP: string, tried: readonly Endpoint[] = []): Endpoint | undefined {
    const now = this.clock.now();
    if (this.affinityMs && tried.length === 0) {
      const a = this.affinity.get(clientIP);
      if (a && now - a.lastUsed <= this.affinityMs) {
        a.lastUsed = now;
        return a.endpoint;
      }
    }
    for (let n = 0; n < this.endpoints.length; n++) {
      const e = this.endpoints[this.next]!;
      this.next = (this.next + 1) % this.endpoints.length;
      if (tried.some((t) => same(t, e))) continue;
      if (this.affinityMs) this.affinity.set(clientIP, { endpoint: e, lastUsed: now });
      return e;
    }
    return undefined;
  }
}
