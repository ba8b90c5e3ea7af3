// The CRI log format (`<RFC3339Nano> <stream> <tag> <content>`): cutting a stream's bytes into
// records as containerd's cri logger does, and encoding/decoding one record.

export type LogStream = 'stdout' | 'stderr';
/** `F` ends a line; `P` is a piece of a line longer than the maximum record size. */
export type LogTag = 'F' | 'P';

/** containerd's default `max_container_log_line_size`. */
export const MAX_LOG_LINE_BYTES = 16 * 1024;

const NL = 0x0a;
const CR = 0x0d;

/**
 * Cuts one stream into records the way containerd's redirectLogs does: each line (without its
 * `\n` or `\r\n`) becomes an `F` record; a line longer than maxLen is written as `P` pieces of
 * maxLen bytes followed by an `F` with the rest; bytes left at end of stream, a line never
 * terminated, become a `P` (a reader then shows them without a newline).
 */
export class CriLineSplitter {
  private pending: Buffer[] = [];
  private pendingLen = 0;

  constructor(
    private readonly emit: (tag: LogTag, content: Buffer) => void,
    private readonly maxLen = MAX_LOG_LINE_BYTES,
  ) {}

  write(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NL, pos);
      if (nl === -1) {
        this.append(chunk.subarray(pos));
        this.emitOverflow();
        return;
      }
      let end = nl;
      if (end > pos && chunk[end - 1] === CR) end--;
      else if (end === pos) this.dropTrailingCR();
      this.append(chunk.subarray(pos, end));
      this.emitOverflow();
      this.emit('F', this.take());
      pos = nl + 1;
    }
  }

  /** The stream ended: whatever is left is a last line without its newline, a `P` as containerd writes it. */
  end(): void {
    if (this.pendingLen === 0) return;
    this.emitOverflow();
    this.emit('P', this.take());
  }

  private append(b: Buffer): void {
    if (b.length === 0) return;
    this.pending.push(b);
    this.pendingLen += b.length;
  }

  private take(): Buffer {
    const out = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLen);
    this.pending = [];
    this.pendingLen = 0;
    return out;
  }

  private emitOverflow(): void {
    while (this.pendingLen > this.maxLen) {
      const all = this.take();
      this.emit('P', all.subarray(0, this.maxLen));
      this.append(all.subarray(this.maxLen));
    }
  }

  /** A `\r\n` split across two chunks: the `\r` is already pending. */
  private dropTrailingCR(): void {
    const last = this.pending[this.pending.length - 1];
    if (!last || last[last.length - 1] !== CR) return;
    this.pending[this.pending.length - 1] = last.subarray(0, last.length - 1);
    this.pendingLen--;
  }
}

/** One record as written to the file, newline included. */
export function encodeRecord(timestamp: string, stream: LogStream, tag: LogTag, content: Buffer): Buffer {
  const header = `${timestamp} ${stream} ${tag} `;
  const out = Buffer.allocUnsafe(Buffer.byteLength(header) + content.length + 1);
  const n = out.write(header, 0, 'latin1');
  content.copy(out, n);
  out[out.length - 1] = NL;
  return out;
}

export interface LogRecord {
  timestamp: string;
  stream: LogStream;
  tag: LogTag;
  content: Buffer;
}

/** Parses one record (without its newline); undefined for a malformed line. */
export function decodeRecord(line: Buffer): LogRecord | undefined {
  const s1 = line.indexOf(0x20);
  if (s1 <= 0) return undefined;
  const s2 = line.indexOf(0x20, s1 + 1);
  if (s2 < 0) return undefined;
  const stream = line.toString('latin1', s1 + 1, s2);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  let s3 = line.indexOf(0x20, s2 + 1);
  // An empty line has no trailing space after the tag in some writers.
  if (s3 < 0) s3 = line.length;
  // Tags may carry more attributes after `:`; the first one is F or P.
  const tags = line.toString('latin1', s2 + 1, s3);
  const tag: LogTag = tags.split(':')[0] === 'P' ? 'P' : 'F';
  return {
    timestamp: line.toString('latin1', 0, s1),
    stream,
    tag,
    content: line.subarray(Math.min(s3 + 1, line.length)),
  };
}
