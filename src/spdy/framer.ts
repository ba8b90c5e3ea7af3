// SPDY/3.1 server sessions, as kubectl's exec, attach and port-forward speak them (Go's spdystream).
//
// Written here rather than taken from npm: SPDY/3.1 has no maintained implementation there (spdy and
// spdy-transport are unmaintained and reject the SYN_STREAM frames Kubernetes clients send, which carry
// no :method/:path). What Kubernetes needs is small: SYN_STREAM/SYN_REPLY, DATA with FIN, RST_STREAM,
// SETTINGS, PING, GOAWAY, WINDOW_UPDATE, and header blocks compressed with zlib and the protocol's
// dictionary (node:zlib's `dictionary` option). A server session replies to the streams its peer
// opens; a client session (to a runtime's streaming server) opens its own, with odd ids.
// Like spdystream, flow control is not enforced: received WINDOW_UPDATEs are accepted and ignored.

import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

export const FLAG_FIN = 0x01;

/** RST_STREAM status codes. */
export const RstStatus = { PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, CANCEL: 5, INTERNAL_ERROR: 6, STREAM_ALREADY_CLOSED: 9 } as const;

const headerWords = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const dictionaryTail =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 header-compression dictionary (draft 3, 2.6.10.1): length-prefixed words, then a tail. */
export const SPDY_DICTIONARY: Buffer = Buffer.concat([
  ...headerWords.map((w) => {
    const b = Buffer.alloc(4 + w.length);
    b.writeUInt32BE(w.length, 0);
    b.write(w, 4, 'latin1');
    return b;
  }),
  Buffer.from(dictionaryTail, 'latin1'),
]);

export type Headers = Record<string, string>;

/** A name/value block: count, then length-prefixed names and values (multiple values NUL-joined). */
export function encodeHeaderBlock(headers: Headers): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(Object.keys(headers).length);
  parts.push(count);
  for (const [k, v] of Object.entries(headers)) {
    for (const s of [k.toLowerCase(), v]) {
      const b = Buffer.from(s, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      parts.push(len, b);
    }
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(buf: Buffer): Headers {
  const out: Headers = {};
  if (buf.length < 4) throw new Error('header block too short');
  const n = buf.readUInt32BE(0);
  let off = 4;
  const take = () => {
    if (off + 4 > buf.length) throw new Error('header block truncated');
    const len = buf.readUInt32BE(off);
    off += 4;
    if (off + len > buf.length) throw new Error('header block truncated');
    const s = buf.toString('utf8', off, off + len);
    off += len;
    return s;
  };
  for (let i = 0; i < n; i++) {
    const k = take().toLowerCase();
    out[k] = take();
  }
  return out;
}

/** One zlib context for a whole session and direction, flushed (Z_SYNC_FLUSH) per header block. */
class HeaderCodec {
  private readonly z: Inflate | Deflate;
  private failed: Error | undefined;

  constructor(kind: 'inflate' | 'deflate') {
    this.z = kind === 'inflate' ? createInflate({ dictionary: SPDY_DICTIONARY }) : createDeflate({ dictionary: SPDY_DICTIONARY });
    this.z.on('error', (err) => (this.failed = err));
  }

  run(input: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failed) return reject(this.failed);
      this.z.write(input);
      this.z.flush(zc.Z_SYNC_FLUSH, () => {
        if (this.failed) return reject(this.failed);
        const chunks: Buffer[] = [];
        let c: Buffer | null;
        while ((c = this.z.read() as Buffer | null) !== null) chunks.push(c);
        resolve(Buffer.concat(chunks));
      });
    });
  }

  close(): void {
    this.z.destroy();
  }
}

export interface ControlFrame {
  control: true;
  type: number;
  flags: number;
  data: Buffer;
}
export interface DataFrame {
  control: false;
  streamId: number;
  flags: number;
  data: Buffer;
}
export type Frame = ControlFrame | DataFrame;

