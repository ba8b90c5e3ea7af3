// Pods on containerd (a private instance, as the tests start it): pod start to Running and to Ready
// through the agent's CRI client against a bare script making the same CRI calls (RunPodSandbox,
// CreateContainer, StartContainer, then one ExecSync of the readiness command) in the same run; the
// agent's CPU per exec probe against a bare ExecSync loop at the same rate; `podman kube play` of
// the same pods when podman is installed. Skips, saying why, without root or containerd.

import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { removeAllSandboxes } from '../../test/containerd/cleanup.js';
import { skipReason, startContainerd } from '../../test/containerd/harness.js';
import { AgentClient } from '../lib/agent-client.js';
import { ChildHandle } from '../lib/child-handle.js';
import { SLEEP_COMMAND, writeWorkspace } from '../lib/manifests.js';
import { distribution } from '../lib/stats.js';
import type { WindowReport } from '../lib/window.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import type { CriFloorExecParams, CriFloorStartParams, CriFloorStartResult } from '../procs/cri-floor.js';
import { sleep, type Scenario } from './types.js';

const run = promisify(execFile);
const PERIOD_S = 1;
const READY_COMMAND = ['true'];
const START_TARGET = { text: '≤ 1.2× floor', on: 'ratio', op: '<=', value: 1.2 } as const;

