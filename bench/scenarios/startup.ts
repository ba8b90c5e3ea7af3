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
 * Wall ms and CPU ms of one run of `node ARGS`: a small Node wrapper waits for it (spawnSync) and
 * reads its own children's CPU (cutime + cstime, /proc/self/stat, 10 ms ticks).
 */
async function timeWithCpu(args: string[]): Promise<{ wall: number; cpu: number }> {
  const script =
    "const {spawnSync}=require('node:child_process');const t=process.hrtime.bigint();" +
    'const a=JSON.parse(process.argv[1]);spawnSync(process.execPath,a,{stdio:"ignore"});' +
    "const w=Number(process.hrtime.bigint()-t)/1e6;const fs=require('node:fs');" +
    "const f=fs.readFileSync('/proc/self/stat','utf8').split(') ')[1].split(' ');" +
    "const hz=100;process.stdout.write(JSON.stringify({wall:w,cpu:(Number(f[13])+Number(f[14]))*1000/hz}));";
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn(process.execPath, ['-e', script, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out) as { wall: number; cpu: number });
      } catch (err) {
        reject(err as Error);
      }
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
      notes: ['floor: `node -e 0`, run alternately with the commands; CPU is the child\'s user + system time (10 ms ticks)'],
      raw: runs,
    };
  },
};
