// podvisor side by side with pm2 7 and a Node spawn floor, in alternating rounds on the same machine:
// N `sleep` processes started on a running daemon, killed ones started again (one, then three at
// once), the daemon(s) idle with them, the client commands against Debian's kubectl 1.20, and the
// teardown. Each figure is the median over rounds, with the median of the per-round ratios.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, median, podvisor, runNode, runProgram, runtimeServicePid, teardownAgent, type CliRun } from '../lib/agent-process.js';
import { ChildHandle } from '../lib/child-handle.js';
import { writeWorkspace } from '../lib/manifests.js';
import { killAndTimeRestart } from '../lib/new-process.js';
import { installPm2, Pm2, pm2Apps } from '../lib/pm2.js';
import { readCpu, readMemory, runtimeServiceProcesses } from '../lib/proc.js';
import { figure, type Figure, type ScenarioResult, type Target } from '../report/figures.js';
import type { RestartFloorParams, RestartFloorStart } from '../procs/restart-floor.js';
import { mb, sleep, type Scenario, type ScenarioContext } from './types.js';

const CLI_RUNS = 5;
const vsPm2 = (value: number): Target => ({ text: `≤ ${value}× pm2`, on: 'ratio', op: '<=', value });
const vsFloor = (value: number): Target => ({ text: `≤ ${value}× floor`, on: 'ratio', op: '<=', value });

type System = 'podvisor' | 'pm2' | 'floor';
/** One round's figures of one system, by key. */
type RoundFigures = Record<string, number>;

