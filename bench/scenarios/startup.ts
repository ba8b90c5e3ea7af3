// Start-up cost of the CLI: `podvisor --version` and `podvisor validate -f examples/`, wall time and
// CPU (user + system of the child), each against `node -e 0` measured in the same run, alternating
// so the machine's load falls on both alike. Size is the number of runs of each command.

import { fileURLToPath } from 'node:url';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Scenario } from './types.js';
import { timeWithCpu } from '../lib/timed-run.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));

const timeNode = (args: string[]) => timeWithCpu(process.execPath, args);

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
      runs.floor.push(await timeNode(['-e', '0']));
      runs.version.push(await timeNode([mainJs, '--version']));
      runs.validate.push(await timeNode([mainJs, 'validate', '-f', examples]));
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
