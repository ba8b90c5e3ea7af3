// Events as kubectl prints them: the `kubectl get events` table (printEvent), a live table of a
// watch, and the Events section of `kubectl describe` (DescribeEvents).

import type { Event } from '../api/types.js';
import { translateTimestampSince } from './ages.js';
import { describeSettings, getTableSettings, RememberingTabwriter, tabwriteRows } from './tabwriter.js';

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
  return [
    lastSeen,
    ev.type ?? '',
    ev.reason ?? '',
    target,
    o.fieldPath ?? '',
    formatEventSource(ev),
    message,
    firstSeen,
    String(count),
    ev.metadata.name ?? '',
  ];
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
  return tabwriteRows(rows, getTableSettings);
}

/**
 * A live event table (`kubectl get events --watch`), one event at a time, each line its own flush of
 * a RememberingTabwriter as in kubectl's watch: a column only widens when a longer cell comes. Unlike
 * kubectl's, each column starts as wide as what it will usually hold (the objects are known up front),
 * so later lines seldom shift the columns the first ones set.
 */
export class EventStreamFormatter {
  private readonly writer: RememberingTabwriter;
  private headerDone = false;

  constructor(objects: readonly string[] = []) {
    const { minwidth, padding } = getTableSettings;
    const usual = [eventTableHeaders[0]!.length, 'Warning'.length, 'FailedPostStartHook'.length, Math.max(0, ...objects.map((o) => o.length))];
    this.writer = new RememberingTabwriter(
      getTableSettings,
      usual.map((w, i) => Math.max(minwidth, w, eventTableHeaders[i]!.length) + padding),
    );
  }

  format(ev: Event, now: number): string {
    let out = '';
    if (!this.headerDone) {
      this.headerDone = true;
      out += this.writer.flushRows([eventTableHeaders]);
    }
    return out + this.writer.flushRows([eventTableRow(ev, now)]);
  }
}

/**
 * The Events section of `kubectl describe` (DescribeEvents): sorted by lastTimestamp, ages like
 * `31s` or `2s (x3 over 31s)`. With no events it prints `Events:  <none>` (kubectl aligns that with
 * the describe fields above it; standalone there is nothing to align with).
 */
export function formatDescribeEvents(events: readonly Event[], now: number): string {
  if (events.length === 0) return tabwriteRows([['Events:', '<none>']], describeSettings);
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
  return 'Events:\n' + tabwriteRows(rows, describeSettings);
}
