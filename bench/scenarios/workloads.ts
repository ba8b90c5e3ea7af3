// The workload controllers' cost on a real `podvisor agent`: a Deployment of N replicas applied until
// Available against the same N pods posted directly in the same run, a rolling update of its N
// replicas against that start, and the agent's CPU and the controllers' writes while the Deployment
// sits idle against the same N bare pods (the controllers are event-driven: nothing to do, no cost).

import type { Deployment, Pod } from '../../src/api/types.js';
import { AgentProcess, socketGet, teardownAgent } from '../lib/agent-process.js';
import { benchPod, SLEEP_COMMAND, writeWorkspace } from '../lib/manifests.js';
import { readCpu } from '../lib/proc.js';
import { preciseNow } from '../lib/stats.js';
import { figure, type Figure, type ScenarioResult } from '../report/figures.js';
import { sleep, type Scenario } from './types.js';

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const POLL_MS = 100;

const readyPod = (p: Pod) => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Polls fetch until done(value) holds; resolves to the ms it took from t0. */
async function until<T>(what: string, t0: number, timeoutMs: number, fetch: () => Promise<T>, done: (v: T) => boolean): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done(await fetch())) return preciseNow() - t0;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs / 1000} s`);
    await sleep(POLL_MS);
  }
}

/** Runs fns with at most width of them at once, as a client with a bounded connection pool does. */
async function bounded(width: number, fns: Array<() => Promise<unknown>>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < fns.length) await fns[next++]!();
    }),
  );
}

function deployment(n: number): Deployment {
  const template = benchPod('unused', { command: SLEEP_COMMAND, terminationGracePeriodSeconds: 1 });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'bench', namespace: 'default' },
    spec: {
      replicas: n,
      selector: { matchLabels: { app: 'bench-deploy' } },
      template: { metadata: { labels: { app: 'bench-deploy' } }, spec: template.spec! },
    },
  };
}

export const workloads: Scenario = {
  name: 'workloads',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const idleMs = ctx.durationMs ?? 20_000;
    const ws = writeWorkspace('workloads', 0, () => ({}));
    ctx.defer(() => ws.remove());
    const figures: Figure[] = [];
    const notes: string[] = [];
    const agent = await AgentProcess.start(ws.rootDir, ['--max-pods', String(2 * n + 10)]);
    ctx.defer(() => teardownAgent(ws.rootDir, agent));
    const api = async <T>(path: string, method = 'GET', body?: unknown): Promise<T> => {
      const r = await socketGet(agent.socket, path, method, body);
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
      return JSON.parse(r.body) as T;
    };
    const pods = (selector: string) => api<{ items: Pod[] }>(`${PODS}?labelSelector=${encodeURIComponent(selector)}`).then((l) => l.items);
    const idleCpuMs = async () => {
      const c0 = readCpu(agent.pid);
      await sleep(idleMs);
      const c1 = readCpu(agent.pid);
      return (c1.self - c0.self) * 1000;
    };

    // The floor: N pods posted directly, until all are Ready; then their idle cost; then gone.
    ctx.log(`workloads N=${n}: ${n} pods posted directly`);
    let t0 = preciseNow();
    await bounded(
      8,
      Array.from({ length: n }, (_, i) => () => {
        const p = benchPod(`direct-${i}`, { command: SLEEP_COMMAND, terminationGracePeriodSeconds: 1 });
        p.metadata!.labels = { app: 'bench-direct' };
        return api(PODS, 'POST', p);
      }),
    );
    const directMs = await until(
      `${n} pods Ready`,
      t0,
      10 * 60_000,
      () => pods('app=bench-direct'),
      (l) => l.length === n && l.every(readyPod),
    );
    const directIdle = await idleCpuMs();
    await bounded(
      8,
      Array.from({ length: n }, (_, i) => () => api(`${PODS}/direct-${i}?gracePeriodSeconds=0`, 'DELETE')),
    );
    await until(
      'the direct pods gone',
      preciseNow(),
      5 * 60_000,
      () => pods('app=bench-direct'),
      (l) => l.length === 0,
    );

    // The Deployment: applied until Available with every replica.
    ctx.log(`workloads N=${n}: a Deployment of ${n} replicas`);
    t0 = preciseNow();
    await api(DEPLOYMENTS, 'POST', deployment(n));
    const get = () => api<Deployment>(`${DEPLOYMENTS}/bench`);
    const rolledOut = (d: Deployment) =>
      (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
      d.status?.updatedReplicas === n &&
      d.status?.availableReplicas === n &&
      d.status?.replicas === n;
    const deployMs = await until(`the Deployment Available with ${n} replicas`, t0, 10 * 60_000, get, rolledOut);
    figures.push(
      figure('deployment_available_ms', `Deployment of ${n} replicas applied → Available, against ${n} pods posted → Ready`, 'ms', deployMs, directMs, {
        text: '≤ 1.3× floor',
        on: 'ratio',
        op: '<=',
        value: 1.3,
      }),
    );

    // Idle: the controllers write nothing and cost nothing measurable beside the pods themselves.
    const before = await get();
    const rsBefore = await api<{ items: Array<{ metadata?: { resourceVersion?: string } }> }>('/apis/apps/v1/namespaces/default/replicasets');
    const deployIdle = await idleCpuMs();
    const after = await get();
    const rsAfter = await api<{ items: Array<{ metadata?: { resourceVersion?: string } }> }>('/apis/apps/v1/namespaces/default/replicasets');
    const writes =
      Number(before.metadata?.resourceVersion !== after.metadata?.resourceVersion) +
      rsAfter.items.filter((r, i) => r.metadata?.resourceVersion !== rsBefore.items[i]?.metadata?.resourceVersion).length;
    figures.push(
      figure('idle_agent_cpu_ms', `agent CPU over ${idleMs / 1000} s idle: a Deployment of ${n} against ${n} bare pods`, 'ms', deployIdle, directIdle, {
        text: '≤ 1.2× floor',
        on: 'ratio',
        op: '<=',
        value: 1.2,
      }),
      figure('idle_controller_writes', `Deployment and ReplicaSet writes over ${idleMs / 1000} s idle`, 'writes', writes, 0, {
        text: '= 0',
        on: 'agent',
        op: '=',
        value: 0,
      }),
    );

    // A rolling update of every replica (25 % surge and unavailable, the defaults), against the start.
    ctx.log(`workloads N=${n}: a rolling update of ${n} replicas`);
    const d = await get();
    d.spec!.template.metadata = { ...d.spec!.template.metadata, annotations: { 'bench/rollout': String(Date.now()) } };
    t0 = preciseNow();
    const updated = await api<Deployment>(`${DEPLOYMENTS}/bench`, 'PUT', d);
    const generation = updated.metadata?.generation ?? 0;
    const rollMs = await until(
      `the rolling update of ${n} replicas`,
      t0,
      15 * 60_000,
      get,
      (x) => (x.status?.observedGeneration ?? 0) >= generation && rolledOut(x),
    );
    figures.push(figure('rolling_update_ms', `rolling update of ${n} replicas, against ${n} pods posted → Ready`, 'ms', rollMs, directMs));
    notes.push("pods run `sleep 900` with no probe; Ready is the kubelet's (containers running); times are polled every 100 ms");
    return { scenario: 'workloads', size: n, figures, notes };
  },
};
