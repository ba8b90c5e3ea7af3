// What every scenario provides to the runner, and what the runner gives every scenario.

import type { ScenarioName } from '../options.js';
import type { ScenarioResult } from '../report/figures.js';

export interface ScenarioContext {
  /** Measurement window, ms, when the user set one. */
  durationMs?: number;
  /** Settling time before measuring, ms, when the user set one. */
  warmupMs?: number;
  trials: number;
  /** Alternating rounds of the side-by-side scenarios, when the user set them. */
  rounds?: number;
  /** Progress lines (stderr), never part of the results. */
  log(msg: string): void;
  /** Registers cleanup that must run even when the scenario fails (children, temp dirs). */
  defer(fn: () => unknown): void;
}

export interface Scenario {
  name: ScenarioName;
  defaultSizes: number[];
  /** Whether `size` is a pod count the limits check applies to. */
  sizeIsPods: boolean;
  run(size: number, ctx: ScenarioContext): Promise<ScenarioResult>;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const mb = (bytes: number) => bytes / (1024 * 1024);
