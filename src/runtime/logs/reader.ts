// Reads a container's CRI-format log back as lines (what `logs` and the run-once failure summary
// show): rotated files oldest first, then the current one; `P` pieces joined to their line.

import { constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { decodeRecord, type LogStream } from './cri-format.js';
import { listRotatedLogs } from './rotation.js';
import { parseRFC3339Nano } from './timestamp.js';

export interface ReadLogOptions {
  /** Only the last n lines (applied before sinceTime, as the kubelet applies tail then since). */
  tailLines?: number;
  /** Only lines at or after this time (RFC 3339 string or Date). */
  sinceTime?: Date | string;
  /** Prefix each line with its RFC 3339 timestamp and a space, as `kubectl logs --timestamps`. */
  timestamps?: boolean;
  /** Only this stream; both when unset. */
  stream?: LogStream;
}

export interface LogEntry {
  /** Timestamp of the line's first record, as written. */
  timestamp: string;
  stream: LogStream;
  content: string;
  /**
   * False for the last piece of a stream that ended without a newline (`P` records and no `F`): the
   * kubelet's log reader shows it as written, without adding a newline.
   */
  terminated: boolean;
}

/** Every line of the log, oldest first, with its stream and timestamp. */
export async function readContainerLogEntries(path: string, opts: ReadLogOptions = {}): Promise<LogEntry[]> {
  const files = [...(await listRotatedLogs(path)), path];
  const entries: LogEntry[] = [];
  // Pieces of a long line, per stream (stdout and stderr records interleave).
  const partial: Record<LogStream, { timestamp: string; parts: Buffer[] } | undefined> = { stdout: undefined, stderr: undefined };
  let found = 0;
  let missing: unknown;
  for (const file of files) {
    let data: Buffer;
    try {
      // A symlink planted in the log tree is never followed.
      data = await readFile(file, { flag: constants.O_RDONLY | constants.O_NOFOLLOW });
      found++;
    } catch (err) {
      // A rotated file may be removed between listing and reading.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing = err;
      continue;
    }
    let pos = 0;
    while (pos < data.length) {
      let nl = data.indexOf(0x0a, pos);
      if (nl === -1) nl = data.length;
      const rec = decodeRecord(data.subarray(pos, nl));
      pos = nl + 1;
      if (!rec) continue;
      const open = partial[rec.stream];
      if (rec.tag === 'P') {
        if (open) open.parts.push(rec.content);
        else partial[rec.stream] = { timestamp: rec.timestamp, parts: [rec.content] };
        continue;
      }
      if (open) {
        open.parts.push(rec.content);
        entries.push({ timestamp: open.timestamp, stream: rec.stream, content: Buffer.concat(open.parts).toString('utf8'), terminated: true });
        partial[rec.stream] = undefined;
      } else {
        entries.push({ timestamp: rec.timestamp, stream: rec.stream, content: rec.content.toString('utf8'), terminated: true });
      }
    }
  }
  if (found === 0) throw missing;
  // A line still in pieces at the end (its writer is mid-line, or ended without a newline) is shown as it is.
  for (const stream of ['stdout', 'stderr'] as const) {
    const open = partial[stream];
    if (open) entries.push({ timestamp: open.timestamp, stream, content: Buffer.concat(open.parts).toString('utf8'), terminated: false });
  }

  let out = opts.stream ? entries.filter((e) => e.stream === opts.stream) : entries;
  if (opts.tailLines !== undefined && opts.tailLines >= 0) out = opts.tailLines === 0 ? [] : out.slice(-opts.tailLines);
  if (opts.sinceTime !== undefined) {
    const since = opts.sinceTime instanceof Date ? BigInt(opts.sinceTime.getTime()) * 1_000_000n : parseRFC3339Nano(opts.sinceTime);
    if (since === undefined) throw new Error(`invalid sinceTime ${JSON.stringify(opts.sinceTime)}`);
    out = out.filter((e) => (parseRFC3339Nano(e.timestamp) ?? 0n) >= since);
  }
  return out;
}

/** The log as the kubelet's ReadLogs writes it: each line with its newline, an unterminated last piece without. */
export async function readContainerLogText(path: string, opts: ReadLogOptions = {}): Promise<string> {
  const entries = await readContainerLogEntries(path, opts);
  return entries.map((e) => `${opts.timestamps ? `${e.timestamp} ` : ''}${e.content}${e.terminated ? '\n' : ''}`).join('');
}

/** The log's lines as text, oldest first (see ReadLogOptions). */
export async function readContainerLog(path: string, opts: ReadLogOptions = {}): Promise<string[]> {
  const entries = await readContainerLogEntries(path, opts);
  return opts.timestamps ? entries.map((e) => `${e.timestamp} ${e.content}`) : entries.map((e) => e.content);
}