/** kubectl 1.20 as Debian ships it: $KUBECTL, the kube-control-plane tools' cached copy, or kubectl on PATH. */
function findKubectl(): string | undefined {
  const candidates = [process.env.KUBECTL, join(homedir(), '.cache', 'kube-control-plane', 'kubectl-1.20.2')];
  for (const dir of (process.env.PATH ?? '').split(':')) candidates.push(join(dir, 'kubectl'));
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/**
 * Each supervised process has its own argv, so a restarted one is found by its command line; the
 * numbers start from this run's pid, so another run on the same machine (its processes, its
 * restarts) is never taken for this one's.
 */
const RUN_BASE = (1000 + (process.pid % 100_000)) * 1_000_000;
const commandOf = (i: number) => ['sleep', String(RUN_BASE + i)];
const cmdText = (i: number) => commandOf(i).join(' ');

/** Pods (processes) killed in round r: one alone, then three at once; never the same twice, so no back-off applies. */
function victims(r: number, n: number): { one: number; three: number[] } {
  return { one: (4 * r) % n, three: [1, 2, 3].map((k) => (4 * r + k) % n) };
}

async function idleWindow(pids: number[], ms: number): Promise<{ cpuPct: number; rssMb: number }> {
  const c0 = pids.map((p) => readCpu(p).self);
  const t0 = performance.now();
  await sleep(ms);
  const wallS = (performance.now() - t0) / 1000;
  const cpu = pids.reduce((s, p, i) => s + (readCpu(p).self - c0[i]!), 0);
  const rss = pids.reduce((s, p) => s + readMemory(p).rss, 0);
  return { cpuPct: (100 * cpu) / wallS, rssMb: mb(rss) };
}

function ok(r: CliRun, what: string): CliRun {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(-1500)}`);
  return r;
}

interface RoundSetup {
  n: number;
  round: number;
  manifestDir: string;
  base: string;
  idleMs: number;
  warmupMs: number;
  ctx: ScenarioContext;
}

async function podvisorRound(s: RoundSetup, kubectl: string | undefined, notes: Set<string>): Promise<RoundFigures> {
  const root = join(s.base, `root-${s.round}`);
  mkdirSync(root);
  const daemon = await AgentProcess.start(root, ['--max-pods', String(s.n + 10), '--port', '0']);
  try {
    const f: RoundFigures = {};
    const up = ok(await podvisor(['up', '-d', '-f', s.manifestDir, '--root-dir', root, '--wait=running', '--timeout', '10m'], 15 * 60_000), 'podvisor up -d');
    f.start_ms = up.wallMs;
    const svc = runtimeServicePid(root);
    const v = victims(s.round, s.n);
    f.restart1_ms = (await killAndTimeRestart([cmdText(v.one)]))[0]!;
    f.restart3_ms = Math.max(...(await killAndTimeRestart(v.three.map(cmdText))));
    await sleep(s.warmupMs);
    const idle = await idleWindow(svc ? [daemon.pid, ...runtimeServiceProcesses(svc)] : [daemon.pid], s.idleMs);
    f.idle_cpu_pct = idle.cpuPct;
    f.idle_rss_mb = idle.rssMb;
    if (!svc) notes.add('podvisor: no runtime service found for the root dir; idle figures are the agent alone');

    // Client commands: podvisor against kubectl on the same agent, alternating with `node -e 0`.
    const pod = `pm2-${String(s.n - 1).padStart(4, '0')}`;
    const kc = kubectl ? ['--kubeconfig', join(root, 'kubeconfig'), '--cache-dir', join(root, 'kubectl-cache')] : [];
    const commands: Record<string, { podvisor: string[]; kubectl: string[] }> = {
      get: { podvisor: ['get', 'pods'], kubectl: ['get', 'pods'] },
      logs: { podvisor: ['logs', pod], kubectl: ['logs', pod] },
      describe: { podvisor: ['describe', 'pod', pod], kubectl: ['describe', 'pod', pod] },
      exec: { podvisor: ['exec', pod, '--', 'true'], kubectl: ['exec', pod, '--', 'true'] },
    };
    if (kubectl) await runProgram(kubectl, [...kc, 'get', 'pods'], 60_000); // fills the discovery cache
    const walls: Record<string, number[]> = { node: [] };
    for (let i = 0; i < CLI_RUNS; i++) {
      walls.node!.push((await runNode(['-e', '0'])).wallMs);
      for (const [name, c] of Object.entries(commands)) {
        const p = ok(await podvisor([c.podvisor[0]!, '--root-dir', root, ...c.podvisor.slice(1)], 60_000), `podvisor ${name}`);
        (walls[`podvisor_${name}`] ??= []).push(p.wallMs);
        if (kubectl) (walls[`kubectl_${name}`] ??= []).push(ok(await runProgram(kubectl, [...kc, ...c.kubectl], 60_000), `kubectl ${name}`).wallMs);
      }
    }
    for (const [k, xs] of Object.entries(walls)) f[`cli_${k}_ms`] = median(xs);

    const down = ok(await podvisor(['down', '--all', '--root-dir', root, '--timeout', '10m'], 15 * 60_000), 'podvisor down --all');
    f.teardown_ms = down.wallMs;
    return f;
  } finally {
    await teardownAgent(root, daemon);
  }
}

async function pm2Round(s: RoundSetup, pm2: Pm2, ecosystem: string): Promise<RoundFigures> {
  const f: RoundFigures = {};
  ok(await pm2.run(['ping'], 120_000), 'pm2 ping');
  try {
    const daemon = pm2.daemonPid();
    if (!daemon) throw new Error(`pm2's daemon wrote no pid into ${pm2.home}`);
    f.start_ms = ok(await pm2.run(['start', ecosystem], 15 * 60_000), 'pm2 start').wallMs;
    const v = victims(s.round, s.n);
    f.restart1_ms = (await killAndTimeRestart([cmdText(v.one)]))[0]!;
    f.restart3_ms = Math.max(...(await killAndTimeRestart(v.three.map(cmdText))));
    await sleep(s.warmupMs);
    const idle = await idleWindow([daemon], s.idleMs);
    f.idle_cpu_pct = idle.cpuPct;
    f.idle_rss_mb = idle.rssMb;
    f.teardown_ms = ok(await pm2.run(['delete', 'all'], 15 * 60_000), 'pm2 delete all').wallMs;
  } finally {
    await pm2.run(['kill'], 120_000);
  }
  return f;
}