async function podmanAvailable(): Promise<boolean> {
  try {
    await run('podman', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** Seconds `podman kube play` takes to start the pods (it returns once they run), or an error text. */
async function podmanKubePlay(file: string): Promise<number | string> {
  const t0 = performance.now();
  try {
    await run('podman', ['kube', 'play', '--tls-verify=false', file], { timeout: 120_000 });
    return performance.now() - t0;
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  } finally {
    await run('podman', ['kube', 'down', file]).catch(() => {});
  }
}

export const containerd: Scenario = {
  name: 'containerd',
  defaultSizes: [1, 10],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const skip = await skipReason().catch((e: Error) => e.message);
    if (skip) {
      ctx.log(`containerd N=${n}: skipped: ${skip}`);
      return { scenario: 'containerd', size: n, figures: [], notes: [`skipped: ${skip}`] };
    }
    const durationMs = ctx.durationMs ?? 10_000;
    const warmupMs = ctx.warmupMs ?? 3_000;
    ctx.log(`containerd N=${n}: starting a private containerd and registry`);
    const env = await startContainerd();
    ctx.defer(() => env.stop());
    const image = env.images.busybox!;
    // Both sides find the image present (IfNotPresent): a pull is not what is measured.
    const images = new CriRuntimeClient({ endpoint: env.endpoint, logger: silentLogger });
    await images.pullImage({ image });
    await images.close();

    const ws = writeWorkspace('ctrd', n, () => ({
      readinessProbe: { exec: { command: [...READY_COMMAND] }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
    }));
    ctx.defer(() => ws.remove());
    // The workspace names the process runtime's image: point every manifest at the registry's.
    for (const name of ws.names) {
      const file = join(ws.manifestDir, `${name}.json`);
      const pod = JSON.parse(readFileSync(file, 'utf8'));
      pod.spec.containers[0].image = image;
      writeFileSync(file, JSON.stringify(pod));
    }

    // The agent.
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());
    await agent.load({ rootDir: ws.rootDir, maxPods: n + 10, noteReasons: [], criEndpoint: env.endpoint });
    ctx.log(`containerd N=${n}: agent starts ${n} pods`);
    await agent.startPods(ws.manifestDir);
    const running = Object.values((await agent.waitFor({ condition: 'running', timeoutMs: 60_000 + n * 2_000 })).times);
    const ready = Object.values((await agent.waitFor({ condition: 'ready', timeoutMs: 60_000 + n * 2_000 })).times);
    ctx.log(`containerd N=${n}: readiness exec probes every ${PERIOD_S} s; settling ${warmupMs} ms, measuring ${durationMs} ms`);
    await sleep(warmupMs);
    await agent.begin();
    await sleep(durationMs);
    const aw = await agent.read();
    await agent.terminateAll(0);
    await agent.stop();
    await removeAllSandboxes(env.endpoint);

    // The floor: the same calls from a bare script.
    const floor = await ChildHandle.start('cri-floor');
    ctx.defer(() => floor.kill());
    mkdirSync(join(ws.rootDir, 'floor'), { recursive: true });
    ctx.log(`containerd N=${n}: floor starts ${n} pods`);
    const start: CriFloorStartParams = {
      endpoint: env.endpoint,
      image,
      count: n,
      command: SLEEP_COMMAND,
      readyCommand: READY_COMMAND,
      logDir: join(ws.rootDir, 'floor'),
    };
    const fs = await floor.call<CriFloorStartResult>('start', start, 60_000 + n * 2_000);
    const exec: CriFloorExecParams = { count: n, periodMs: PERIOD_S * 1000, command: READY_COMMAND };
    await floor.call('exec', exec);
    await sleep(1_000);
    await floor.call('begin');
    await sleep(durationMs);
    const fw = await floor.call<WindowReport>('read');
    await floor.stop();
    await removeAllSandboxes(env.endpoint);

    // podman, if installed.
    const notes = [
      `${n} pods of one busybox container (sleep) with an exec readiness probe every ${PERIOD_S} s; the image is present on both sides`,
      'floor: a bare @grpc/grpc-js script making RunPodSandbox + CreateContainer + StartContainer (Running), then one ExecSync of the readiness command (Ready), for all pods at once',
      'CPU per exec: the agent process (prober, relist, status) against the floor process (ExecSync loop at the same rate); containerd, shims and runc are in neither',
    ];
    let podman: number | null = null;
    if (await podmanAvailable()) {
      const file = join(ws.rootDir, 'podman.yaml');
      const docs = ws.names.map((name) =>
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'main', image, command: SLEEP_COMMAND }] } }),
      );
      writeFileSync(file, docs.join('\n---\n'));
      const r = await podmanKubePlay(file);
      if (typeof r === 'number') podman = r;
      else notes.push(`podman kube play failed: ${r}`);
    } else notes.push('podman is not installed: `podman kube play` not measured');

    const a = distribution(running);
    const f = distribution(fs.running);
    const ar = distribution(ready);
    const fr = distribution(fs.ready);
    const execs = aw.counters['probes'] ?? 0;
    const floorExecs = (fw.counters['ok'] ?? 0) + (fw.counters['failed'] ?? 0);
    return {
      scenario: 'containerd',
      size: n,
      figures: [
        figure('running_p50_ms', 'to Running p50', 'ms', a.p50, f.p50, START_TARGET),
        figure('running_all_ms', `all ${n} Running`, 'ms', a.max, f.max, START_TARGET),
        figure('ready_p50_ms', 'to Ready p50', 'ms', ar.p50, fr.p50),
        figure('ready_all_ms', `all ${n} Ready`, 'ms', ar.max, fr.max),
        figure('podman_kube_play_ms', `podman kube play of the ${n} pods (against the agent's all Running)`, 'ms', a.max, podman),
        figure('execs_per_s', 'exec probes/s', '1/s', execs / (aw.wallMs / 1000), floorExecs / (fw.wallMs / 1000)),
        figure(
          'cpu_ms_per_exec',
          'CPU per exec probe',
          'ms',
          execs ? (1000 * aw.cpuS) / execs : null,
          floorExecs ? (1000 * fw.cpuS) / floorExecs : null,
          targets.execCpuRatio,
        ),
        figure('exec_errors', 'exec errors', 'count', aw.counters['probe_errored'] ?? 0, fw.counters['errors'] ?? 0, targets.probeErrors),
      ],
      notes,
      raw: { running, ready, floorStart: fs, agentWindow: aw, floorWindow: fw, podmanMs: podman },
    };
  },
};
