// The agent joined to a real kube-apiserver (../shared/tools/kube-control-plane): N pods created
// bound to the node (spec.nodeName, as the scheduler's binding leaves them), timed from the create
// reply to the first watch event showing every container Running; the node's API requests per pod
// start; and its CPU and RSS with the N pods, against the same pods run standalone (agent host).
// Skipped, with the reason, when the control plane's binaries are not built.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { ApiClient } from '../../src/cluster/client.js';
import { loadKubeconfig } from '../../src/cluster/kubeconfig.js';
import { ControlPlane, skipReason } from '../../test/cluster/control-plane.js';
import { AgentClient } from '../lib/agent-client.js';
import { ChildHandle } from '../lib/child-handle.js';
import { benchPod, podName, writeWorkspace } from '../lib/manifests.js';
import { readCpu, readMemory } from '../lib/proc.js';
import { distribution, preciseNow } from '../lib/stats.js';
import type { WindowReport } from '../lib/window.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { ClusterHostParams } from '../procs/cluster-host.js';
import { mb, sleep, type Scenario } from './types.js';

const NODE = 'podvisor-node';
const BASELINE_MS = 10_000;
const SETTLE_MS = 5_000;

function allRunning(p: Pod): boolean {
  const cs = p.status?.containerStatuses ?? [];
  return cs.length > 0 && cs.every((c) => c.state?.running !== undefined);
}

const total = (c: Record<string, number>) => Object.values(c).reduce((s, v) => s + v, 0);
const minus = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - (b[k] ?? 0)]));

