// The client commands against kubectl on the same agent: `podvisor get pods`, `logs POD`, `describe pod
// POD` and `exec POD -- true` beside kubectl's same request (kubectl on PATH, and Debian's kubectl 1.20
// when the kube-control-plane tools have it), both against a real `podvisor agent` holding N pods (its
// Kubernetes API on --port, its kubeconfig), with `node -e 0` as the floor and `--version` and
// `validate` beside it. Every program runs once per round, the order reversed every other round; figures
// are medians over rounds, ratios medians of the per-round ratios.

import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentProcess, cliPath, median, podvisor, runProgram, teardownAgent } from '../lib/agent-process.js';
import { writeWorkspace } from '../lib/manifests.js';
import { timeWithCpu, type TimedRun } from '../lib/timed-run.js';
import { figure, type Figure, type ScenarioResult, type Target } from '../report/figures.js';
import type { Scenario } from './types.js';

const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
const DEFAULT_ROUNDS = 7;

/** Each pod writes 100 lines, then sleeps: `logs` has something to print. */
const LOGGING_SLEEP = ['sh', '-c', 'i=0; while [ $i -lt 100 ]; do echo "line $i of the bench pod"; i=$((i+1)); done; exec sleep 900'];

interface Kubectl {
  label: string;
  path: string;
  version: string;
}

