// Idle cost: N sleeping pods without probes, held as `podvisor agent` holds them (through the process
// runtime service), against a floor holding the same processes with nothing else to do, measured side
// by side over the same window. The agent's figures are the agent's and the service's together.

import { AgentClient } from '../lib/agent-client.js';
import { FloorClient } from '../lib/floor-client.js';
import { SLEEP_COMMAND, writeWorkspace } from '../lib/manifests.js';
import { cpuOf, memoryOf, runtimeServiceProcesses } from '../lib/proc.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { SleepFloorParams, SleepFloorStart } from '../procs/sleep-floor.js';
import { mb, sleep, type Scenario } from './types.js';

export const idle: Scenario = {
  name: 'idle',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const durationMs = ctx.durationMs ?? 60_000;
    const warmupMs = ctx.warmupMs ?? 3_000;

    const ws = writeWorkspace('idle', n, () => ({}));
    ctx.defer(() => ws.remove());
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    const floor = await FloorClient.start<SleepFloorParams, SleepFloorStart>('sleep-floor');
    ctx.defer(() => floor.kill());
    const { runtimePid } = await agent.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [], viaService: true });
    if (runtimePid === undefined) throw new Error('no runtime service pid');
    // The service outlives the agent host: it stops once its pods are gone and no agent follows it.
    ctx.defer(() => {
      try {
        process.kill(runtimePid, 'SIGTERM');
      } catch {
        // gone already
      }
    });
    ctx.log(`idle N=${n}: starting ${n} pods, and the floor's ${n} processes`);
    await agent.startPods(ws.manifestDir);
    await agent.waitFor({ condition: 'running', timeoutMs: 30_000 + n * 50 });
    await floor.run({ count: n, command: SLEEP_COMMAND });
    // Both idle side by side over the same window: neither disturbs the other, and both see the
    // same machine.
    ctx.log(`idle N=${n}: settling ${warmupMs} ms, measuring ${durationMs} ms`);
    await sleep(warmupMs);
    await Promise.all([agent.begin(), floor.begin()]);
    const proc0 = agent.cpu();
    const service = runtimeServiceProcesses(runtimePid);
    const service0 = cpuOf(service);
    await sleep(durationMs);
    const [aw, fw] = await Promise.all([agent.read(), floor.read()]);
    const proc1 = agent.cpu();
    const serviceCpuS = cpuOf(service) - service0;
    const agentOnlyMem = agent.memory();
    const serviceMem = memoryOf(service);
    const agentMem = { rss: agentOnlyMem.rss + serviceMem.rss, hwm: agentOnlyMem.hwm + serviceMem.hwm };
    const cpuS = aw.cpuS + serviceCpuS;
    const floorMem = floor.memory();
    await Promise.all([agent.stop(), floor.stop()]);

    return {
      scenario: 'idle',
      size: n,
      figures: [
        figure(
          'cpu_pct_core',
          'CPU of one core (agent + service)',
          '%',
          (100 * cpuS) / (aw.wallMs / 1000),
          (100 * fw.cpuS) / (fw.wallMs / 1000),
          targets.idleCpu,
        ),
        figure('cpu_s', 'CPU over the window', 's', cpuS, fw.cpuS),
        figure('service_cpu_s', 'of which the runtime service', 's', serviceCpuS, null),
        figure('rss_mb', 'RSS at end (agent + service)', 'MB', mb(agentMem.rss), mb(floorMem.rss), targets.idleRss),
        figure('service_rss_mb', 'of which the runtime service', 'MB', mb(serviceMem.rss), null),
        figure('rss_peak_mb', 'RSS peak', 'MB', mb(agentMem.hwm), mb(floorMem.hwm)),
      ],
      notes: [`window ${(aw.wallMs / 1000).toFixed(1)} s; events in window: ${JSON.stringify(aw.events)}`],
      raw: {
        agentWindow: aw,
        floorWindow: fw,
        agentProcCpuS: proc1.self - proc0.self,
        serviceCpuS,
        agentMemory: agentOnlyMem,
        serviceMemory: serviceMem,
        floorMemory: floorMem,
      },
    };
  },
};
