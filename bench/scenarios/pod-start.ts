// Pod start: from reading the manifests to every container Running, and to Ready behind a trivial
// readiness probe, for N pods at once; against a floor spawning the same processes raw.

import { AgentClient } from '../lib/agent-client.js';
import { FloorClient } from '../lib/floor-client.js';
import { SLEEP_COMMAND, writeWorkspace } from '../lib/manifests.js';
import { distribution } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { SleepFloorParams, SleepFloorStart } from '../procs/sleep-floor.js';
import { mb, sleep, type Scenario } from './types.js';

const READY_COMMAND = ['true'];
const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
const READY_PERIOD_S = 1;
/** Small sizes are repeated so their percentiles rest on at least this many pods. */
const MIN_SAMPLES = 10;

export const podStart: Scenario = {
  name: 'pod-start',
  defaultSizes: [1, 10, 100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const rounds = Math.max(1, Math.ceil(MIN_SAMPLES / n));
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    const workspaces = Array.from({ length: rounds }, (_, r) =>
      writeWorkspace(`start${r}`, n, () => ({
        readinessProbe: { exec: { command: [...READY_COMMAND] }, periodSeconds: READY_PERIOD_S, timeoutSeconds: 1 },
      })),
    );
    for (const ws of workspaces) ctx.defer(() => ws.remove());
    const loaded = await agent.load({ rootDir: workspaces[0]!.rootDir, maxPods: n + 10, noteReasons: [] });
    // Let the prober outlive its start-up jitter window (§4.2) so Ready measures the agent, not the
    // deliberate random delay of a freshly started kubelet.
    await sleep(Math.max(0, loaded.createdAt + READY_PERIOD_S * 1000 + 100 - Date.now()));

    const running: number[] = [];
    /** The slowest pod of each round. */
    const slowest: number[] = [];
    const floorSlowest: number[] = [];
    const ready: number[] = [];
    let loadMs = 0;
    let rssAfterStart = 0;
    ctx.log(`pod-start N=${n}: ${rounds} round(s)`);
    for (const ws of workspaces) {
      const started = await agent.startPods(ws.manifestDir);
      loadMs += started.loadMs;
      const r = await agent.waitFor({ condition: 'running', pods: started.pods, timeoutMs: 30_000 + n * 100 });
      const q = await agent.waitFor({ condition: 'ready', pods: started.pods, timeoutMs: 30_000 + n * 100 });
      running.push(...Object.values(r.times));
      slowest.push(Math.max(...Object.values(r.times)));
      ready.push(...Object.values(q.times));
      rssAfterStart = Math.max(rssAfterStart, agent.memory().rss);
      await agent.terminateAll(0);
    }
    await agent.stop();

    const floor = await FloorClient.start<SleepFloorParams, SleepFloorStart>('sleep-floor');
    ctx.defer(() => floor.kill());
    const floorRunning: number[] = [];
    const floorReady: number[] = [];
    let floorRss = 0;
    let floorReadMs = 0;
    for (const ws of workspaces) {
      const res = await floor.run({ count: n, command: SLEEP_COMMAND, readyCommand: READY_COMMAND, manifestDir: ws.manifestDir });
      floorReadMs += res.readMs;
      floorRunning.push(...res.running);
      floorSlowest.push(Math.max(...res.running));
      floorReady.push(...res.ready);
      floorRss = Math.max(floorRss, floor.memory().rss);
      await floor.clear();
    }
    await floor.stop();

    const a = distribution(running);
    const ar = distribution(ready);
    const f = distribution(floorRunning);
    const fr = distribution(floorReady);
    const notes = [
      `${a.n} pod starts over ${rounds} round(s); times from the start of reading the manifests`,
      'floor: read and JSON.parse the same files, spawn every process at once, run the readiness command once each',
      `Ready includes the first readiness probe (exec \`true\`, period ${READY_PERIOD_S} s); the floor's Ready is the same command run once after the spawn`,
    ];
    return {
      scenario: 'pod-start',
      size: n,
      figures: [
        figure('running_p50_ms', 'to Running p50', 'ms', a.p50, f.p50),
        figure('running_p99_ms', 'to Running p99', 'ms', a.p99, f.p99),
        figure('running_all_ms', 'to all Running (slowest pod)', 'ms', a.max, f.max),
        figure('overhead_p50_ms', 'overhead per pod p50 (agent − floor)', 'ms', a.p50 - f.p50, 0, targets.startOverheadP50),
        figure('overhead_p99_ms', 'overhead per pod p99 (agent − floor)', 'ms', a.p99 - f.p99, 0),
        // Pods start together on one event loop, so a pod's latency includes the work of the pods
        // ahead of it; the slowest pod's excess spread over all pods is the extra work per pod.
        figure('overhead_amortized_ms', "extra work per pod (slowest − floor's) / N", 'ms', (mean(slowest) - mean(floorSlowest)) / n, 0),
        figure('ready_p50_ms', 'to Ready p50', 'ms', ar.p50, fr.p50),
        figure('ready_p99_ms', 'to Ready p99', 'ms', ar.p99, fr.p99),
        figure('read_ms_per_pod', 'manifest reading per pod', 'ms', loadMs / a.n, floorReadMs / f.n),
        figure('rss_mb', 'RSS after start', 'MB', mb(rssAfterStart), mb(floorRss)),
      ],
      notes,
      raw: { running, ready, floorRunning, floorReady, loadMs, floorReadMs },
    };
  },
};