export const cluster: Scenario = {
  name: 'cluster',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const skip = skipReason();
    if (skip) {
      ctx.log(`cluster: skipped: ${skip}`);
      return { scenario: 'cluster', size: n, figures: [], notes: [`skipped: ${skip}`] };
    }
    const idleMs = ctx.durationMs ?? 20_000;
    const cp = new ControlPlane();
    ctx.defer(() => cp.destroy());
    ctx.log(`cluster N=${n}: starting etcd and kube-apiserver`);
    await cp.start();
    const rootDir = mkdtempSync(join(tmpdir(), 'podvisor-bench-cluster-'));
    ctx.defer(() => rmSync(rootDir, { recursive: true, force: true }));

    const host = await ChildHandle.start('cluster-host');
    ctx.defer(() => host.kill());
    await host.call('join', { kubeconfig: cp.nodeKubeconfig, rootDir, nodeName: NODE, maxPods: n + 10, version: '0.1.0' } satisfies ClusterHostParams, 120_000);
    ctx.log(`cluster N=${n}: node registered; ${BASELINE_MS} ms of idle API traffic as the baseline`);

    const admin = new ApiClient(loadKubeconfig(cp.adminKubeconfig), { userAgent: 'podvisor-bench' });
    ctx.defer(() => admin.close());
    const seenRunning = new Map<string, number>();
    const watch = await admin.openStream('/api/v1/namespaces/default/pods', { watch: 'true', fieldSelector: `spec.nodeName=${NODE}` }, 30 * 60_000);
    ctx.defer(() => watch.abort());
    let buf = '';
    watch.res.setEncoding('utf8');
    watch.res.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const ev = JSON.parse(line) as { type: string; object: Pod };
          const name = ev.object.metadata?.name ?? '';
          if (!seenRunning.has(name) && allRunning(ev.object)) seenRunning.set(name, preciseNow());
        } catch {
          // a partial or non-JSON line
        }
      }
    });
    watch.res.on('error', () => {});

    const c0 = await host.call<Record<string, number>>('counts');
    await sleep(BASELINE_MS);
    const c1 = await host.call<Record<string, number>>('counts');
    const baselinePerMs = total(minus(c1, c0)) / BASELINE_MS;

    ctx.log(`cluster N=${n}: creating ${n} pods bound to ${NODE}`);
    const bound = new Map<string, number>();
    const tStart = preciseNow();
    const cStart = await host.call<Record<string, number>>('counts');
    for (let i = 0; i < n; i++) {
      const name = podName('kube', i);
      const pod = benchPod(name, { terminationGracePeriodSeconds: 2 });
      pod.spec!.nodeName = NODE;
      await admin.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
      bound.set(name, preciseNow());
    }
    const deadline = Date.now() + 120_000 + n * 500;
    while (seenRunning.size < n && Date.now() < deadline) await sleep(100);
    await sleep(SETTLE_MS);
    const cEnd = await host.call<Record<string, number>>('counts');
    const startWindowMs = preciseNow() - tStart;
    const startReqs = minus(cEnd, cStart);
    const perPod = (total(startReqs) - baselinePerMs * startWindowMs) / n;

    ctx.log(`cluster N=${n}: ${seenRunning.size} Running; idle window ${idleMs} ms joined`);
    await host.call('begin');
    const j0 = readCpu(host.pid);
    await sleep(idleMs);
    const jw = await host.call<WindowReport>('read');
    const j1 = readCpu(host.pid);
    const joinedMem = readMemory(host.pid);
    await host.stop(undefined, 120_000);

    // The same pods standalone, over the same window.
    const ws = writeWorkspace('solo', n, () => ({}));
    ctx.defer(() => ws.remove());
    const solo = await AgentClient.start();
    ctx.defer(() => solo.kill());
    await solo.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [] });
    const started = await solo.startPods(ws.manifestDir);
    const sr = await solo.waitFor({ condition: 'running', pods: started.pods, timeoutMs: 30_000 + n * 100 });
    await sleep(SETTLE_MS);
    ctx.log(`cluster N=${n}: idle window ${idleMs} ms standalone`);
    await solo.begin();
    await sleep(idleMs);
    const sw = await solo.read();
    const soloMem = solo.memory();
    await solo.stop();

    const lat = [...bound].filter(([name]) => seenRunning.has(name)).map(([name, t]) => seenRunning.get(name)! - t);
    const d = distribution(lat);
    const s = distribution(Object.values(sr.times));
    const notes = [
      'kube-apiserver 1.20.2 and etcd from ../shared/tools/kube-control-plane on 127.0.0.1 (no scheduler: pods are created with spec.nodeName, bound from their creation)',
      "bound → Running: from the create reply to the first event of a watch (admin client, fieldSelector spec.nodeName) showing every container Running; the floor column is the standalone agent's own to-Running p50/p99 for the same pods, from reading the manifests",
      `requests per pod start: the node's API client's count from the first create until all were Running plus ${SETTLE_MS / 1000} s, minus its idle rate (${(baselinePerMs * 1000).toFixed(2)}/s: lease, node status) over that time; by verb: ${JSON.stringify(startReqs)}`,
      `CPU and RSS: the joined agent process and the standalone agent host with the same ${n} sleeping pods, each over ${idleMs / 1000} s after start`,
    ];
    if (seenRunning.size < n) notes.push(`${n - seenRunning.size} of ${n} pods were never seen Running`);
    return {
      scenario: 'cluster',
      size: n,
      figures: [
        figure('bound_running_p50_ms', 'pod bound → Running in the API server p50', 'ms', d.p50, s.p50),
        figure('bound_running_p99_ms', 'pod bound → Running in the API server p99', 'ms', d.p99, s.p99, {
          text: '≤ 5000 ms (SLO)',
          on: 'agent',
          op: '<=',
          value: 5000,
        }),
        figure('requests_per_pod', 'API server requests per pod start', 'count', perPod, null),
        figure('cpu_pct', `agent CPU with ${n} pods, joined vs standalone`, '%', (100 * jw.cpuS) / (jw.wallMs / 1000), (100 * sw.cpuS) / (sw.wallMs / 1000)),
        figure('rss_mb', `agent RSS with ${n} pods, joined vs standalone`, 'MB', mb(joinedMem.rss), mb(soloMem.rss)),
      ],
      notes,
      raw: {
        lat,
        standaloneRunning: sr.times,
        startReqs,
        baselinePerMs,
        joinedWindow: jw,
        joinedProcCpuS: j1.self - j0.self,
        soloWindow: sw,
        joinedMem,
        soloMem,
      },
    };
  },
};