/** Splits a byte stream into frames; returns the frames and the unconsumed rest. */
export function parseFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let off = 0;
  while (buf.length - off >= 8) {
    const len = buf.readUIntBE(off + 5, 3);
    if (buf.length - off < 8 + len) break;
    const flags = buf[off + 4]!;
    const data = buf.subarray(off + 8, off + 8 + len);
    if (buf[off]! & 0x80) {
      frames.push({ control: true, type: buf.readUInt16BE(off + 2), flags, data });
    } else {
      frames.push({ control: false, streamId: buf.readUInt32BE(off) & 0x7fffffff, flags, data });
    }
    off += 8 + len;
  }
  return { frames, rest: buf.subarray(off) };
}

export function controlFrame(type: number, flags: number, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | 3, 0);
  h.writeUInt16BE(type, 2);
  h[4] = flags;
  h.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([h, data]);
}

export function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(streamId & 0x7fffffff, 0);
  h[4] = flags;
  h.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([h, data]);
}

const u32 = (...ns: number[]) => {
  const b = Buffer.alloc(4 * ns.length);
  ns.forEach((n, i) => b.writeUInt32BE(n >>> 0, 4 * i));
  return b;
};

const MAX_DATA = 32 * 1024;

/** One stream of a session: a Duplex whose writes become DATA frames and whose end sends FIN. */
export class SpdyStream extends Duplex {
  private replied: boolean;
  remoteClosed = false;

  constructor(
    readonly id: number,
    readonly headers: Headers,
    private readonly session: SpdySession,
    /** Opened by this side: the peer replies, this side never does. */
    local = false,
  ) {
    super({ allowHalfOpen: true });
    this.replied = local;
  }

  /** Accepts the stream (SYN_REPLY); data written before it is queued behind it. */
  reply(headers: Headers = {}): void {
    if (this.replied) return;
    this.replied = true;
    this.session.sendReply(this.id, headers);
  }

  /** Aborts the stream (RST_STREAM). */
  reset(status: number = RstStatus.CANCEL): void {
    this.session.sendReset(this.id, status);
    this.destroy();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.reply();
    for (let off = 0; off < chunk.length; off += MAX_DATA) {
      this.session.send(Promise.resolve(dataFrame(this.id, 0, chunk.subarray(off, off + MAX_DATA))));
    }
    this.session.drained().then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.reply();
    this.session.send(Promise.resolve(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0))));
    this.session.drained().then(() => cb(), cb);
  }

  /** Data from the peer. */
  receive(data: Buffer, fin: boolean): void {
    if (data.length) this.push(data);
    if (fin) {
      this.remoteClosed = true;
      this.push(null);
    }
  }
}

/**
 * A session on an upgraded socket. Emits `stream` (SpdyStream) for every SYN_STREAM of the peer,
 * `close` once the socket is gone. Frames are handled in arrival order; outgoing frames leave in
 * the order they were queued. A client session opens streams with openStream(); when its socket
 * closes, its streams end (what was received stays readable) rather than being destroyed.
 */
