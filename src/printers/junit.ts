// The run-once result as a JUnit XML report (`podvisor run --junit FILE`), the format CI systems show:
// one testsuite, one testcase per pod (classname its kind, name namespace/name); a failed pod's
// <failure> holds its part of the run summary (reason, message, probe results, log tail) and
// <system-out> the log tail of its failing containers. Built with xmlbuilder2, which escapes the text
// and drops characters XML cannot hold.

import { writeFile } from 'node:fs/promises';
import { create } from 'xmlbuilder2';
import { podFailureReport, type ContainerLogReader, type PodProbeResults, type SummaryPod } from './run-summary.js';

export interface JUnitRun {
  /** The suite's name (`podvisor run`). */
  name: string;
  pods: readonly SummaryPod[];
  /** When the run started and how long it took (ms). */
  startedAt: number;
  durationMs: number;
  readLog: ContainerLogReader;
  probes?: PodProbeResults;
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** The JUnit XML document of a run. */
export async function formatJUnitReport(run: JUnitRun): Promise<string> {
  const failures = run.pods.filter((p) => !p.ok).length;
  const time = seconds(run.durationMs);
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('testsuites', { name: run.name, tests: run.pods.length, failures, errors: 0, time });
  const suite = root.ele('testsuite', {
    name: run.name,
    tests: run.pods.length,
    failures,
    errors: 0,
    skipped: 0,
    timestamp: new Date(run.startedAt).toISOString().replace(/\.\d+Z$/, ''),
    time,
  });
  for (const p of run.pods) {
    const m = p.pod.metadata ?? {};
    const tc = suite.ele('testcase', { classname: p.pod.kind ?? 'Pod', name: `${m.namespace ?? 'default'}/${m.name ?? ''}`, time });
    if (p.ok) continue;
    const report = await podFailureReport(p, run.readLog, run.probes);
    tc.ele('failure', { message: p.error ?? 'failed', type: 'PodFailed' }).txt(report.lines.join('\n'));
    const out = report.logs.flatMap((l) => [`==> ${l.container} <==`, ...l.lines]);
    if (out.length > 0) tc.ele('system-out').txt(out.join('\n'));
  }
  return root.end({ prettyPrint: true }) + '\n';
}

/** Writes the run's JUnit XML report to file. */
export async function writeJUnitReport(file: string, run: JUnitRun): Promise<void> {
  await writeFile(file, await formatJUnitReport(run));
}
