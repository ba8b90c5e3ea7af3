// The runtime service's container starts with its spawner (`runtime serve --spawner=perl`) against
// the service forking them itself (`--spawner=none`), in alternating rounds over the real CRI: a
// burst of N StartContainer calls at once, then starts one at a time; wall time, and the CPU of the
// service and its spawner per start.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectOrLaunch } from '../../src/runtime/cri/launch.js';
import { findPerl } from '../../src/runtime/process-runtime.js';
import { silentLogger } from '../../src/util/logger.js';
import { cliPath, descendants, killSet, median } from '../lib/agent-process.js';
import { cpuOf, runtimeServiceProcesses } from '../lib/proc.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { sleep, type Scenario } from './types.js';

type Mode = 'perl' | 'none';
interface RoundFigures {
  burst_ms: number;
  burst_cpu_ms: number;
  one_ms: number;
}
const ONE_AT_A_TIME = 20;

const sandbox = (root: string, i: number) => ({
  metadata: { name: `spawn-${i}`, namespace: 'default', uid: `spawn-uid-${i}`, attempt: 0 },
  hostname: `spawn-${i}`,
  logDirectory: join(root, 'pods', `spawn-${i}`),
  labels: {},
  annotations: {},
  portMappings: [],
});
const container = (i: number) => ({
  metadata: { name: `c${i}`, attempt: 0 },
  image: 'busybox',
  command: ['sleep', String(7_700_000 + i)],
  args: [],
  workingDir: '',
  envs: [{ key: 'N', value: String(i) }],
  logPath: `c${i}/0.log`,
  labels: {},
  annotations: {},
});

async function round(mode: Mode, n: number): Promise<RoundFigures> {
  const root = mkdtempSync(join(tmpdir(), `podvisor-bench-spawner-`));
  const { client, startedPid } = await connectOrLaunch({
    endpoint: `unix://${join(root, 'runtime.sock')}`,
    logger: silentLogger,
    command: [process.execPath, cliPath, 'runtime', 'serve', '--root-dir', root, `--spawner=${mode}`],
    logFile: join(root, 'runtime.log'),
  });
  try {
    const pid = startedPid!;
    const sbc = sandbox(root, 0);
    const sb = await client.runPodSandbox(sbc);
    let next = 0;
    const create = () => {
      const c = container(next++);
      return client.createContainer(sb, c, sbc);
    };
    await client.startContainer(await create()); // warm-up: the spawner runs, the code paths are compiled
    const ids = await Promise.all(Array.from({ length: n }, create));
    await sleep(500);
    // The service and its spawner (started by the warm-up).
    const service = runtimeServiceProcesses(pid);
    const cpu0 = cpuOf(service);
    const t0 = performance.now();
    await Promise.all(ids.map((id) => client.startContainer(id)));
    const burst = performance.now() - t0;
    const cpu = cpuOf(service) - cpu0;
    const one: number[] = [];
    for (let i = 0; i < ONE_AT_A_TIME; i++) {
      const id = await create();
      const t = performance.now();
      await client.startContainer(id);
      one.push(performance.now() - t);
    }
    await client.removePodSandbox(sb);
    return { burst_ms: burst, burst_cpu_ms: (cpu * 1000) / n, one_ms: median(one) };
  } finally {
    await client.close();
    if (startedPid) {
      killSet(descendants(startedPid));
      try {
        process.kill(startedPid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  }
}

export const spawner: Scenario = {
  name: 'spawner',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const notes: string[] = [];
    if (!findPerl()) {
      return { scenario: 'spawner', size: n, figures: [], notes: ['perl is not installed: the service always spawns containers itself'] };
    }
    const rounds = ctx.rounds ?? 3;
    const results: Record<Mode, RoundFigures[]> = { perl: [], none: [] };
    for (let r = 0; r < rounds; r++) {
      const order: Mode[] = r % 2 === 0 ? ['perl', 'none'] : ['none', 'perl'];
      for (const mode of order) {
        ctx.log(`spawner N=${n}: round ${r + 1}/${rounds}: --spawner=${mode}`);
        results[mode].push(await round(mode, n));
      }
    }
    const fig = (key: keyof RoundFigures, label: string, unit: string) =>
      figure(key, label, unit, median(results.perl.map((f) => f[key])), median(results.none.map((f) => f[key])));
    notes.push(
      `${rounds} alternating rounds; figures are medians; "agent" is --spawner=perl, "floor" is --spawner=none (the service forks them itself)`,
      `each round: a fresh \`podvisor runtime serve\`, one warm-up start, then ${n} StartContainer calls at once over the CRI, then ${ONE_AT_A_TIME} starts one at a time`,
      'CPU: the service and its spawner, from /proc, over the burst',
    );
    return {
      scenario: 'spawner',
      size: n,
      figures: [
        fig('burst_ms', `start of ${n} containers at once, with the spawner vs the service forking`, 'ms'),
        fig('burst_cpu_ms', 'CPU per start in the burst (service + spawner), with the spawner vs the service forking', 'ms'),
        fig('one_ms', 'one start (StartContainer round trip), with the spawner vs the service forking', 'ms'),
      ],
      notes,
    };
  },
};