async function floorRound(s: RoundSetup, nodeStartMs: number): Promise<RoundFigures> {
  const child = await ChildHandle.start('restart-floor');
  try {
    const f: RoundFigures = {};
    const params: RestartFloorParams = { commands: Array.from({ length: s.n }, (_, i) => commandOf(i)) };
    // A command starts the processes on a running daemon: the floor is `node -e 0`'s start-up plus one spawn of each.
    f.start_ms = nodeStartMs + (await child.call<RestartFloorStart>('start', params)).allSpawnedMs;
    const v = victims(s.round, s.n);
    f.restart1_ms = (await killAndTimeRestart([cmdText(v.one)]))[0]!;
    f.restart3_ms = Math.max(...(await killAndTimeRestart(v.three.map(cmdText))));
    await sleep(s.warmupMs);
    const idle = await idleWindow([child.pid], s.idleMs);
    f.idle_cpu_pct = idle.cpuPct;
    f.idle_rss_mb = idle.rssMb;
    f.teardown_ms = nodeStartMs + (await child.call<number>('teardown'));
    return f;
  } finally {
    await child.stop().catch(() => child.kill());
  }
}

/** Median of a key over rounds, and the median of the per-round ratios a/b. */
function compare(rounds: Array<Partial<Record<System, RoundFigures>>>, a: System, b: System, key: string, bKey = key) {
  const va = rounds.map((r) => r[a]?.[key]).filter((x): x is number => Number.isFinite(x));
  const vb = rounds.map((r) => r[b]?.[bKey]).filter((x): x is number => Number.isFinite(x));
  const ratios = rounds.map((r) => (r[a]?.[key] ?? NaN) / (r[b]?.[bKey] ?? NaN)).filter((x) => Number.isFinite(x));
  return { a: va.length ? median(va) : null, b: vb.length ? median(vb) : null, ratio: ratios.length ? median(ratios) : null };
}

function compared(key: string, label: string, unit: string, c: ReturnType<typeof compare>, target?: Target): Figure {
  const f = figure(key, label, unit, c.a, c.b, target);
  f.ratio = c.ratio;
  if (target && f.target) f.target.status = c.ratio === null ? 'n/a' : c.ratio <= target.value ? 'met' : 'missed';
  return f;
}

