// The agent with the process runtime as its own CRI service, as `podvisor up` runs: pod start to
// Running against the spawn floor; exec liveness probes, with the CPU of agent and service together
// per exec against the spawn floor; each one's RSS; then kill -9 of the agent and the time a new
// agent takes to have every pod's status current again (adopting, not restarting).

import { AgentClient } from '../lib/agent-client.js';
import { descendants, killSet } from '../lib/agent-process.js';
import { FloorClient } from '../lib/floor-client.js';
import { SLEEP_COMMAND, writeWorkspace } from '../lib/manifests.js';
import { cpuOf, memoryOf, readMemory, runtimeServiceProcesses } from '../lib/proc.js';
import { distribution } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { SleepFloorParams, SleepFloorStart } from '../procs/sleep-floor.js';
import type { SpawnFloorParams } from '../procs/spawn-floor.js';
import { mb, sleep, type Scenario } from './types.js';

const PERIOD_S = 10;
const COMMAND = ['true'];

export const runtimeService: Scenario = {
  name: 'runtime-service',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const durationMs = ctx.durationMs ?? 2 * PERIOD_S * 1000;
    const warmupMs = ctx.warmupMs ?? PERIOD_S * 1000 + 1_000;
    const ws = writeWorkspace('svc', n, () => ({
      livenessProbe: { exec: { command: [...COMMAND] }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
    }));
    ctx.defer(() => ws.remove());
    let servicePid: number | undefined;
    ctx.defer(() => {
      if (servicePid) {
        // The containers outlive the service by design: a failed run must not leave them behind.
        killSet(descendants(servicePid));
        try {
          process.kill(servicePid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });

    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    const loaded = await agent.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [], viaService: true });
    servicePid = loaded.runtimePid;
    if (!servicePid) throw new Error('the runtime service did not report its pid');
    ctx.log(`runtime-service N=${n}: starting ${n} pods through the service (pid ${servicePid})`);
    const started = await agent.startPods(ws.manifestDir);
    const r = await agent.waitFor({ condition: 'running', pods: started.pods, timeoutMs: 30_000 + n * 100 });
    const running = Object.values(r.times);

    ctx.log(`runtime-service N=${n}: all Running; settling ${warmupMs} ms, measuring ${durationMs} ms`);
    await sleep(warmupMs);
    await agent.begin();
    const service = runtimeServiceProcesses(servicePid);
    const svcCpu0 = cpuOf(service);
    await sleep(durationMs);
    const aw = await agent.read();
    const serviceCpuS = cpuOf(service) - svcCpu0;
    const agentRss = agent.memory().rss;
    const serviceRss = memoryOf(service).rss;

    ctx.log(`runtime-service N=${n}: kill -9 of the agent, then a new agent adopts the pods`);
    await agent.killHard();
    const again = await AgentClient.start();
    ctx.defer(() => again.kill());
    await again.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [], viaService: true });
    const restarted = await again.startPods(ws.manifestDir);
    const rr = await again.waitFor({ condition: 'running', pods: restarted.pods, timeoutMs: 30_000 + n * 100 });
    const current = Object.values(rr.times);
    // Teardown is not measured; when it outlasts the call, the deferred cleanup kills what is left.
    const teardownNotes: string[] = [];
    const td0 = Date.now();
    try {
      await again.terminateAll(0);
      await again.stop();
      process.kill(servicePid, 'SIGTERM');
    } catch (err) {
      teardownNotes.push(`terminating the ${n} pods did not finish (${(err as Error).message.split('\n')[0]}, after ${Date.now() - td0} ms): killed instead`);
      await again.kill();
      killSet(descendants(servicePid));
      try {
        process.kill(servicePid, 'SIGKILL');
      } catch {
        // gone
      }
    }

    const sleepFloor = await FloorClient.start<SleepFloorParams, SleepFloorStart>('sleep-floor');
    ctx.defer(() => sleepFloor.kill());
    const fs = await sleepFloor.run({ count: n, command: SLEEP_COMMAND, readyCommand: COMMAND, manifestDir: ws.manifestDir });
    const floorRss = readMemory(sleepFloor.pid).rss;
    await sleepFloor.clear();
    await sleepFloor.stop();

    const spawnFloor = await FloorClient.start<SpawnFloorParams>('spawn-floor');
    ctx.defer(() => spawnFloor.kill());
    await spawnFloor.run({ count: n, periodMs: PERIOD_S * 1000, command: COMMAND });
    await sleep(1_000);
    await spawnFloor.begin();
    await sleep(durationMs);
    const fw = await spawnFloor.read();
    await spawnFloor.stop();

    const a = distribution(running);
    const f = distribution(fs.running);
    const c = distribution(current);
    const execs = aw.counters['probes'] ?? 0;
    const floorExecs = (fw.counters['ok'] ?? 0) + (fw.counters['failed'] ?? 0);
    return {
      scenario: 'runtime-service',
      size: n,
      figures: [
        figure('running_p50_ms', 'to Running p50 (through the service)', 'ms', a.p50, f.p50, { text: '≤ 1.5× floor', on: 'ratio', op: '<=', value: 1.5 }),
        figure('running_p99_ms', 'to Running p99 (through the service)', 'ms', a.p99, f.p99),
        figure(
          'cpu_ms_per_exec',
          'CPU per exec, agent + service',
          'ms',
          execs ? (1000 * (aw.cpuS + serviceCpuS)) / execs : null,
          floorExecs ? (1000 * fw.cpuS) / floorExecs : null,
          targets.execCpuRatio,
        ),
        figure(
          'agent_cpu_ms_per_exec',
          'CPU per exec, agent alone',
          'ms',
          execs ? (1000 * aw.cpuS) / execs : null,
          floorExecs ? (1000 * fw.cpuS) / floorExecs : null,
        ),
        figure('lateness_p99_ms', 'probe schedule lateness p99', 'ms', aw.lateness.p99, fw.lateness.p99, { text: '≤ 20 ms', on: 'agent', op: '<=', value: 20 }),
        figure('agent_rss_mb', `agent RSS with ${n} pods`, 'MB', mb(agentRss), mb(floorRss)),
        figure('service_rss_mb', `runtime service RSS with ${n} containers`, 'MB', mb(serviceRss), mb(floorRss)),
        figure('restart_current_p50_ms', 'after kill -9: pod status current again p50', 'ms', c.p50, null),
        figure('restart_current_all_ms', 'after kill -9: every pod status current again', 'ms', c.max, null),
      ],
      notes: [
        ...teardownNotes,
        'pods run through `podvisor runtime serve` over the CRI (gRPC, unix socket); the service is started by the first agent',
        `exec liveness probes every ${PERIOD_S} s; CPU per exec sums the agent's and the service's own CPU (the child's is in neither)`,
        'restart: from the new agent reading the manifests to each pod reported Running with its adopted container (no container restarted)',
        'floors: the sleep floor spawns the same processes raw (Running), the spawn floor runs the same exec schedule; both RSS figures compare with the sleep floor process',
      ],
      raw: { running, current, agentWindow: aw, serviceCpuS, floorWindow: fw, agentRss, serviceRss, floorRss },
    };
  },
};
