// Probe history cost: the prober itself (a ProberManager in this process, N pods with an httpGet
// liveness and a tcpSocket readiness probe every second against the benchmark server) measured with
// its probe history kept ("agent" column) and not kept ("floor" column), phases alternated to even out
// a shared machine; and the memory the history of one pod holds once full.

import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { Pod, PodStatus } from '../../src/api/types.js';
import type { EventRecorder } from '../../src/events/recorder.js';
import { HISTORY_OUTPUT_BYTES, HISTORY_PER_WORKER, ProbeHistory } from '../../src/prober/history.js';
import { ProberManager } from '../../src/prober/manager.js';
import type { PodStatusProvider } from '../../src/prober/types.js';
import type { RuntimeService } from '../../src/runtime/cri.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { healthPath } from '../lib/manifests.js';
import { ServerClient } from '../lib/server-client.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { targets } from '../report/targets.js';
import { sleep, type Scenario } from './types.js';

const PERIOD_S = 1;
const ROUNDS = 2;

const noEvents: EventRecorder = { event: () => {} };

function podsFor(n: number, ports: { httpPort: number; tcpPort: number }): { pods: Pod[]; provider: PodStatusProvider } {
  const pods: Pod[] = [];
  const statuses = new Map<string, PodStatus>();
  const startedAt = new Date().toISOString();
  for (let i = 0; i < n; i++) {
    const name = `hist-${i}`;
    const uid = `uid-${i}`;
    pods.push({
      metadata: { name, namespace: 'default', uid },
      spec: {
        containers: [
          {
            name: 'app',
            livenessProbe: { httpGet: { host: '127.0.0.1', port: ports.httpPort, path: healthPath(name) }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
            readinessProbe: { tcpSocket: { host: '127.0.0.1', port: ports.tcpPort }, periodSeconds: PERIOD_S, timeoutSeconds: 1 },
          },
        ],
      },
    });
    statuses.set(uid, {
      phase: 'Running',
      podIP: '127.0.0.1',
      containerStatuses: [
        {
          name: 'app',
          containerID: `bench://${uid}`,
          image: 'img',
          imageID: '',
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt } },
        },
      ],
    });
  }
  const byUid = new Map(pods.map((p) => [p.metadata!.uid!, p]));
  return { pods, provider: { getPodStatus: (uid) => statuses.get(uid), getPod: (uid) => byUid.get(uid) } };
}

/** CPU seconds of this process and probes counted by the server over one window. */
async function measure(n: number, keepHistory: boolean, server: ServerClient, warmupMs: number, durationMs: number) {
  const { pods, provider } = podsFor(n, server.ports);
  const manager = new ProberManager({
    clock: new RealClock(),
    logger: silentLogger,
    runtime: {} as RuntimeService,
    recorder: noEvents,
    statusProvider: provider,
    metrics: false,
    keepHistory,
  });
  for (const p of pods) manager.addPod(p);
  await sleep(warmupMs);
  const c0 = await server.counts();
  const cpu0 = process.cpuUsage();
  await sleep(durationMs);
  const cpu = process.cpuUsage(cpu0);
  const c1 = await server.counts();
  manager.close();
  return {
    cpuS: (cpu.user + cpu.system) / 1e6,
    probes: c1.http + c1.tcp - (c0.http + c0.tcp),
    kept: manager.history ? pods.reduce((k, p) => k + manager.history!.entries(p.metadata!.uid!).length, 0) : 0,
  };
}

/** Heap bytes per pod of a full history (two probes × 100 results), outputs of outputBytes each. */
function historyBytesPerPod(pods: number, outputBytes: number): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const h = new ProbeHistory();
  const t0 = Date.now();
  for (let p = 0; p < pods; p++) {
    for (let i = 0; i < HISTORY_PER_WORKER; i++) {
      for (const probe of ['liveness', 'readiness'] as const) {
        h.record(`uid-${p}`, {
          container: 'app',
          probe,
          time: new Date(t0 + i * 1000).toISOString(),
          result: 'Success',
          latencyMs: 1,
          // A flat string of its own per result, as a probe's output is ('x'.repeat shares its parts).
          output: Buffer.alloc(outputBytes, 'x').toString() + String(i % 10),
          streak: i + 1,
          threshold: 1,
          effect: '',
        });
      }
    }
  }
  gc();
  const bytes = process.memoryUsage().heapUsed - before;
  if (h.size() !== pods) throw new Error('history lost pods');
  return bytes / pods;
}

export const probeHistory: Scenario = {
  name: 'probe-history',
  defaultSizes: [500],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const durationMs = ctx.durationMs ?? 10_000;
    const warmupMs = ctx.warmupMs ?? 2_000;
    const server = await ServerClient.start();
    ctx.defer(() => server.stop().catch(() => {}));
    const on = { cpuS: 0, probes: 0, kept: 0 };
    const off = { cpuS: 0, probes: 0, kept: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (const keep of r % 2 === 0 ? [false, true] : [true, false]) {
        ctx.log(`probe-history N=${n}: round ${r + 1}, history ${keep ? 'on' : 'off'}, measuring ${durationMs} ms`);
        const m = await measure(n, keep, server, warmupMs, durationMs);
        const acc = keep ? on : off;
        acc.cpuS += m.cpuS;
        acc.probes += m.probes;
        acc.kept = Math.max(acc.kept, m.kept);
      }
    }
    await server.stop();
    const typical = historyBytesPerPod(n, 2); // an HTTP body `ok`, a TCP probe's empty output
    const worst = historyBytesPerPod(Math.min(n, 100), HISTORY_OUTPUT_BYTES - 1);
    return {
      scenario: 'probe-history',
      size: n,
      figures: [
        figure('probes_per_s', 'probes/s (server-counted)', '1/s', on.probes / ((ROUNDS * durationMs) / 1000), off.probes / ((ROUNDS * durationMs) / 1000)),
        figure(
          'cpu_s_per_1000_probes',
          'prober CPU per 1000 probes',
          's',
          on.cpuS / (on.probes / 1000),
          off.cpuS / (off.probes / 1000),
          targets.historyCpuRatio,
        ),
        figure('history_kb_per_pod', 'history per pod, full (2 probes × 100, short output)', 'KiB', typical / 1024, null),
        figure('history_kb_per_pod_1k', 'history per pod, full, 1 KiB outputs (64 KiB bound)', 'KiB', worst / 1024, null),
      ],
      notes: [
        '"agent" is the prober with its probe history kept, "floor" the same prober without it; the prober runs in the bench process, the server in its own',
        `expected ${2 * n} probes/s; ${on.kept} results were kept at the end of a history-on phase`,
      ],
      raw: { on, off, typicalBytesPerPod: typical, worstBytesPerPod: worst },
    };
  },
};