export const pm2: Scenario = {
  name: 'pm2',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const rounds = ctx.rounds ?? 3;
    const idleMs = ctx.durationMs ?? 20_000;
    const warmupMs = ctx.warmupMs ?? 3_000;
    const notes = new Set<string>();
    const ws = writeWorkspace('pm2', n, (_name, i) => ({ command: commandOf(i), terminationGracePeriodSeconds: 2 }));
    ctx.defer(() => ws.remove());
    const installed = installPm2(ctx.log);
    let pm2Cli: { bin: string; version: string } | undefined;
    if ('skip' in installed) {
      notes.add(installed.skip);
      ctx.log(installed.skip);
    } else pm2Cli = installed;
    const ecosystem = join(ws.base, 'ecosystem.json');
    writeFileSync(
      ecosystem,
      JSON.stringify(
        pm2Apps(
          ws.names,
          ws.names.map((_, i) => commandOf(i)),
        ),
      ),
    );
    const kubectl = findKubectl();
    if (kubectl) {
      const v = await runProgram(kubectl, ['version', '--client', '--short'], 30_000);
      notes.add(`kubectl: ${kubectl} (${(v.stdout.trim().split('\n')[0] ?? '').trim() || 'version unknown'})`);
    } else notes.add('kubectl not found ($KUBECTL, ~/.cache/kube-control-plane/kubectl-1.20.2, PATH): the kubectl rows are skipped');

    const nodeStart = median(await Promise.all([0, 1, 2].map(async () => (await runNode(['-e', '0'])).wallMs)));
    const results: Array<Partial<Record<System, RoundFigures>>> = [];
    const order: System[] = ['podvisor', 'pm2', 'floor'];
    for (let r = 0; r < rounds; r++) {
      const setup: RoundSetup = { n, round: r, manifestDir: ws.manifestDir, base: ws.base, idleMs, warmupMs, ctx };
      const round: Partial<Record<System, RoundFigures>> = {};
      // The order turns each round, so no system always runs first or right after another's teardown.
      for (const sys of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
        ctx.log(`pm2 N=${n}: round ${r + 1}/${rounds}: ${sys}`);
        if (sys === 'podvisor') round.podvisor = await podvisorRound(setup, kubectl, notes);
        else if (sys === 'pm2' && pm2Cli) round.pm2 = await pm2Round(setup, new Pm2(pm2Cli.bin, join(ws.base, `pm2-home-${r}`)), ecosystem);
        else if (sys === 'floor') round.floor = await floorRound(setup, nodeStart);
      }
      results.push(round);
    }

    const figures: Figure[] = [];
    const both = (key: string, label: string, unit: string, pm2Target?: Target, floorTarget?: Target) => {
      figures.push(compared(key, `${label}, vs pm2`, unit, compare(results, 'podvisor', 'pm2', key), pm2Target));
      figures.push(compared(`${key}_floor`, `${label}, vs floor`, unit, compare(results, 'podvisor', 'floor', key), floorTarget));
    };
    both('start_ms', `start of ${n} on a running daemon (podvisor: up -d --wait=running; pm2 start)`, 'ms', vsPm2(0.8), vsFloor(2));
    both('teardown_ms', `teardown of ${n} (podvisor: down --all; pm2 delete all)`, 'ms', vsPm2(0.5));
    both('restart1_ms', 'restart latency, kill -9 → new process, one', 'ms', vsPm2(1.2));
    both('restart3_ms', 'restart latency, three at once (the last)', 'ms', vsPm2(1.2));
    both('idle_cpu_pct', `idle CPU of the daemon(s) holding ${n}, one core`, '%', vsPm2(1.5));
    both('idle_rss_mb', 'idle RSS of the daemon(s)', 'MB', vsPm2(1.5));
    const one: Target = { text: '≤ 1.0× kubectl', on: 'ratio', op: '<=', value: 1 };
    for (const cmd of ['get', 'logs', 'describe', 'exec']) {
      if (kubectl)
        figures.push(
          compared(
            `cli_${cmd}_ms`,
            `\`podvisor ${cmd}\` wall, vs kubectl ${cmd}`,
            'ms',
            compare(results, 'podvisor', 'podvisor', `cli_podvisor_${cmd}_ms`, `cli_kubectl_${cmd}_ms`),
            one,
          ),
        );
      figures.push(
        compared(
          `cli_${cmd}_node_ms`,
          `\`podvisor ${cmd}\` wall, vs node -e 0`,
          'ms',
          compare(results, 'podvisor', 'podvisor', `cli_podvisor_${cmd}_ms`, 'cli_node_ms'),
        ),
      );
    }
    notes.add(
      `${rounds} rounds, the order of podvisor, pm2 and the floor turning each round; figures are medians over rounds, ratios medians of the per-round ratios`,
    );
    notes.add(
      `processes: \`sleep ${RUN_BASE}+i\` (one argv each, so a restarted one is found by its command line in /proc, none shared with another run); pm2 ${pm2Cli?.version ?? '(skipped)'} with interpreter none, autorestart, no restart delay`,
    );
    notes.add(
      'floor: one Node process spawning the same argvs and spawning each again on exit (restart-floor); its start and teardown add `node -e 0`, as the others are commands',
    );
    notes.add(
      `restart latency: from SIGKILL of the process to a new process with its command line in /proc (looked for every ~1 ms); idle: ${idleMs / 1000} s after ${warmupMs / 1000} s of settling, CPU and RSS from /proc (podvisor: agent + runtime service + its spawner)`,
    );
    notes.add(`client commands: ${CLI_RUNS} runs each per round, alternating with kubectl and \`node -e 0\`, against the podvisor agent holding the ${n} pods`);
    return { scenario: 'pm2', size: n, figures, notes: [...notes], raw: { rounds: results, nodeStart } };
  },
};