export class SpdySession extends EventEmitter {
  private readonly inflate = new HeaderCodec('inflate');
  private readonly deflate = new HeaderCodec('deflate');
  private readonly streams = new Map<number, SpdyStream>();
  private buf: Buffer = Buffer.alloc(0);
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private lastStreamId = 0;
  private nextLocalId: number;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    head?: Buffer,
    private readonly client = false,
  ) {
    super();
    this.nextLocalId = client ? 1 : 2;
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => this.close());
    // Frames received before the socket ended are handled first (header blocks inflate asynchronously).
    const closeAfterInbound = () => void this.inbound.then(() => this.close());
    socket.on('close', closeAfterInbound);
    socket.on('end', closeAfterInbound);
    if (head?.length) this.onData(head);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const { frames, rest } = parseFrames(this.buf);
    this.buf = Buffer.from(rest);
    for (const f of frames) this.inbound = this.inbound.then(() => this.handle(f)).catch((err) => this.fail(err));
  }

  private fail(_err: unknown): void {
    this.goAway(1);
    this.close();
  }

  private async handle(f: Frame): Promise<void> {
    if (this.closed) return;
    if (!f.control) {
      const s = this.streams.get(f.streamId);
      if (!s) {
        this.sendReset(f.streamId, RstStatus.INVALID_STREAM);
        return;
      }
      s.receive(f.data, (f.flags & FLAG_FIN) !== 0);
      return;
    }
    switch (f.type) {
      case FrameType.SYN_STREAM: {
        const id = f.data.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflate.run(f.data.subarray(10)));
        if (this.streams.has(id)) {
          this.sendReset(id, RstStatus.PROTOCOL_ERROR);
          return;
        }
        this.lastStreamId = Math.max(this.lastStreamId, id);
        const s = new SpdyStream(id, headers, this);
        s.on('error', () => {});
        this.streams.set(id, s);
        s.on('close', () => this.streams.delete(id));
        if (f.flags & FLAG_FIN) s.receive(Buffer.alloc(0), true);
        this.emit('stream', s);
        return;
      }
      case FrameType.SYN_REPLY: {
        // Read to keep the shared zlib context in step; the reply's headers say nothing needed here.
        await this.inflate.run(f.data.subarray(4));
        this.streams.get(f.data.readUInt32BE(0) & 0x7fffffff)?.emit('reply');
        return;
      }
      case FrameType.HEADERS:
        // Header blocks keep the shared zlib context in step even when their content is unused.
        await this.inflate.run(f.data.subarray(4));
        return;
      case FrameType.RST_STREAM: {
        const s = this.streams.get(f.data.readUInt32BE(0) & 0x7fffffff);
        if (this.client && s && !s.remoteClosed) s.receive(Buffer.alloc(0), true);
        else s?.destroy();
        return;
      }
      case FrameType.PING:
        this.send(Promise.resolve(controlFrame(FrameType.PING, 0, Buffer.from(f.data))));
        return;
      case FrameType.GOAWAY:
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown frames need no answer.
        return;
    }
  }

  /** Opens a stream of this side (SYN_STREAM); data written to it may go before the peer's reply. */
  openStream(headers: Headers): SpdyStream {
    const id = this.nextLocalId;
    this.nextLocalId += 2;
    const s = new SpdyStream(id, headers, this, true);
    s.on('error', () => {});
    this.streams.set(id, s);
    s.on('close', () => this.streams.delete(id));
    if (this.closed) {
      s.receive(Buffer.alloc(0), true);
      return s;
    }
    // stream id, associated-to id 0, priority 0 and slot 0, then the header block.
    const head = Buffer.concat([u32(id, 0), Buffer.alloc(2)]);
    this.send(this.outbound.then(async () => controlFrame(FrameType.SYN_STREAM, 0, Buffer.concat([head, await this.deflate.run(encodeHeaderBlock(headers))]))));
    return s;
  }

  /** Queues a frame; frames go out in the order queued. */
  send(frame: Promise<Buffer>): void {
    this.outbound = this.outbound
      .then(async () => {
        const b = await frame;
        if (!this.closed && this.socket.writable) this.socket.write(b);
      })
      .catch(() => this.close());
  }

  /** Resolves once everything queued so far is written. */
  drained(): Promise<void> {
    return this.outbound;
  }

  sendReply(id: number, headers: Headers): void {
    // Compression runs in queue order, so the shared zlib context sees blocks in the order sent.
    this.send(
      this.outbound.then(async () => controlFrame(FrameType.SYN_REPLY, 0, Buffer.concat([u32(id), await this.deflate.run(encodeHeaderBlock(headers))]))),
    );
  }

  sendReset(id: number, status: number): void {
    this.send(Promise.resolve(controlFrame(FrameType.RST_STREAM, 0, u32(id, status))));
  }

  goAway(status = 0): void {
    this.send(Promise.resolve(controlFrame(FrameType.GOAWAY, 0, u32(this.lastStreamId, status))));
  }

  /** Sends GOAWAY once queued frames are out, then ends the socket. */
  async end(): Promise<void> {
    this.goAway(0);
    await this.drained();
    this.socket.end();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) {
      if (!this.client) s.destroy();
      else if (!s.remoteClosed) s.receive(Buffer.alloc(0), true);
    }
    this.streams.clear();
    this.inflate.close();
    this.deflate.close();
    this.socket.destroy();
    this.emit('close');
  }
}
