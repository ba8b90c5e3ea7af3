// The probe history printed for people (`podvisor probes`, describe, run's failure report): a
// timeline of results (TIME, CONTAINER, PROBE, RESULT, LATENCY, STREAK, EFFECT, OUTPUT), one line
// per probe saying where it stands in words, a sparkline of results, and describe's `Last …` line.
// It reads the ProbeHistory document the agent serves.

import { humanDuration } from './ages.js';
import { getTableSettings, tabwriteRows } from './tabwriter.js';

/** One item of the ProbeHistory document. */
export interface ProbeHistoryItem {
  container: string;
  probe: string;
  time: string;
  result: string;
  latencyMs: number;
  output: string;
  streak: number;
  threshold: number;
  effect: string;
}

/** Output as one line, cut to width characters for the table. */
function outputCell(output: string, width: number): string {
  const line = output.trim().replace(/\s*\n\s*/g, ' ');
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

function clockTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(11, 23);
}

/** The timeline table, oldest first. */
export function formatProbeTable(items: readonly ProbeHistoryItem[], outputWidth = 60): string {
  const rows: string[][] = [['TIME', 'CONTAINER', 'PROBE', 'RESULT', 'LATENCY', 'STREAK', 'EFFECT', 'OUTPUT']];
  for (const e of items) rows.push(timelineRow(e, outputWidth));
  return tabwriteRows(rows, getTableSettings);
}

/** One row of the timeline (a watch prints rows as they come). */
export function timelineRow(e: ProbeHistoryItem, outputWidth = 60): string[] {
  return [
    clockTime(e.time),
    e.container,
    e.probe,
    e.result,
    `${e.latencyMs}ms`,
    e.result === 'Unknown' ? '-' : `${e.streak}/${e.threshold}`,
    e.effect || '-',
    outputCell(e.output, outputWidth),
  ];
}

/** The items of each (container, probe), in first-seen order. */
export function byProbe(items: readonly ProbeHistoryItem[]): Map<string, ProbeHistoryItem[]> {
  const groups = new Map<string, ProbeHistoryItem[]>();
  for (const e of items) {
    const key = `${e.container}\u0000${e.probe}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(e);
  }
  return groups;
}

const plural = (n: number, word: string) => `${n} more ${word}${n === 1 ? '' : 's'}`;

/** The published state of a readiness probe after its items: its last effect, NotReady before any. */
function readinessState(items: readonly ProbeHistoryItem[]): string {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.effect === 'Ready' || items[i]!.effect === 'NotReady') return items[i]!.effect;
  return 'NotReady';
}

/** When the current run of the last result began (the time of its first item). */
function runStart(items: readonly ProbeHistoryItem[]): string {
  const last = items[items.length - 1]!;
  let i = items.length - 1;
  while (i > 0 && items[i - 1]!.result === last.result && items[i - 1]!.streak === items[i]!.streak - 1) i--;
  return items[i]!.time;
}

/**
 * Where one probe stands, in words, from its items (oldest first):
 * `readiness failing 2/3 since 4s: still Ready, NotReady at the next failure`.
 */
export function probeStanding(items: readonly ProbeHistoryItem[], now: number): string {
  const last = items[items.length - 1]!;
  const name = `${last.container} ${last.probe}`;
  if (last.result === 'Unknown') return `${name} errored ${humanDuration(now - Date.parse(last.time))} ago: ${outputCell(last.output, 120)}`;
  const since = humanDuration(now - Date.parse(runStart(items)));
  const failing = last.result === 'Failure';
  const head = `${name} ${failing ? 'failing' : 'passing'} ${last.streak}/${last.threshold} since ${since}`;
  const left = last.threshold - last.streak;
  switch (last.probe) {
    case 'readiness': {
      const state = readinessState(items);
      if (failing) {
        if (left > 0) return `${head}: still ${state}, NotReady ${left === 1 ? 'at the next failure' : `after ${plural(left, 'failure')}`}`;
        return `${head}: NotReady`;
      }
      if (left > 0) return `${head}: still ${state}, Ready ${left === 1 ? 'at the next success' : `after ${plural(left, 'success')}`}`;
      return `${head}: Ready`;
    }
    case 'liveness':
      if (!failing) return `${head}: healthy`;
      if (left > 0) return `${head}: restart ${left === 1 ? 'at the next failure' : `after ${plural(left, 'failure')}`}`;
      return `${head}: container restarted`;
    default:
      if (!failing) return `${head}: Started`;
      if (left > 0) return `${head}: not started, restart ${left === 1 ? 'at the next failure' : `after ${plural(left, 'failure')}`}`;
      return `${head}: container restarted`;
  }
}

/** One line per probe saying where it stands. */
export function formatProbeStandings(items: readonly ProbeHistoryItem[], now: number): string {
  return [...byProbe(items).values()].map((g) => `${probeStanding(g, now)}\n`).join('');
}

const sparkMarks: Record<string, string> = { Success: '▁', Failure: '█', Unknown: '?' };

/** A sparkline of each probe's results (▁ success, █ failure, ? error), the last width of them. */
export function formatSparklines(items: readonly ProbeHistoryItem[], width = 60): string {
  const rows: string[][] = [];
  for (const g of byProbe(items).values()) {
    const last = g[g.length - 1]!;
    const marks = g
      .slice(-width)
      .map((e) => sparkMarks[e.result] ?? '?')
      .join('');
    rows.push([last.container, last.probe, marks, `${last.result} ${last.streak}/${last.threshold}`]);
  }
  return rows.length === 0 ? '' : tabwriteRows(rows, getTableSettings);
}

/** describe's line beside a probe's spec: `Success 3s ago (streak 5)`, or undefined when it never ran. */
export function lastResultText(items: readonly ProbeHistoryItem[], container: string, probe: string, now: number): string | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const e = items[i]!;
    if (e.container !== container || e.probe !== probe) continue;
    const ago = humanDuration(now - Date.parse(e.time));
    if (e.result === 'Unknown') return `Unknown ${ago} ago (probe error: ${outputCell(e.output, 80)})`;
    return `${e.result} ${ago} ago (streak ${e.streak})`;
  }
  return undefined;
}
