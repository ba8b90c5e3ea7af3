// Output the agent writes for a reader it does not control (`up --logs`): at most a fixed number of
// bytes wait unwritten; beyond that lines are dropped and counted, and a notice says how many, so a
// slow reader can never grow the agent.

/** Bytes allowed to wait for a slow reader before lines are dropped. */
export const DEFAULT_MAX_PENDING_BYTES = 1024 * 1024;

export class BoundedWriter {
  private pending = 0;
  private dropped = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly maxPendingBytes = DEFAULT_MAX_PENDING_BYTES,
  ) {}

  /** Lines dropped and not yet reported. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Writes text (whole lines), or drops it when too much is still waiting for the reader. */
  write(text: string): void {
    if (this.pending >= this.maxPendingBytes) {
      this.dropped++;
      return;
    }
    this.flushNotice();
    this.send(text);
  }

  /** Counts a line dropped before it reached write. */
  drop(): void {
    this.dropped++;
  }

  /** Reports lines dropped so far, if any (also done before the next line that is written). */
  flushNotice(): void {
    if (this.dropped === 0) return;
    const n = this.dropped;
    this.dropped = 0;
    this.send(`[podvisor] ${n} line${n === 1 ? '' : 's'} of container output dropped: the reader is too slow\n`);
  }

  private send(text: string): void {
    const size = Buffer.byteLength(text);
    this.pending += size;
    try {
      this.out.write(text, () => (this.pending -= size));
    } catch {
      this.pending -= size;
    }
  }
}
