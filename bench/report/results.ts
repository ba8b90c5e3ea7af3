// The machine-readable record of a run, bench/results/latest.json: machine, options and every
// scenario's figures, so docs/performance.md can be filled from it and runs compared later.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MachineInfo } from '../lib/machine.js';
import type { ScenarioResult } from './figures.js';

export interface RunRecord {
  schema: 'podvisor-bench/1';
  machine: MachineInfo;
  options: Record<string, unknown>;
  startedAt: string;
  finishedAt: string;
  results: ScenarioResult[];
}

/** bench/results/latest.json in the source tree (this module runs from dist/bench/report/). */
export function defaultResultsPath(): string {
  return fileURLToPath(new URL('../../../bench/results/latest.json', import.meta.url));
}

export function writeRecord(path: string, record: RunRecord): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(record, null, 2) + '\n');
}
