// The one entry into cluster mode: startClusterNode joins this host to a Kubernetes cluster as a node.
//
// Contract (what `podvisor agent --kubeconfig FILE` calls):
// - Input: the kubeconfig file (current context; bearer token, token file or client certificate;
//   its CA), the runtime, and createKubelet(lookup, nodeName), which must build the PodKubelet with
//   that lookup (ConfigMaps and Secrets then come from the API server) and with hostIP = internalIP.
// - Synchronous checks first: an unreadable kubeconfig or a bad --node-labels / --register-with-taints
//   value throws before anything is started, so the caller can exit 2 with the message.
// - Then it returns a started ClusterNode at once: registration, the Lease, the pod watch and status
//   updates run in the background and retry with back-off while the API server is unreachable; pods
//   keep running throughout. whenRegistered()/whenListed() resolve once the API server has answered.
// - stop() stops the API traffic only; terminating pods and closing the kubelet stay with the caller.

import { networkInterfaces } from 'node:os';
import type { Taint } from 'kubernetes-types/core/v1.js';
import type { Pod } from '../api/types.js';
import type { PodKubelet } from '../kubelet/kubelet.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { RuntimeService } from '../runtime/cri.js';
import { defaultNodeName } from '../config/load.js';
import { RealClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { ApiClient } from './client.js';
import { ClusterNode } from './cluster-node.js';
import { loadKubeconfig } from './kubeconfig.js';
import { ApiObjectLookup } from './lookup.js';
import { goArch, parseNodeLabels, parseTaints } from './node-status.js';

export { ClusterNode } from './cluster-node.js';
export { ApiClient } from './client.js';

export interface StartClusterNodeOptions {
  kubeconfig: string;
  /** --node-name; the lowercased hostname when unset. */
  nodeName?: string;
  runtime: RuntimeService;
  createKubelet: (lookup: ObjectLookup, nodeName: string, internalIP: string) => PodKubelet;
  /** --node-labels: `k=v,…` or already parsed. */
  nodeLabels?: string | Record<string, string>;
  /** --register-with-taints: `key=value:Effect,…` or already parsed. */
  registerWithTaints?: string | Taint[];
  /** --node-status-update-frequency in ms (10 s). */
  nodeStatusUpdateFrequencyMs?: number;
  /** --port (10250), reported as daemonEndpoints.kubeletEndpoint.Port. */
  kubeletPort?: number;
  /** --node-ip; the first non-loopback IPv4 address, else 127.0.0.1. */
  internalIP?: string;
  /** Static pods (already loaded and defaulted from --pod-manifest-path). */
  staticPods?: Pod[];
  /** podvisor's version (package.json's), reported as kubelet version `podvisor/<version>`. */
  version: string;
  leaseDurationSeconds?: number;
  leaseRenewIntervalMs?: number;
  /** The runtime's containers outlive the agent: adopt the pods it still runs (see ClusterNodeOptions). */
  adoptRunning?: boolean;
  clock?: Clock;
  logger?: Logger;
}

/** The first non-internal IPv4 address of the host, else 127.0.0.1. */
export function defaultInternalIP(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Joins the cluster: see the contract at the top of this file. */
export function startClusterNode(opts: StartClusterNodeOptions): { node: ClusterNode; kubelet: PodKubelet; client: ApiClient } {
  const creds = loadKubeconfig(opts.kubeconfig);
  const labels = typeof opts.nodeLabels === 'string' ? parseNodeLabels(opts.nodeLabels) : opts.nodeLabels;
  const taints = typeof opts.registerWithTaints === 'string' ? parseTaints(opts.registerWithTaints) : opts.registerWithTaints;
  const nodeName = opts.nodeName ?? defaultNodeName();
  const internalIP = opts.internalIP ?? defaultInternalIP();
  const { version } = opts;
  const clock = opts.clock ?? new RealClock();
  const logger = opts.logger ?? silentLogger;
  const client = new ApiClient(creds, { userAgent: `podvisor/${version} (${process.platform}/${goArch()}) kubernetes/node ${nodeName}` });
  const lookup = new ApiObjectLookup({ client, clock, logger });
  const kubelet = opts.createKubelet(lookup, nodeName, internalIP);
  const node = new ClusterNode({
    client,
    kubelet,
    runtime: opts.runtime,
    lookup,
    clock,
    logger,
    nodeName,
    version,
    internalIP,
    kubeletPort: opts.kubeletPort,
    labels,
    taints,
    nodeStatusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
    leaseDurationSeconds: opts.leaseDurationSeconds,
    leaseRenewIntervalMs: opts.leaseRenewIntervalMs,
    staticPods: opts.staticPods,
    adoptRunning: opts.adoptRunning,
  });
  node.start();
  return { node, kubelet, client };
}
