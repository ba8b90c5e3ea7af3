// Exec probes: N sleeping pods, each with an exec liveness probe `true` every 10 s, against a floor
// spawning `true` at the same rate with child_process.spawn.

import { AgentClient } from '../lib/agent-client.js';
import { FloorClient } from '../lib/floor-client.js';
import { writeWorkspace } from '../lib/manifests.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { SpawnFloorParams } from '../procs/spawn-floor.js';
import { mb, sleep, type Scenario } from './types.js';

const PERIOD_S = 10;
const COMMAND = ['true'];

export const execProbes: Scenario = {
  name: 'exec-probes',
  defaultSizes: [100, 1000],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    // Whole periods, so every worker runs the same number of probes inside the window.
    const durationMs = ctx.durationMs ?? 2 * PERIOD_S * 1000;
    // Workers start with up to one period of jitter and may first find the container not yet
    // running; after one period plus a margin every worker ticks steadily.
    const warmupMs = ctx.warmupMs ?? PERIOD_S * 1000 + 1_000;

    const ws = writeWorkspace('exec', n, () => ({
      livenessProbe: { exec: { command: [...COMMAND] }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
    }));
    ctx.defer(() => ws.remove());
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    await agent.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [] });
    ctx.log(`exec-probes N=${n}: starting ${n} pods`);
    await agent.startPods(ws.manifestDir);
    await agent.waitFor({ condition: 'running', timeoutMs: 30_000 + n * 50 });
    ctx.log(`exec-probes N=${n}: all Running; settling ${warmupMs} ms, measuring ${durationMs} ms`);
    await sleep(warmupMs);
    await agent.begin();
    await sleep(durationMs);
    const aw = await agent.read();
    const agentMem = agent.memory();
    await agent.stop();

    const floor = await FloorClient.start<SpawnFloorParams>('spawn-floor');
    ctx.defer(() => floor.kill());
    ctx.log(`exec-probes N=${n}: floor, measuring ${durationMs} ms`);
    await floor.run({ count: n, periodMs: PERIOD_S * 1000, command: COMMAND });
    await sleep(1_000);
    await floor.begin();
    await sleep(durationMs);
    const fw = await floor.read();
    const floorMem = floor.memory();
    await floor.stop();

    const agentExecs = aw.counters['probes'] ?? 0;
    const floorExecs = (fw.counters['ok'] ?? 0) + (fw.counters['failed'] ?? 0);
    const notes = [
      `expected ${(n / PERIOD_S).toFixed(1)} execs/s (one per pod per ${PERIOD_S} s); the CPU of \`true\` itself is the child's, in neither figure`,
    ];
    if (agentExecs === 0) notes.push('no probe starts reported by the prober: CPU per exec cannot be computed');

    return {
      scenario: 'exec-probes',
      size: n,
      figures: [
        figure('execs_per_s', 'execs/s', '1/s', agentExecs / (aw.wallMs / 1000), floorExecs / (fw.wallMs / 1000)),
        figure(
          'cpu_ms_per_exec',
          'CPU per exec',
          'ms',
          agentExecs ? (1000 * aw.cpuS) / agentExecs : null,
          floorExecs ? (1000 * fw.cpuS) / floorExecs : null,
          targets.execCpuRatio,
        ),
        figure('cpu_pct_core', 'CPU of one core', '%', (100 * aw.cpuS) / (aw.wallMs / 1000), (100 * fw.cpuS) / (fw.wallMs / 1000)),
        figure('rss_mb', 'RSS at end', 'MB', mb(agentMem.rss), mb(floorMem.rss)),
        figure('lateness_p50_ms', 'schedule lateness p50', 'ms', aw.lateness.p50, fw.lateness.p50),
        figure('lateness_p99_ms', 'schedule lateness p99', 'ms', aw.lateness.p99, fw.lateness.p99),
        figure('lateness_max_ms', 'schedule lateness max', 'ms', aw.lateness.max, fw.lateness.max),
        figure('exec_errors', 'exec errors', 'count', aw.counters['probe_errored'] ?? 0, fw.counters['errors'] ?? 0, targets.probeErrors),
        figure('exec_failures', 'exec failures', 'count', aw.counters['probe_failed'] ?? 0, fw.counters['failed'] ?? 0, targets.probeErrors),
      ],
      notes,
      raw: { agentWindow: aw, floorWindow: fw, agentMemory: agentMem, floorMemory: floorMem },
    };
  },
};
