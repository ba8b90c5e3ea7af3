// Every scenario, by name, in the order a full run goes through them.

import type { ScenarioName } from '../options.js';
import { execProbes } from './exec-probes.js';
import { failureDetection } from './failure-detection.js';
import { idle } from './idle.js';
import { manifestParse } from './manifest-parse.js';
import { podStart } from './pod-start.js';
import { probeHistory } from './probe-history.js';
import { probeLoad } from './probe-load.js';
import { startup } from './startup.js';
import { runtimeService } from './runtime-service.js';
import { serviceProxy } from './service-proxy.js';
import { ingress } from './ingress.js';
import type { Scenario } from './types.js';

export const scenarios: Record<ScenarioName, Scenario> = {
  'probe-load': probeLoad,
  'probe-history': probeHistory,
  'exec-probes': execProbes,
  'pod-start': podStart,
  'failure-detection': failureDetection,
  idle,
  'manifest-parse': manifestParse,
  startup,
  clients: (await import('./clients.js')).clients,
  'runtime-service': runtimeService,
  containerd: { name: 'containerd', defaultSizes: [1, 10], sizeIsPods: true, run: async (n, ctx) => (await import('./containerd.js')).containerd.run(n, ctx) },
  agent: (await import('./agent.js')).agent,
  'agent-restart': (await import('./agent-restart.js')).agentRestart,
  'kube-api': (await import('./kube-api.js')).kubeApi,
  cluster: (await import('./cluster.js')).cluster,
  'cluster-nodes': (await import('./cluster-nodes.js')).clusterNodes,
  'service-proxy': serviceProxy,
  ingress,
  'endpoint-update': (await import('./endpoint-update.js')).endpointUpdate,
  'cluster-dns': (await import('./cluster-dns.js')).clusterDns,
  pm2: (await import('./pm2.js')).pm2,
  workloads: (await import('./workloads.js')).workloads,
  spawner: (await import('./spawner.js')).spawner,
  scheduler: (await import('./scheduler.js')).scheduler,
};