/** kubectl as `command -v kubectl` finds it ($KUBECTL first), and kubectl 1.20 of the kube-control-plane tools when it is another file. */
async function findKubectls(): Promise<Kubectl[]> {
  const onPath = [process.env.KUBECTL, ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'kubectl'))].find((c): c is string => !!c && existsSync(c));
  const debian = join(homedir(), '.cache', 'kube-control-plane', 'kubectl-1.20.2');
  const found: Kubectl[] = [];
  for (const [label, path] of [
    ['kubectl', onPath],
    ['kubectl 1.20', existsSync(debian) ? debian : undefined],
  ] as const) {
    if (!path || found.some((k) => realpathSync(k.path) === realpathSync(path))) continue;
    const v = await runProgram(path, ['version', '--client'], 30_000);
    found.push({ label, path, version: /v\d+\.\d+\.\d+[^\s",]*/.exec(v.stdout)?.[0] ?? 'version unknown' });
  }
  return found;
}

interface Case {
  key: string;
  file: string;
  args: string[];
}

export const clients: Scenario = {
  name: 'clients',
  defaultSizes: [20],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const rounds = ctx.rounds ?? DEFAULT_ROUNDS;
    const notes: string[] = [];
    const ws = writeWorkspace('clients', n, () => ({ command: LOGGING_SLEEP }));
    ctx.defer(() => ws.remove());
    const root = ws.rootDir;
    const agent = await AgentProcess.start(root, ['--max-pods', String(n + 10), '--port', '0']);
    ctx.defer(() => teardownAgent(root, agent));
    const up = await podvisor(['up', '-d', '-f', ws.manifestDir, '--root-dir', root, '--wait=running', '--timeout', '10m'], 15 * 60_000);
    if (up.code !== 0) throw new Error(`podvisor up -d exited ${up.code}: ${up.stderr.slice(-1500)}`);
    const pod = ws.names[n - 1]!;

    const kubectls = await findKubectls();
    if (!kubectls.length) notes.push('kubectl not found ($KUBECTL, PATH, ~/.cache/kube-control-plane/kubectl-1.20.2): the kubectl rows are skipped');
    const commands: Record<string, string[]> = {
      get: ['get', 'pods'],
      logs: ['logs', pod],
      describe: ['describe', 'pod', pod],
      exec: ['exec', pod, '--', 'true'],
    };
    const cases: Case[] = [{ key: 'node', file: process.execPath, args: ['-e', '0'] }];
    for (const [name, args] of Object.entries(commands)) {
      cases.push({ key: `podvisor_${name}`, file: process.execPath, args: [cliPath, args[0]!, '--root-dir', root, ...args.slice(1)] });
      kubectls.forEach((k, i) => {
        const kc = ['--kubeconfig', join(root, 'kubeconfig'), '--cache-dir', join(root, `kubectl-cache-${i}`)];
        cases.push({ key: `kubectl${i}_${name}`, file: k.path, args: [...kc, ...args] });
      });
    }
    cases.push({ key: 'podvisor_version', file: process.execPath, args: [cliPath, '--version'] });
    cases.push({ key: 'podvisor_validate', file: process.execPath, args: [cliPath, 'validate', '-f', examples] });

    // One untimed run of each: kubectl fills its discovery cache, and every file is in the page cache.
    for (const c of cases) await timeWithCpu(c.file, c.args);
    const runs: Record<string, TimedRun[]> = Object.fromEntries(cases.map((c) => [c.key, []]));
    for (let r = 0; r < rounds; r++) {
      ctx.log(`clients N=${n}: round ${r + 1}/${rounds}`);
      for (const c of r % 2 ? [...cases].reverse() : cases) {
        const t = await timeWithCpu(c.file, c.args);
        if (t.status !== 0) throw new Error(`${c.key} (${c.file} ${c.args.join(' ')}) exited ${t.status}`);
        runs[c.key]!.push(t);
      }
    }

    const figures: Figure[] = [];
    const of = (key: string, what: 'wall' | 'cpu') => runs[key]!.map((t) => t[what]);
    /** a against b: medians over rounds, and the median of the per-round ratios. */
    const compared = (key: string, label: string, a: string, b: string, what: 'wall' | 'cpu', target?: Target) => {
      const f = figure(key, label, 'ms', median(of(a, what)), median(of(b, what)), target);
      const ratios = of(a, what).map((x, i) => x / of(b, what)[i]!);
      f.ratio = median(ratios);
      if (target && f.target) f.target.status = f.ratio <= target.value ? 'met' : 'missed';
      return f;
    };
    const asKubectl: Target = { text: '≤ 1.0× kubectl', on: 'ratio', op: '<=', value: 1 };
    for (const name of Object.keys(commands)) {
      kubectls.forEach((k, i) => {
        figures.push(
          compared(
            `${name}_vs_kubectl${i}_wall`,
            `\`podvisor ${commands[name]![0]}\` wall, vs ${k.label}`,
            `podvisor_${name}`,
            `kubectl${i}_${name}`,
            'wall',
            asKubectl,
          ),
        );
        figures.push(
          compared(`${name}_vs_kubectl${i}_cpu`, `\`podvisor ${commands[name]![0]}\` CPU, vs ${k.label}`, `podvisor_${name}`, `kubectl${i}_${name}`, 'cpu'),
        );
      });
      figures.push(compared(`${name}_vs_node_wall`, `\`podvisor ${commands[name]![0]}\` wall, vs node -e 0`, `podvisor_${name}`, 'node', 'wall'));
      kubectls.forEach((k, i) =>
        figures.push(
          compared(`kubectl${i}_${name}_vs_node_wall`, `${k.label} ${commands[name]![0]} wall, vs node -e 0`, `kubectl${i}_${name}`, 'node', 'wall'),
        ),
      );
    }
    const asFloor: Target = { text: '≤ 1.5× floor', on: 'ratio', op: '<=', value: 1.5 };
    figures.push(compared('version_vs_node_wall', '`podvisor --version` wall, vs node -e 0', 'podvisor_version', 'node', 'wall', asFloor));
    figures.push(compared('validate_vs_node_wall', '`podvisor validate -f examples/` wall, vs node -e 0', 'podvisor_validate', 'node', 'wall', asFloor));

    for (const k of kubectls)
      notes.push(`${k.label}: ${k.path} (${k.version}), with the agent's kubeconfig (its --port API over TLS) and a warm discovery cache`);
    notes.push(
      `${rounds} rounds of every program once, the order reversed every other round, against a podvisor agent holding ${n} pods; wall and CPU (user + system) from bash's time`,
    );
    return { scenario: 'clients', size: n, figures, notes, raw: { runs } };
  },
};
