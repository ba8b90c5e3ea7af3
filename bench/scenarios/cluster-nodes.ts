// Many podvisor nodes, one cluster: a Deployment of N replicas to Available across five podvisor nodes
// against the same on one node, each under kube-apiserver with the real kube-scheduler and
// kube-controller-manager (test/cluster/node-fleet.ts, process runtime). Counts each node's API
// requests per pod start at the API server (its audit log, by the node's system:node identity), and
// each node's agent and runtime-service CPU and RSS, per 50 pods. Skipped, saying why, without the
// control plane or the kube-e2e binaries.

import { ApiClient } from '../../src/cluster/client.js';
import { loadKubeconfig } from '../../src/cluster/kubeconfig.js';
import { NodeFleet, deployment, runMarker, skipReason, type Json } from '../../test/cluster/node-fleet.js';
import { readCpu, readMemory } from '../lib/proc.js';
import { preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { mb, sleep, type Scenario, type ScenarioContext } from './types.js';

const SPREAD_NODES = 5;
const BASELINE_MS = 10_000;
const SETTLE_MS = 5_000;
const APP = 'bench';

interface NodeFigures {
  /** Requests by `verb resource` from the Deployment's creation to Available plus the settling time. */
  requests: Record<string, number>;
  /** The same node's requests over the idle baseline, per ms. */
  idlePerMs: number;
  /** CPU seconds of the agent and of its runtime service over the start window, and over the idle window. */
  startCpuS: { agent: number; runtime: number };
  idleCpuS: { agent: number; runtime: number };
  /** RSS (bytes) with no pods and with its share of the N pods. */
  rssEmpty: { agent: number; runtime: number };
  rssLoaded: { agent: number; runtime: number };
  pods: number;
}

interface LayoutFigures {
  nodes: number;
  availableMs: number;
  startWindowMs: number;
  idleWindowMs: number;
  perNode: Record<string, NodeFigures>;
}

const sum = (c: Record<string, number>) => Object.values(c).reduce((s, v) => s + v, 0);

async function measureLayout(nodeCount: number, n: number, ctx: ScenarioContext): Promise<LayoutFigures> {
  const fleet = new NodeFleet({ auditLog: true, nodeMonitorPeriodSeconds: 1 });
  let destroyed = false;
  const destroy = async () => {
    if (destroyed) return;
    destroyed = true;
    await fleet.destroy({ deleteNamespacePods: 'default' });
  };
  ctx.defer(destroy);
  const names = Array.from({ length: nodeCount }, (_, i) => `bench-${i + 1}`);
  ctx.log(`cluster-nodes N=${n} on ${nodeCount} node(s): starting the control plane and the agents`);
  await fleet.start();
  // Room for every pod on any node: the layouts differ in node count only.
  await Promise.all(names.map((name) => fleet.startAgent({ name, maxPods: n + 10 })));
  await fleet.waitReady(names);
  const pids = async (name: string) => ({ agent: fleet.agentPid(name)!, runtime: (await fleet.runtimeServicePid(name))! });
  const procs = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await pids(name)] as const)));
  const cpu = () => Object.fromEntries(names.map((name) => [name, { agent: readCpu(procs[name]!.agent).self, runtime: readCpu(procs[name]!.runtime).self }]));
  const rss = () =>
    Object.fromEntries(names.map((name) => [name, { agent: readMemory(procs[name]!.agent).rss, runtime: readMemory(procs[name]!.runtime).rss }]));

  await sleep(2_000);
  const b0 = Date.now();
  await sleep(BASELINE_MS);
  const b1 = Date.now();
  const rssEmpty = rss();

  const admin = new ApiClient(loadKubeconfig(fleet.cp.adminKubeconfig), { userAgent: 'podvisor-bench' });
  ctx.defer(() => admin.close());
  ctx.log(`cluster-nodes N=${n} on ${nodeCount} node(s): creating the Deployment`);
  const c0 = cpu();
  const s0 = Date.now();
  const t0 = preciseNow();
  await admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment(APP, n, runMarker()) });
  const deadline = Date.now() + 120_000 + n * 1_000;
  let availableMs = NaN;
  while (Date.now() < deadline) {
    const d = await admin.request<Json>('GET', `/apis/apps/v1/namespaces/default/deployments/${APP}`);
    if (d.status?.availableReplicas === n) {
      availableMs = preciseNow() - t0;
      break;
    }
    await sleep(100);
  }
  if (!Number.isFinite(availableMs)) throw new Error(`${n} replicas not Available on ${nodeCount} node(s) within ${deadline - s0} ms`);
  await sleep(SETTLE_MS);
  const s1 = Date.now();
  const c1 = cpu();
  const rssLoaded = rss();
  const idleMs = ctx.durationMs ?? 20_000;
  ctx.log(`cluster-nodes N=${n} on ${nodeCount} node(s): Available in ${Math.round(availableMs)} ms; ${idleMs} ms idle`);
  await sleep(idleMs);
  const c2 = cpu();

  const baseline = await fleet.requestsByNode(b0, b1);
  const during = await fleet.requestsByNode(s0, s1);
  const pods = (await admin.request<Json>('GET', '/api/v1/namespaces/default/pods', { query: { labelSelector: `app=${APP}` } })).items as Json[];
  const perNode: Record<string, NodeFigures> = {};
  for (const name of names) {
    perNode[name] = {
      requests: during[name] ?? {},
      idlePerMs: sum(baseline[name] ?? {}) / (b1 - b0),
      startCpuS: { agent: c1[name]!.agent - c0[name]!.agent, runtime: c1[name]!.runtime - c0[name]!.runtime },
      idleCpuS: { agent: c2[name]!.agent - c1[name]!.agent, runtime: c2[name]!.runtime - c1[name]!.runtime },
      rssEmpty: rssEmpty[name]!,
      rssLoaded: rssLoaded[name]!,
      pods: pods.filter((p) => p.spec.nodeName === name).length,
    };
  }
  admin.close();
  await destroy();
  return { nodes: nodeCount, availableMs, startWindowMs: s1 - s0, idleWindowMs: idleMs, perNode };
}

