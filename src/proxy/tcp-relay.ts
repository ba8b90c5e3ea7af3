// The bytes of one proxied TCP connection, one direction at a time: reads land in a buffer the
// direction keeps (net.Socket's `onread`, no Buffer made per chunk and no stream machinery between
// the two sockets) and are written straight on, reading paused while the other side's kernel buffer
// is full. What io.Copy is to kube-proxy's userspace proxier (pkg/proxy/userspace/proxysocket.go).

import { Socket, type OnReadOpts } from 'node:net';

/** Bytes read at most per read call, and what a direction keeps allocated while it is open. */
export const relayReadBytes = 64 * 1024;

export class RelayDirection {
  private buffer = Buffer.allocUnsafe(relayReadBytes);
  private from?: Socket;
  private to?: Socket;
  /** The `onread` option of the socket this direction reads from. */
  readonly onread: OnReadOpts = { buffer: () => this.buffer, callback: (n, b) => this.pass(b.subarray(0, n)) };

  /** Starts relaying: what `from` reads is written to `to`, and its end half-closes `to`. */
  connect(from: Socket, to: Socket): void {
    this.from = from;
    this.to = to;
    from.on('end', () => to.end());
  }

  /** Writes one chunk read on; returns false (pausing the reads) until `to` drains. */
  pass(chunk: Uint8Array): boolean {
    const { from, to } = this;
    if (!from || !to) return false;
    const flowing = to.write(chunk);
    // A write the kernel did not take at once holds the chunk until it completes: read on into a new buffer.
    if (to.writableLength > 0 && chunk.buffer === this.buffer.buffer) this.buffer = Buffer.allocUnsafe(relayReadBytes);
    if (flowing) return true;
    from.pause();
    to.once('drain', () => {
      if (!from.destroyed) from.resume();
    });
    return false;
  }
}

/**
 * The accepted connection `accepted` as a socket that reads through `onread` (net.Server takes no
 * such option for the sockets it accepts): a new Socket owns the connection's handle, paused until
 * resumed, and the one the server made is closed without touching it. Undefined where the runtime
 * keeps no handle to hand over; the caller then relays `data` events.
 */
export function adoptWithOnread(accepted: Socket, onread: OnReadOpts): Socket | undefined {
  const holder = accepted as unknown as { _handle?: object | null };
  const handle = holder._handle;
  if (!handle || accepted.readableLength > 0) return undefined;
  holder._handle = null;
  accepted.destroy();
  return new Socket({ handle, allowHalfOpen: true, pauseOnCreate: true, onread } as ConstructorParameters<typeof Socket>[0]);
}
