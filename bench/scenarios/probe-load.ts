// Probe load: N sleeping pods, each with an httpGet liveness and a tcpSocket readiness probe every
// second against one benchmark server; against a floor making the same GETs and connects raw.

import { AgentClient } from '../lib/agent-client.js';
import { FloorClient } from '../lib/floor-client.js';
import { healthPath, writeWorkspace } from '../lib/manifests.js';
import { countTimeWait } from '../lib/proc.js';
import { ServerClient } from '../lib/server-client.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { ProbeFloorParams } from '../procs/probe-floor.js';
import { mb, sleep, type Scenario } from './types.js';

const PERIOD_S = 1;

export const probeLoad: Scenario = {
  name: 'probe-load',
  defaultSizes: [100, 500, 1000],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const durationMs = ctx.durationMs ?? 20_000;
    const warmupMs = ctx.warmupMs ?? 3_000;

    // Agent phase.
    const server = await ServerClient.start();
    ctx.defer(() => server.stop().catch(() => {}));
    const { httpPort, tcpPort } = server.ports;
    const ws = writeWorkspace('probe', n, (name) => ({
      livenessProbe: { httpGet: { host: '127.0.0.1', port: httpPort, path: healthPath(name) }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
      readinessProbe: { tcpSocket: { host: '127.0.0.1', port: tcpPort }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
    }));
    ctx.defer(() => ws.remove());
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    await agent.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [] });
    ctx.log(`probe-load N=${n}: starting ${n} pods`);
    await agent.startPods(ws.manifestDir);
    await agent.waitFor({ condition: 'ready', timeoutMs: 30_000 + n * 50 });
    ctx.log(`probe-load N=${n}: all Ready; settling ${warmupMs} ms, measuring ${durationMs} ms`);
    await sleep(warmupMs);
    const [, c0] = await Promise.all([agent.begin(), server.counts()]);
    const proc0 = agent.cpu();
    await sleep(durationMs);
    const [aw, c1] = await Promise.all([agent.read(), server.counts()]);
    const proc1 = agent.cpu();
    const agentMem = agent.memory();
    const agentTimeWait = countTimeWait([httpPort, tcpPort]);
    await agent.stop();
    await server.stop();

    // Floor phase, against a fresh server so TIME_WAIT counts stay apart.
    const server2 = await ServerClient.start();
    ctx.defer(() => server2.stop().catch(() => {}));
    const floor = await FloorClient.start<ProbeFloorParams>('probe-floor');
    ctx.defer(() => floor.kill());
    ctx.log(`probe-load N=${n}: floor, measuring ${durationMs} ms`);
    await floor.run({ ...server2.ports, paths: ws.names.map(healthPath), periodMs: PERIOD_S * 1000, timeoutMs: 1000 });
    await sleep(Math.min(warmupMs, 2_000));
    const [, f0] = await Promise.all([floor.begin(), server2.counts()]);
    await sleep(durationMs);
    const [fw, f1] = await Promise.all([floor.read(), server2.counts()]);
    const floorMem = floor.memory();
    const floorTimeWait = countTimeWait([server2.ports.httpPort, server2.ports.tcpPort]);
    await floor.stop();
    await server2.stop();

    const agentProbes = c1.http + c1.tcp - (c0.http + c0.tcp);
    const floorRequests = f1.http + f1.tcp - (f0.http + f0.tcp);
    const agentS = (c1.at - c0.at) / 1000;
    const floorS = (f1.at - f0.at) / 1000;
    const notes = [`expected ${2 * n} probes/s (2 probes per pod per ${PERIOD_S} s)`];
    const killed = aw.events['Killing'] ?? 0;
    if (killed) notes.push(`${killed} containers were killed during the window (failed liveness)`);
    if (aw.lateness.n === 0) notes.push('no lateness samples: the prober did not report probe starts');

    return {
      scenario: 'probe-load',
      size: n,
      figures: [
        figure('probes_per_s', 'probes/s (server-counted)', '1/s', agentProbes / agentS, floorRequests / floorS),
        figure('cpu_s_per_1000_probes', 'CPU per 1000 probes', 's', aw.cpuS / (agentProbes / 1000), fw.cpuS / (floorRequests / 1000), targets.probeCpuRatio),
        figure('cpu_pct_core', 'CPU of one core', '%', (100 * aw.cpuS) / (aw.wallMs / 1000), (100 * fw.cpuS) / (fw.wallMs / 1000)),
        figure('rss_mb', 'RSS at end', 'MB', mb(agentMem.rss), mb(floorMem.rss), targets.probeRss),
        figure('lateness_p50_ms', 'schedule lateness p50', 'ms', aw.lateness.p50, fw.lateness.p50),
        figure('lateness_p99_ms', 'schedule lateness p99', 'ms', aw.lateness.p99, fw.lateness.p99, targets.probeLatenessP99),
        figure('lateness_max_ms', 'schedule lateness max', 'ms', aw.lateness.max, fw.lateness.max),
        figure('probe_errors', 'probe errors', 'count', aw.counters['probe_errored'] ?? 0, fw.counters['errors'] ?? 0, targets.probeErrors),
        figure('probe_failures', 'probe failures', 'count', aw.counters['probe_failed'] ?? 0, fw.counters['failed'] ?? 0, targets.probeErrors),
        figure('time_wait', 'TIME_WAIT sockets at end', 'count', agentTimeWait, floorTimeWait),
      ],
      notes,
      raw: {
        agentWindow: aw,
        floorWindow: fw,
        server: { agent: [c0, c1], floor: [f0, f1] },
        agentProcCpuS: proc1.self - proc0.self,
        agentMemory: agentMem,
        floorMemory: floorMem,
      },
    };
  },
};
