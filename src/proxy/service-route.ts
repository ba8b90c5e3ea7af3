// The service range made local to the host, so ClusterIPs answer from inside pod network namespaces:
// a `local` route for the whole --service-cluster-ip-range in the kernel's local table (as the
// loopback's 127.0.0.0/8 is), the way kube-proxy's IPVS mode makes ClusterIPs local on its dummy
// interface. Pods reach it through their default route to the bridge gateway; the userspace proxy
// and the cluster DNS bind ClusterIPs as they do on the loopback range, and see the pod's own
// address as the client's. Needs root and iproute2's `ip`; the loopback range needs nothing.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Ipv4Range } from '../kubeapi/service-allocator.js';

const run = promisify(execFile);

/** 127.0.0.0/8 as numbers: a range inside it is local already (and unreachable from pods). */
const loopbackBase = 127 * 2 ** 24;
const loopbackSize = 2 ** 24;

export function isLoopbackRange(range: Ipv4Range): boolean {
  return range.base >= loopbackBase && range.base + range.size <= loopbackBase + loopbackSize;
}

/** How ClusterIPs are reached, for the log and the status document. */
export type ServiceRouteState = { mode: 'loopback' } | { mode: 'local-route'; cidr: string } | { mode: 'unrouted'; cidr: string; reason: string };

export interface ServiceRoute {
  readonly state: ServiceRouteState;
  /** True where pods in their own network namespace reach ClusterIPs (and the cluster DNS). */
  readonly reachableFromPods: boolean;
  remove(): Promise<void>;
}

const routeArgs = (cidr: string) => ['route', 'replace', 'local', cidr, 'dev', 'lo', 'table', 'local', 'proto', 'static'];

/**
 * Routes the service range to the host as local (a loopback range: nothing to do). Without root or
 * `ip`, or when the kernel refuses, ClusterIPs stay unreachable from pods and the state says why.
 */
export async function routeServiceRange(range: Ipv4Range, uid: number | undefined = process.geteuid?.()): Promise<ServiceRoute> {
  const none = { remove: () => Promise.resolve() };
  if (isLoopbackRange(range)) return { state: { mode: 'loopback' }, reachableFromPods: false, ...none };
  if (uid !== 0)
    return { state: { mode: 'unrouted', cidr: range.cidr, reason: 'a local route for the service range needs root' }, reachableFromPods: false, ...none };
  try {
    await run('ip', routeArgs(range.cidr));
  } catch (err) {
    const reason = `ip route: ${((err as { stderr?: string }).stderr || (err as Error).message).trim()}`;
    return { state: { mode: 'unrouted', cidr: range.cidr, reason }, reachableFromPods: false, ...none };
  }
  return {
    state: { mode: 'local-route', cidr: range.cidr },
    reachableFromPods: true,
    remove: async () => {
      await run('ip', ['route', 'del', 'local', range.cidr, 'dev', 'lo', 'table', 'local']).catch(() => {});
    },
  };
}
