// A container log as a stream, as the kubelet serves /containerLogs: what is written so far (after
// tailLines, then sinceTime), then — with follow — new lines as they are written, until the container
// has stopped and its log is drained; limitBytes caps what is sent.

import { open, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { decodeRecord, type LogStream } from './cri-format.js';
import { readContainerLogEntries } from './reader.js';
import { parseRFC3339Nano } from './timestamp.js';

/** How often a followed log is checked for growth. */
export const FOLLOW_POLL_MS = 200;

export interface LogStreamOptions {
  tailLines?: number;
  sinceTime?: string;
  timestamps?: boolean;
  limitBytes?: number;
  follow?: boolean;
  /** Whether the container still writes to this log (follow ends once it does not and the log is drained). */
  isRunning?: () => Promise<boolean>;
}

export function containerLogStream(path: string, opts: LogStreamOptions): Readable {
  let sent = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const since = opts.sinceTime !== undefined ? parseRFC3339Nano(opts.sinceTime) : undefined;
  const out = new Readable({
    read() {},
    destroy(err, cb) {
      stopped = true;
      if (timer) clearTimeout(timer);
      cb(err);
    },
  });
  /** Pushes one line's text (with its newline, unless the line ended unterminated); false once limitBytes is reached. */
  const emit = (timestamp: string, text: string): boolean => {
    if (since !== undefined && (parseRFC3339Nano(timestamp) ?? 0n) < since) return true;
    let line = Buffer.from(`${opts.timestamps ? `${timestamp} ` : ''}${text}`);
    if (opts.limitBytes !== undefined && sent + line.length >= opts.limitBytes) {
      line = line.subarray(0, opts.limitBytes - sent);
      out.push(line);
      sent += line.length;
      return false;
    }
    out.push(line);
    sent += line.length;
    return true;
  };
  const finish = () => {
    if (stopped) return;
    stopped = true;
    out.push(null);
  };

  const run = async () => {
    let offset = 0;
    try {
      const entries = await readContainerLogEntries(path, opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {});
      offset = (await stat(path).catch(() => ({ size: 0 }))).size;
      for (const e of entries) if (stopped || !emit(e.timestamp, e.terminated ? `${e.content}\n` : e.content)) return finish();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (!opts.follow) return finish();
    const partial: Record<LogStream, { timestamp: string; parts: Buffer[] } | undefined> = { stdout: undefined, stderr: undefined };
    let rest = Buffer.alloc(0);
    const tick = async (): Promise<void> => {
      if (stopped) return;
      const size = (await stat(path).catch(() => ({ size: offset }))).size;
      if (size < offset) offset = 0; // rotated: the new file starts afresh
      let grew = false;
      if (size > offset) {
        grew = true;
        const fh = await open(path, 'r');
        try {
          const buf = Buffer.alloc(size - offset);
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
          offset += bytesRead;
          rest = Buffer.concat([rest, buf.subarray(0, bytesRead)]);
        } finally {
          await fh.close();
        }
        let pos = 0;
        for (;;) {
          const nl = rest.indexOf(0x0a, pos);
          if (nl === -1) break;
          const rec = decodeRecord(rest.subarray(pos, nl));
          pos = nl + 1;
          if (!rec) continue;
          const open_ = partial[rec.stream];
          if (rec.tag === 'P') {
            if (open_) open_.parts.push(rec.content);
            else partial[rec.stream] = { timestamp: rec.timestamp, parts: [rec.content] };
            continue;
          }
          const ts = open_?.timestamp ?? rec.timestamp;
          const content = open_ ? Buffer.concat([...open_.parts, rec.content]).toString('utf8') : rec.content.toString('utf8');
          partial[rec.stream] = undefined;
          if (!emit(ts, `${content}\n`)) return finish();
        }
        rest = rest.subarray(pos);
      }
      if (!grew && opts.isRunning && !(await opts.isRunning())) {
        // One more look: the last lines may have landed after the size was read.
        const last = (await stat(path).catch(() => ({ size: offset }))).size;
        if (last <= offset) {
          // A last line the container never ended is shown as written, without a newline.
          for (const p of Object.values(partial)) if (p && !emit(p.timestamp, Buffer.concat(p.parts).toString('utf8'))) break;
          return finish();
        }
      }
      if (!stopped) timer = setTimeout(() => void tick().catch((e: Error) => out.destroy(e)), FOLLOW_POLL_MS);
    };
    await tick();
  };
  void run().catch((err: Error) => out.destroy(err));
  return out;
}
