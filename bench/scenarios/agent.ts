// `podvisor agent` as a real process with N pods applied by `podvisor up -d`: time to all Running
// against the pod-start floor, latency of the kubelet API's `/pods` and `/containerLogs` against a
// bare node:http server serving the same bytes, idle CPU and RSS with the server listening against
// a floor holding the same processes, and the wall time of the client commands against `node -e 0`.

import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { containerLogPath, podLogDir } from '../../src/runtime/root-dir.js';
import { AgentProcess, hasCommand, median, podvisor, runNode, runtimeServicePid, socketGet, teardownAgent, cliPath } from '../lib/agent-process.js';
import { FloorClient } from '../lib/floor-client.js';
import { writeWorkspace, type BenchWorkspace } from '../lib/manifests.js';
import { readCpu, readMemory } from '../lib/proc.js';
import { distribution } from '../lib/stats.js';
import { figure, type Figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { JsonFloorParams, JsonFloorStart } from '../procs/json-floor.js';
import type { SleepFloorParams, SleepFloorStart } from '../procs/sleep-floor.js';
import { mb, sleep, type Scenario } from './types.js';

/** Each container writes 100 log lines, then becomes `sleep 900` (no process stays behind). */
export const LOGGING_COMMAND = ['sh', '-c', 'i=0; while [ $i -lt 100 ]; do echo "bench log line $i"; i=$((i+1)); done; exec sleep 900'];
const REQUESTS = 20;
const CLI_RUNS = 10;
const twoX = { text: '≤ 2× floor', on: 'ratio' as const, op: '<=' as const, value: 2 };

/** N one-file pod manifests running LOGGING_COMMAND, and an empty root dir. */
export function agentWorkspace(prefix: string, n: number): BenchWorkspace {
  return writeWorkspace(prefix, n, () => ({ terminationGracePeriodSeconds: 1, command: LOGGING_COMMAND }));
}

/** Pods of a /pods reply whose every container is running. */
export function runningPods(list: { items?: Pod[] }): Pod[] {
  return (list.items ?? []).filter((p) => {
    const cs = p.status?.containerStatuses ?? [];
    return cs.length > 0 && cs.every((c) => c.state?.running !== undefined);
  });
}

/** Alternates agent and floor requests so both see the same machine; returns each one's ms. */
async function alternate(n: number, agent: () => Promise<number>, floor: () => Promise<number>): Promise<{ agent: number[]; floor: number[] }> {
  await agent();
  await floor();
  const a: number[] = [];
  const f: number[] = [];
  for (let i = 0; i < n; i++) {
    a.push(await agent());
    f.push(await floor());
  }
  return { agent: a, floor: f };
}

export const agent: Scenario = {
  name: 'agent',
  defaultSizes: [100, 1000],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const idleMs = ctx.durationMs ?? 30_000;
    const warmupMs = ctx.warmupMs ?? 5_000;
    const ws = agentWorkspace('agent', n);
    ctx.defer(() => ws.remove());
    const notes: string[] = [];
    const figures: Figure[] = [];

    const daemon = await AgentProcess.start(ws.rootDir, ['--max-pods', String(n + 10)]);
    ctx.defer(() => teardownAgent(ws.rootDir, daemon));
    ctx.log(`agent N=${n}: agent pid ${daemon.pid} up in ${daemon.readyMs.toFixed(0)} ms; up -d of ${n} pods`);
    const up = await podvisor(['up', '-d', '-f', ws.manifestDir, '--root-dir', ws.rootDir, '--timeout', '10m'], 15 * 60_000);
    if (up.code !== 0) throw new Error(`podvisor up -d exited ${up.code}: ${up.stderr.slice(-2000)}`);
    const svcPid = runtimeServicePid(ws.rootDir);
    notes.push(
      svcPid
        ? `the agent runs its pods through the runtime service (pid ${svcPid}); its CPU and RSS are reported on their own rows`
        : 'the agent runs its pods on the in-process runtime (no runtime service found for the root dir)',
    );

    // Give every container time to write its 100 lines, then read the pod list once.
    await sleep(2_000);
    const podsReply = await daemon.get('/pods');
    const list = JSON.parse(podsReply.body) as { items: Pod[] };
    const running = runningPods(list).length;
    if (running < n) notes.push(`${running} of ${n} pods Running in /pods after up -d returned`);
    const pod0 = list.items.find((p) => p.metadata?.name === ws.names[0]);
    const uid0 = pod0?.metadata?.uid ?? '';
    const logFile = join(podLogDir(ws.rootDir, 'default', ws.names[0]!, uid0), containerLogPath('main', 0));

    // Latency of /pods and /containerLogs against the bare server, alternating.
    const jsonFloor = await FloorClient.start<JsonFloorParams, JsonFloorStart>('json-floor');
    ctx.defer(() => jsonFloor.kill());
    const floorSocket = join(ws.base, 'floor.sock');
    await jsonFloor.run({ list, logFile, socketPath: floorSocket });
    ctx.log(`agent N=${n}: ${REQUESTS} requests each of /pods and /containerLogs, and of the floor`);
    const podsLat = await alternate(
      REQUESTS,
      async () => (await daemon.get('/pods')).ms,
      async () => (await socketGet(floorSocket, '/list')).ms,
    );
    let logBytes = 0;
    const logsLat = await alternate(
      REQUESTS,
      async () => {
        const r = await daemon.get(`/containerLogs/default/${ws.names[0]}/main`);
        logBytes = r.bytes;
        return r.ms;
      },
      async () => (await socketGet(floorSocket, '/log')).ms,
    );
    await jsonFloor.stop();
    const pa = distribution(podsLat.agent);
    const pf = distribution(podsLat.floor);
    const la = distribution(logsLat.agent);
    const lf = distribution(logsLat.floor);
    figures.push(
      figure('pods_p50_ms', `GET /pods p50 (${(podsReply.bytes / 1024).toFixed(0)} KiB)`, 'ms', pa.p50, pf.p50),
      figure('pods_max_ms', `GET /pods max of ${REQUESTS}`, 'ms', pa.max, pf.max),
      figure('logs_p50_ms', `GET /containerLogs p50 (${logBytes} B)`, 'ms', la.p50, lf.p50),
      figure('logs_max_ms', `GET /containerLogs max of ${REQUESTS}`, 'ms', la.max, lf.max),
    );

    // Idle: agent (and service) side by side with a floor holding the same processes.
    const idleFloor = await FloorClient.start<SleepFloorParams, SleepFloorStart>('sleep-floor');
    ctx.defer(() => idleFloor.kill());
    await idleFloor.run({ count: n, command: LOGGING_COMMAND });
    ctx.log(`agent N=${n}: idle, settling ${warmupMs} ms, measuring ${idleMs} ms`);
    await sleep(warmupMs);
    const a0 = readCpu(daemon.pid);
    const s0 = svcPid ? readCpu(svcPid) : undefined;
    await idleFloor.begin();
    const w0 = performance.now();
    await sleep(idleMs);
    const fw = await idleFloor.read();
    const wallS = (performance.now() - w0) / 1000;
    const a1 = readCpu(daemon.pid);
    const s1 = svcPid ? readCpu(svcPid) : undefined;
    const agentMem = readMemory(daemon.pid);
    const svcMem = svcPid ? readMemory(svcPid) : undefined;
    const floorMem = idleFloor.memory();
    await idleFloor.stop();
    figures.push(
      figure('idle_cpu_pct', 'agent idle CPU, one core', '%', (100 * (a1.self - a0.self)) / wallS, (100 * fw.cpuS) / (fw.wallMs / 1000), targets.idleCpu),
      figure('idle_rss_mb', 'agent RSS, idle', 'MB', mb(agentMem.rss), mb(floorMem.rss), targets.idleRss),
      figure('idle_rss_peak_mb', 'agent RSS peak', 'MB', mb(agentMem.hwm), mb(floorMem.hwm)),
    );
    if (s0 && s1 && svcMem) {
      figures.push(
        figure('service_idle_cpu_pct', 'runtime service idle CPU, one core', '%', (100 * (s1.self - s0.self)) / wallS, (100 * fw.cpuS) / (fw.wallMs / 1000)),
        figure('service_idle_rss_mb', 'runtime service RSS, idle', 'MB', mb(svcMem.rss), mb(floorMem.rss)),
      );
    }

    // Client commands against `node -e 0`, alternating.
    const hasGet = await hasCommand('get');
    if (!hasGet) notes.push('`podvisor get` does not exist in this build: its row is skipped');
    ctx.log(`agent N=${n}: ${CLI_RUNS} runs each of logs, agent status${hasGet ? ', get pods' : ''} and node -e 0`);
    const cli: Record<string, number[]> = { floor: [], logs: [], status: [], get: [] };
    const failures: string[] = [];
    const timed = async (key: string, args: string[]) => {
      const r = await podvisor(args, 60_000);
      if (r.code !== 0 && failures.length < 3) failures.push(`${args.slice(0, 2).join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
      cli[key]!.push(r.wallMs);
    };
    for (let i = 0; i < CLI_RUNS; i++) {
      cli.floor!.push((await runNode(['-e', '0'])).wallMs);
      await timed('logs', ['logs', ws.names[0]!, '--root-dir', ws.rootDir]);
      await timed('status', ['agent', 'status', '--root-dir', ws.rootDir]);
      if (hasGet) await timed('get', ['get', 'pods', '--root-dir', ws.rootDir]);
    }
    notes.push(...failures);
    const floorWall = median(cli.floor!);
    figures.push(
      figure('logs_cli_wall_ms', '`podvisor logs POD` wall (median)', 'ms', median(cli.logs!), floorWall, twoX),
      figure('status_cli_wall_ms', '`podvisor agent status` wall (median)', 'ms', median(cli.status!), floorWall, twoX),
    );
    if (hasGet) figures.push(figure('get_cli_wall_ms', '`podvisor get pods` wall (median)', 'ms', median(cli.get!), floorWall, twoX));

    // Tear the agent down, then the pod-start floor on a quiet slate: the same manifests read and the
    // same processes spawned by one Node process (plus `node -e 0`'s start-up, as up -d is a command).
    await teardownAgent(ws.rootDir, daemon);
    const startFloor = await FloorClient.start<SleepFloorParams, SleepFloorStart>('sleep-floor');
    ctx.defer(() => startFloor.kill());
    const sf = await startFloor.run({ count: n, command: LOGGING_COMMAND, manifestDir: ws.manifestDir });
    await startFloor.stop();
    const floorAll = Math.max(...sf.running) + floorWall;
    figures.unshift(figure('up_d_all_running_ms', `\`up -d\` of ${n} pods, wall until all Running`, 'ms', up.wallMs, floorAll));
    notes.push(
      'up -d floor: `node -e 0` start-up plus one process reading and JSON.parse-ing the same files and spawning every container at once (sleep-floor)',
      '/pods and /containerLogs: 1 warm-up then requests alternating with a bare node:http server on a unix socket answering JSON.stringify of the same PodList and the same log file (CRI prefix cut); fresh connection per request',
      `idle: agent CPU from /proc over ${(idleMs / 1000).toFixed(0)} s (10 ms ticks) with the unix-socket server listening, floor: sleep-floor holding the same ${n} processes over the same window`,
      `client commands: ${CLI_RUNS} runs each, alternating with \`node -e 0\`; \`logs\` reads ${logBytes} bytes`,
    );
    return {
      scenario: 'agent',
      size: n,
      figures,
      notes,
      raw: {
        up: up.wallMs,
        floorStart: sf,
        podsLat,
        logsLat,
        cli,
        agentCpu: [a0, a1],
        serviceCpu: [s0, s1],
        agentMem,
        svcMem,
        floorMem,
        daemonReadyMs: daemon.readyMs,
        cliPath,
      },
    };
  },
};
