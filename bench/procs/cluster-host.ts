// The agent joined to a Kubernetes API server, alone in its process: startClusterNode (src/cluster) with
// the kubelet the agent assembles (src/agent/assemble.ts) on the ProcessRuntime, as
// `podvisor agent --kubeconfig` runs it. The bench reads this pid's CPU and RSS, and the node's API
// client's request counts by verb.

import { availableParallelism, totalmem } from 'node:os';
import type { ApiClient } from '../../src/cluster/client.js';
import { startClusterNode, type ClusterNode } from '../../src/cluster/index.js';
import { Registry } from 'prom-client';
import { assembleKubelet } from '../../src/agent/assemble.js';
import type { PodKubelet } from '../../src/kubelet/kubelet.js';
import { loadProcessRuntime } from '../../src/runtime/process-runtime.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { serve } from '../lib/child-server.js';
import { MeasureWindow } from '../lib/window.js';

export interface ClusterHostParams {
  kubeconfig: string;
  rootDir: string;
  nodeName: string;
  maxPods: number;
  version: string;
}

async function main(): Promise<void> {
  const window = new MeasureWindow();
  let joined: { node: ClusterNode; kubelet: PodKubelet } | undefined;

  /** The node's API client (kept inside ClusterNode's options), for its request counts. */
  const counts = (): Record<string, number> => {
    const client = (joined?.node as unknown as { o?: { client?: ApiClient } } | undefined)?.o?.client;
    return { ...(client?.counts ?? {}) };
  };

  async function join(p: ClusterHostParams): Promise<{ countsAvailable: boolean }> {
    const clock = new RealClock();
    const logger = streamLogger(process.stderr, 'warn');
    const runtime = new (await loadProcessRuntime()).ProcessRuntime({ rootDir: p.rootDir, clock, logger });
    joined = startClusterNode({
      kubeconfig: p.kubeconfig,
      nodeName: p.nodeName,
      version: p.version,
      runtime,
      internalIP: '127.0.0.1',
      clock,
      logger,
      createKubelet: (lookup, nodeName, hostIP) =>
        assembleKubelet({
          settings: { rootDir: p.rootDir, node: { cpuMilli: availableParallelism() * 1000, memoryBytes: totalmem(), pods: p.maxPods } },
          runtime,
          clock,
          logger,
          nodeName,
          hostIP,
          lookup,
          probeMetrics: new Registry(),
        }),
    });
    await joined.node.whenRegistered();
    await joined.node.whenListed();
    return { countsAvailable: (joined.node as unknown as { o?: { client?: ApiClient } }).o?.client !== undefined };
  }

  const shutdown = async () => {
    if (!joined) return;
    const { node, kubelet } = joined;
    joined = undefined;
    await kubelet.terminateAll({ gracePeriodSeconds: 0 }).catch(() => {});
    await node.stop().catch(() => {});
    await kubelet.close().catch(() => {});
  };

  serve(
    {
      join,
      counts,
      begin: () => window.begin(),
      read: () => window.read(),
      stop: async () => {
        const r = window.read();
        await shutdown();
        return r;
      },
    },
    shutdown,
  );
}

await main();
