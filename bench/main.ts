// `npm run bench`: runs the selected scenarios at the selected sizes, each agent figure next to its
// same-run floor, prints the table and writes bench/results/latest.json.

import { fitPodCount } from './lib/limits.js';
import { machineInfo } from './lib/machine.js';
import { parseOptions, USAGE, type BenchOptions } from './options.js';
import type { ScenarioResult } from './report/figures.js';
import { defaultResultsPath, writeRecord, type RunRecord } from './report/results.js';
import { renderTable } from './report/table.js';
import { scenarios } from './scenarios/index.js';
import type { ScenarioContext } from './scenarios/types.js';

async function runOne(name: keyof typeof scenarios, requested: number, opts: BenchOptions): Promise<ScenarioResult> {
  const scenario = scenarios[name];
  const cleanups: Array<() => unknown> = [];
  const ctx: ScenarioContext = {
    trials: opts.trials,
    log: (msg) => process.stderr.write(`bench: ${msg}\n`),
    defer: (fn) => cleanups.push(fn),
  };
  if (opts.durationMs !== undefined) ctx.durationMs = opts.durationMs;
  if (opts.warmupMs !== undefined) ctx.warmupMs = opts.warmupMs;
  if (opts.rounds !== undefined) ctx.rounds = opts.rounds;
  const fit = scenario.sizeIsPods ? fitPodCount(requested) : { requested, allowed: requested };
  const notes: string[] = [];
  if (fit.message) {
    notes.push(fit.message);
    ctx.log(fit.message);
  }
  try {
    if (fit.allowed < 1) throw new Error(fit.message ?? 'no pods fit the limits');
    const result = await scenario.run(fit.allowed, ctx);
    if (fit.allowed !== requested) result.requestedSize = requested;
    result.notes.unshift(...notes);
    return result;
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    ctx.log(`${name} N=${fit.allowed} failed: ${message}`);
    return { scenario: name, size: fit.allowed, requestedSize: requested, figures: [], notes, error: message };
  } finally {
    // Last registered first: children before the directories they use.
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch {
        // Cleanup is best effort; a failure here must not hide the scenario's own result.
      }
    }
  }
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  const results: ScenarioResult[] = [];
  for (const name of opts.scenarios) {
    const sizes = opts.sizes ?? (name === 'failure-detection' ? [opts.trials] : scenarios[name].defaultSizes);
    for (const size of sizes) results.push(await runOne(name, size, opts));
  }
  const record: RunRecord = {
    schema: 'podvisor-bench/1',
    machine,
    options: { ...opts, help: undefined },
    startedAt,
    finishedAt: new Date().toISOString(),
    results,
  };
  const out = opts.out ?? defaultResultsPath();
  writeRecord(out, record);
  const gib = (machine.memoryBytes / 2 ** 30).toFixed(1);
  process.stdout.write(
    `podvisor bench — ${machine.cpuModel}, ${machine.cores} cores, ${gib} GiB, Node ${machine.node}, load ${machine.loadAverage.join(' ')}\n\n`,
  );
  process.stdout.write(renderTable(results) + '\n');
  process.stdout.write(`results written to ${out}\n`);
  return results.some((r) => r.error) ? 1 : 0;
}

process.exitCode = await main();
