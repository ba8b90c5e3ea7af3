// Start-up cost of the CLI: `podvisor --version` and `podvisor validate -f examples/`, wall time and
// CPU (user + system of the child), each against `node -e 0` measured in the same run, alternating
// so the machine's load falls on both alike. Size is the number of runs of each command.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Scenario } from './types.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));

/**
 * Wall ms and CPU ms of one run of `node ARGS`, output to /dev/null, from bash's `time`: the child's
 * getrusage, whose CPU is exact to the millisecond (/proc's clock ticks are 10 ms, a tenth of the floor).
 */
async function timeWithCpu(args: string[]): Promise<{ wall: number; cpu: number }> {
  const script = 'TIMEFORMAT="%3R %3U %3S"; { time "$@" </dev/null >/dev/null 2>&1; } 2>&1';
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn('bash', ['-c', script, 'time', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', () => {
      const [real, user, sys] = out.trim().split(/\s+/).map(Number);
      if (real === undefined || user === undefined || sys === undefined || [real, user, sys].some(Number.isNaN)) {
        reject(new Error(`startup: cannot read the timing of ${args.join(' ')}: ${out}`));
        return;
      }
      resolve({ wall: real * 1000, cpu: (user + sys) * 1000 });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

export const startup: Scenario = {
  name: 'startup',
  defaultSizes: [15],
  sizeIsPods: false,
  async run(size, ctx): Promise<ScenarioResult> {
    const runs: Record<'floor' | 'version' | 'validate', { wall: number; cpu: number }[]> = { floor: [], version: [], validate: [] };
    for (let i = 0; i < size; i++) {
      runs.floor.push(await timeWithCpu(['-e', '0']));
      runs.version.push(await timeWithCpu([mainJs, '--version']));
      runs.validate.push(await timeWithCpu([mainJs, 'validate', '-f', examples]));
    }
    ctx.log(`startup: ${size} runs each`);
    const m = (k: keyof typeof runs, f: 'wall' | 'cpu') => median(runs[k].map((r) => r[f]));
    const target = { text: '≤ 1.5× floor', on: 'ratio' as const, op: '<=' as const, value: 1.5 };
    return {
      scenario: 'startup',
      size,
      figures: [
        figure('version_wall', '`--version` wall (median)', 'ms', m('version', 'wall'), m('floor', 'wall'), target),
        figure('version_cpu', '`--version` CPU (median)', 'ms', m('version', 'cpu'), m('floor', 'cpu'), target),
        figure('validate_wall', '`validate -f examples/` wall (median)', 'ms', m('validate', 'wall'), m('floor', 'wall'), target),
        figure('validate_cpu', '`validate -f examples/` CPU (median)', 'ms', m('validate', 'cpu'), m('floor', 'cpu'), target),
      ],
      notes: ["floor: `node -e 0`, run alternately with the commands; CPU is the child's user + system time (getrusage, via bash `time`)"],
      raw: runs,
    };
  },
};
