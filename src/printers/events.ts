// Events as kubectl prints them: the `kubectl get events` table, the Events section of
// `kubectl describe`, and apimachinery's duration.HumanDuration used for their ages.

import type { Event } from '../api/types.js';

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration, for a duration in ms. */
export function humanDuration(ms: number): string {
  // Go converts with truncation toward zero.
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3600000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kubectl's translateTimestampSince: `<unknown>` for an unset time, else the HumanDuration since. */
export function translateTimestampSince(timestamp: string | null | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

export interface TabwriterOptions {
  minwidth: number;
  padding: number;
}

/**
 * Aligns rows as Go's text/tabwriter does with kubectl's settings: every cell but the last of a row
 * is padded to its column's widest cell plus `padding`, at least `minwidth`; the last cell is not
 * padded. Widths count code points, as tabwriter counts runes.
 */
export function tabwrite(rows: readonly (readonly string[])[], opts: TabwriterOptions): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) {
      const w = Math.max(opts.minwidth, [...row[i]!].length + opts.padding);
      if (w > (widths[i] ?? 0)) widths[i] = w;
    }
  }
  let out = '';
  for (const row of rows) {
    let line = '';
    for (let i = 0; i < row.length; i++) {
      const cell = row[i]!;
      if (i < row.length - 1) line += cell + ' '.repeat(widths[i]! - [...cell].length);
      else line += cell;
    }
    out += line + '\n';
  }
  return out;
}

// printers.GetNewTabWriter: minwidth 6, padding 3.
const tableWriter: TabwriterOptions = { minwidth: 6, padding: 3 };
// kubectl describe's tabwriter: minwidth 0, padding 2.
const describeWriter: TabwriterOptions = { minwidth: 0, padding: 2 };

function formatEventSource(ev: Event): string {
  const comp = ev.source?.component || ev.reportingComponent || '';
  const inst = ev.source?.host || ev.reportingInstance || '';
  if (!comp && !inst) return '';
  if (!inst) return comp;
  return `${comp}, ${inst}`;
}

/** The cells of one `kubectl get events` row (printEvent); wide adds the columns of `-o wide`. */
export function eventTableRow(ev: Event, now: number, wide = false): string[] {
  let firstSeen = translateTimestampSince(ev.firstTimestamp, now);
  if (!ev.firstTimestamp) firstSeen = translateTimestampSince(ev.eventTime, now);
  const lastSeen = ev.lastTimestamp ? translateTimestampSince(ev.lastTimestamp, now) : firstSeen;
  const count = ev.count || 1;
  const o = ev.involvedObject;
  const kind = (o.kind ?? '').toLowerCase();
  const target = o.name ? `${kind}/${o.name}` : kind;
  const message = oneRow(ev.message ?? '');
  if (!wide) return [lastSeen, ev.type ?? '', ev.reason ?? '', target, message];
  return [lastSeen, ev.type ?? '', ev.reason ?? '', target, o.fieldPath ?? '', formatEventSource(ev), message, firstSeen, String(count), ev.metadata.name ?? ''];
}

/** A message on one table row: surrounding space trimmed, line breaks shown as `\n`. */
function oneRow(message: string): string {
  return message.trim().replace(/\r?\n/g, '\\n');
}

export const eventTableHeaders = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
export const eventTableWideHeaders = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME'];

export interface EventTableOptions {
  wide?: boolean;
  /** Leave out the header row (later batches of a watch). */
  noHeaders?: boolean;
}

/**
 * `kubectl get events` output for these events, in the given order, aligned as one tabwriter flush.
 * A watch prints its first batch with the header and each later batch as its own flush, so
 * streaming callers format each new event with noHeaders.
 */
export function formatEventTable(events: readonly Event[], now: number, opts: EventTableOptions = {}): string {
  const rows: string[][] = [];
  if (!opts.noHeaders) rows.push(opts.wide ? eventTableWideHeaders : eventTableHeaders);
  for (const ev of events) rows.push(eventTableRow(ev, now, opts.wide));
  return tabwrite(rows, tableWriter);
}

/**
 * A live event table (`kubectl get events --watch`), one event at a time, with its columns aligned
 * across lines: each column starts as wide as what it will usually hold (the objects are known up
 * front) and only widens when a longer cell comes, where a watch would align every line on its own.
 */
export class EventStreamFormatter {
  private readonly widths: number[];
  private headerDone = false;

  constructor(objects: readonly string[] = []) {
    const min = [eventTableHeaders[0]!.length, 'Warning'.length, 'FailedPostStartHook'.length, Math.max(0, ...objects.map((o) => o.length))];
    this.widths = min.map((w, i) => Math.max(tableWriter.minwidth, w, eventTableHeaders[i]!.length) + tableWriter.padding);
  }

  format(ev: Event, now: number): string {
    let out = '';
    if (!this.headerDone) {
      this.headerDone = true;
      out += this.line(eventTableHeaders);
    }
    return out + this.line(eventTableRow(ev, now));
  }

  private line(cells: readonly string[]): string {
    let line = '';
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]!;
      if (i === cells.length - 1) {
        line += cell;
        break;
      }
      const len = [...cell].length;
      if (len + tableWriter.padding > this.widths[i]!) this.widths[i] = len + tableWriter.padding;
      line += cell + ' '.repeat(this.widths[i]! - len);
    }
    return `${line}\n`;
  }
}

/**
 * The Events section of `kubectl describe` (DescribeEvents): sorted by lastTimestamp, ages like
 * `31s` or `2s (x3 over 31s)`. With no events it prints `Events:  <none>` (kubectl aligns that with
 * the describe fields above it; standalone there is nothing to align with).
 */
export function formatDescribeEvents(events: readonly Event[], now: number): string {
  if (events.length === 0) return tabwrite([['Events:', '<none>']], describeWriter);
  const sorted = events
    .map((ev, i) => ({ ev, i, t: Date.parse(ev.lastTimestamp ?? '') || 0 }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.ev);
  const rows: string[][] = [
    ['  Type', 'Reason', 'Age', 'From', 'Message'],
    ['  ----', '------', '----', '----', '-------'],
  ];
  for (const e of sorted) {
    let first = translateTimestampSince(e.eventTime, now);
    if (!e.eventTime) first = translateTimestampSince(e.firstTimestamp, now);
    const interval = (e.count ?? 0) > 1 ? `${translateTimestampSince(e.lastTimestamp, now)} (x${e.count} over ${first})` : first;
    const source = e.source?.component || e.reportingComponent || '';
    rows.push([`  ${e.type ?? ''}`, e.reason ?? '', interval, source, oneRow(e.message ?? '')]);
  }
  return 'Events:\n' + tabwrite(rows, describeWriter);
}
