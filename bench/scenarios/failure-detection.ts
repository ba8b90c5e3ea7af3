// Failure detection: pods with an httpGet liveness probe (period 1 s, failureThreshold 3) whose
// endpoint the bench turns unhealthy at a recorded time; measured to the Killing event, against the
// kubelet's own bound: the first probe at or after the flip plus (F−1)·P.

import { AgentClient } from '../lib/agent-client.js';
import type { EventNote } from '../lib/agent-protocol.js';
import { healthPath, writeWorkspace } from '../lib/manifests.js';
import { ServerClient } from '../lib/server-client.js';
import { distribution } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import { sleep, type Scenario } from './types.js';

const PERIOD_MS = 1000;
const FAILURE_THRESHOLD = 3;
/** Flips are spread over this span so they fall at every phase of the probe ticks. */
const FLIP_SPREAD_MS = 2 * PERIOD_MS;

export const failureDetection: Scenario = {
  name: 'failure-detection',
  defaultSizes: [20],
  sizeIsPods: true,
  async run(trials, ctx): Promise<ScenarioResult> {
    const warmupMs = ctx.warmupMs ?? 2_000;
    const server = await ServerClient.start();
    ctx.defer(() => server.stop().catch(() => {}));
    const ws = writeWorkspace('detect', trials, (name) => ({
      livenessProbe: {
        httpGet: { host: '127.0.0.1', port: server.ports.httpPort, path: healthPath(name) },
        periodSeconds: PERIOD_MS / 1000,
        failureThreshold: FAILURE_THRESHOLD,
        timeoutSeconds: 1,
      },
      terminationGracePeriodSeconds: 1,
    }));
    ctx.defer(() => ws.remove());
    const agent = await AgentClient.start();
    ctx.defer(() => agent.kill());

    const kills = new Map<string, EventNote>();
    const waiters = new Map<string, () => void>();
    agent.onEvent((e) => {
      if (e.reason !== 'Killing' || kills.has(e.pod)) return;
      kills.set(e.pod, e);
      waiters.get(e.pod)?.();
    });
    await agent.load({ rootDir: ws.rootDir, maxPods: trials + 10, noteReasons: ['Killing'] });
    await agent.startPods(ws.manifestDir);
    await agent.waitFor({ condition: 'running', timeoutMs: 30_000 + trials * 50 });
    ctx.log(`failure-detection: ${trials} trials; settling ${warmupMs} ms`);
    await sleep(warmupMs);

    const deadlineMs = FLIP_SPREAD_MS + (FAILURE_THRESHOLD + 3) * PERIOD_MS;
    await Promise.all(
      ws.names.map(async (name, i) => {
        await sleep((i * FLIP_SPREAD_MS) / trials + Math.random() * (FLIP_SPREAD_MS / trials));
        const killed = new Promise<void>((resolve) => waiters.set(name, resolve));
        await server.flip(name, false);
        await Promise.race([killed, sleep(deadlineMs)]);
        // Healthy again, so the restarted container is left alone.
        await server.flip(name, true);
      }),
    );
    const flips = await server.flips();
    await agent.stop();
    await server.stop();

    const detection: number[] = [];
    const bound: number[] = [];
    const excess: number[] = [];
    const reaction: number[] = [];
    let missed = 0;
    for (const f of flips) {
      const kill = kills.get(f.key);
      if (!kill || f.firstFailAt === undefined) {
        missed++;
        continue;
      }
      const expected = f.firstFailAt + (FAILURE_THRESHOLD - 1) * PERIOD_MS;
      detection.push(kill.at - f.flipAt);
      bound.push(expected - f.flipAt);
      excess.push(kill.at - expected);
      const third = f.failAt[FAILURE_THRESHOLD - 1];
      if (third !== undefined) reaction.push(kill.at - third);
    }
    const d = distribution(detection);
    const b = distribution(bound);
    const x = distribution(excess);
    const r = distribution(reaction);
    const notes = [
      `floor = the kubelet's bound for each trial: first probe at/after the flip + (F−1)·P, F=${FAILURE_THRESHOLD}, P=${PERIOD_MS} ms`,
      `${d.n} of ${trials} trials detected`,
    ];
    if (missed) notes.push(`${missed} trials saw no Killing event within ${deadlineMs} ms of the flip`);

    return {
      scenario: 'failure-detection',
      size: trials,
      figures: [
        figure('detection_p50_ms', 'flip → Killing p50', 'ms', d.p50, b.p50),
        figure('detection_p99_ms', 'flip → Killing p99', 'ms', d.p99, b.p99),
        figure('detection_max_ms', 'flip → Killing max', 'ms', d.max, b.max),
        figure('excess_p50_ms', 'excess over bound p50', 'ms', x.p50, 0),
        figure('excess_p99_ms', 'excess over bound p99', 'ms', x.p99, 0, targets.detectionExcessP99),
        figure('excess_max_ms', 'excess over bound max', 'ms', x.max, 0),
        figure('reaction_p99_ms', 'failing probe #F → Killing p99', 'ms', r.p99, 0),
        figure('missed_trials', 'trials without Killing', 'count', missed, 0, targets.probeErrors),
      ],
      notes,
      raw: { flips, kills: [...kills.values()], detection, bound, excess, reaction },
    };
  },
};