/** Requests per pod start of one node: its requests in the start window less its idle rate over it, per pod it started. */
function requestsPerPod(f: NodeFigures, windowMs: number): number {
  return f.pods ? (sum(f.requests) - f.idlePerMs * windowMs) / f.pods : NaN;
}

/** Averages over the nodes that started pods. */
function summarize(l: LayoutFigures, n: number) {
  const nodes = Object.values(l.perNode);
  const per50 = 50 / n;
  const reqs = nodes.filter((f) => f.pods > 0).map((f) => requestsPerPod(f, l.startWindowMs));
  const total = (pick: (f: NodeFigures) => number) => nodes.reduce((s, f) => s + pick(f), 0);
  const byWhat: Record<string, number> = {};
  for (const f of nodes) for (const [k, v] of Object.entries(f.requests)) byWhat[k] = (byWhat[k] ?? 0) + v;
  return {
    availableMs: l.availableMs,
    requestsPerPod: reqs.reduce((s, v) => s + v, 0) / reqs.length,
    startCpuSPer50: total((f) => f.startCpuS.agent + f.startCpuS.runtime) * per50,
    idleCpuPctPer50: ((100 * total((f) => f.idleCpuS.agent + f.idleCpuS.runtime)) / (l.idleWindowMs / 1000)) * per50,
    rssMbPerNode: mb(total((f) => f.rssLoaded.agent + f.rssLoaded.runtime)) / nodes.length,
    rssGrowthMbPer50: mb(total((f) => f.rssLoaded.agent + f.rssLoaded.runtime - f.rssEmpty.agent - f.rssEmpty.runtime)) * per50,
    podsPerNode: Object.fromEntries(Object.entries(l.perNode).map(([k, f]) => [k, f.pods])),
    requestsByWhat: Object.fromEntries(Object.entries(byWhat).map(([k, v]) => [k, +(v / n).toFixed(2)])),
  };
}

export const clusterNodes: Scenario = {
  name: 'cluster-nodes',
  defaultSizes: [50, 250],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const skip = skipReason();
    if (skip) {
      ctx.log(`cluster-nodes: skipped: ${skip}`);
      return { scenario: 'cluster-nodes', size: n, figures: [], notes: [`skipped: ${skip}`] };
    }
    const spread = await measureLayout(SPREAD_NODES, n, ctx);
    const one = await measureLayout(1, n, ctx);
    const s = summarize(spread, n);
    const o = summarize(one, n);
    return {
      scenario: 'cluster-nodes',
      size: n,
      figures: [
        figure('available_ms', `Deployment of ${n} to Available: ${SPREAD_NODES} nodes (agent) vs 1 node (floor)`, 'ms', s.availableMs, o.availableMs),
        figure('requests_per_pod', 'API requests per pod start, per node', 'count', s.requestsPerPod, o.requestsPerPod),
        figure('start_cpu_s_per_50', 'agent + runtime service CPU to start 50 pods (all nodes)', 's', s.startCpuSPer50, o.startCpuSPer50),
        figure('idle_cpu_pct_per_50', 'agent + runtime service CPU per 50 idle pods (all nodes)', '%', s.idleCpuPctPer50, o.idleCpuPctPer50),
        figure('rss_growth_mb_per_50', 'agent + runtime service RSS growth per 50 pods (all nodes)', 'MB', s.rssGrowthMbPer50, o.rssGrowthMbPer50),
        figure('rss_mb_per_node', 'agent + runtime service RSS per node with its pods', 'MB', s.rssMbPerNode, o.rssMbPerNode),
      ],
      notes: [
        `agent column: ${SPREAD_NODES} podvisor nodes, floor column: 1 node, each in its own cluster (kube-apiserver 1.20.2, etcd, kube-scheduler and kube-controller-manager) on this host, process runtime, pods without requests (sleep)`,
        `pods per node: ${JSON.stringify(s.podsPerNode)}`,
        `to Available: from the Deployment's POST to a GET showing ${n} available replicas (polled every 100 ms)`,
        `requests per pod start: each node's requests at the API server (audit log, user system:node:NAME) from the POST until Available plus ${SETTLE_MS / 1000} s, less its own idle rate (lease, node status) over that time, per pod it started; averaged over the nodes. Per pod, all nodes, ${SPREAD_NODES} nodes: ${JSON.stringify(s.requestsByWhat)}; 1 node: ${JSON.stringify(o.requestsByWhat)}`,
        `CPU: user+sys of each node's agent and runtime service processes (/proc), summed over the nodes, scaled to 50 pods; idle over ${spread.idleWindowMs / 1000} s after start`,
      ],
      raw: { spread, one },
    };
  },
};
