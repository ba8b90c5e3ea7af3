// The one place the kubelet core (PodKubelet) is built, for every mode of the agent: the in-process
// agent of `run` and `up`, the standalone agent, the cluster node, and the bench's hosts. What differs
// between them is given here as data (lookup, host IP, where probe metrics go), not wired again.

import type { Registry } from 'prom-client';
import type { NodeAllocatable } from '../kubelet/admission.js';
import { DiskPressureObserver, type EvictionThresholds } from '../kubelet/disk-pressure.js';
import { ResourcePressureObserver } from '../kubelet/resource-pressure.js';
import { PodKubelet, type PodKubeletOptions } from '../kubelet/kubelet.js';
import type { ClusterDNSSettings } from '../kuberuntime/cluster-dns.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { ObjectLookup as RuntimeClassLookup } from '../kuberuntime/envvars.js';
import type { RuntimeService } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { recordUnhonouredFields } from './unhonoured-events.js';
import { podResourceStats, UsageCollector } from './usage.js';
import { capabilitiesByRuntimeClass } from '../runtime/pod-rules.js';
import { rootlessPortForwards } from '../runtime/containerd/rootless-ports.js';

function rootlessPodAddress(rootDir: string): (host: string, port: number) => Promise<{ host: string; port: number }> {
  const forwards = rootlessPortForwards(rootDir);
  return (host, port) => forwards.dial(host, port);
}

/** What the agent's settings decide of the kubelet (see settings.ts). */
export interface KubeletSettings {
  rootDir: string;
  node: NodeAllocatable;
  crashLoopBackOffMaxSeconds?: number;
  /** --eviction-hard: the root dir's DiskPressure thresholds and the node's memory and PID ones (the defaults of disk-pressure.ts and resource-pressure.ts where unset). */
  evictionHard?: EvictionThresholds;
  /** The containerd podvisor runs, when it does (under RootlessKit for a non-root user). */
  managedContainerd?: unknown;
}

export interface KubeletInputs {
  settings: KubeletSettings;
  /** The connected runtime (the CRI client of a runtime service; in tests, a runtime in process). */
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  /** The node's IP as pods see it (status.hostIP); 127.0.0.1 when unset. */
  hostIP?: string;
  /** The ConfigMaps and Secrets env references and volumes resolve against. */
  lookup: ObjectLookup;
  /** The registry the probe metrics are served from (/metrics/probes), or 'none' for an agent that serves no metrics. */
  probeMetrics: Registry | 'none';
  /** The cluster DNS pods are given while it is served (ClusterFirst); none: they fall back to the host's. */
  clusterDNS?: () => ClusterDNSSettings | undefined;
  /** Parts the caller builds itself instead (the bench: a recorder that notes events, a prober it measures). */
  parts?: Pick<PodKubeletOptions, 'statusManager' | 'events' | 'probeManager'>;
}

export function assembleKubelet(inputs: KubeletInputs): PodKubelet {
  const { settings } = inputs;
  const usage = new UsageCollector(inputs.runtime, inputs.clock);
  const kubelet = new PodKubelet({
    runtime: inputs.runtime,
    clock: inputs.clock,
    logger: inputs.logger,
    rootDir: settings.rootDir,
    nodeName: inputs.nodeName,
    ...(inputs.hostIP !== undefined ? { hostIP: inputs.hostIP } : {}),
    lookup: inputs.lookup,
    nodeAllocatable: settings.node,
    diskPressure: new DiskPressureObserver(settings.rootDir, settings.evictionHard),
    resourcePressure: new ResourcePressureObserver(settings.evictionHard),
    // Read only under MemoryPressure or PIDPressure, when the eviction manager ranks pods.
    podResourceStats: async (pod) => podResourceStats(await usage.sample(), pod.metadata?.uid ?? ''),
    ...(inputs.probeMetrics === 'none' ? { probeMetrics: false } : { registry: inputs.probeMetrics }),
    ...(settings.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: settings.crashLoopBackOffMaxSeconds } : {}),
    ...(inputs.clusterDNS ? { clusterDNS: inputs.clusterDNS } : {}),
    // containerd under RootlessKit: pod IPs are in its network namespace, reached through its port driver.
    ...(settings.managedContainerd && process.getuid?.() !== 0 ? { podAddress: rootlessPodAddress(settings.rootDir) } : {}),
    ...inputs.parts,
  });
  // A field the runtime cannot honour on this host is a Warning event on each pod that runs without it
  // (with several runtimes, the pods of the one of host processes).
  recordUnhonouredFields(
    kubelet,
    capabilitiesByRuntimeClass(inputs.runtime, (name) => (inputs.lookup as RuntimeClassLookup).runtimeClass?.(name)?.handler),
  );
  return kubelet;
}
