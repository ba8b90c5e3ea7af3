// A container's log file: appends encoded CRI records in order and rotates by size and count inside
// the write path (as the kubelet's container log manager would, without its polling loop).

import { rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { modes, openNoFollow } from '../root-dir.js';
import type { Logger } from '../../util/logger.js';
import { listRotatedLogs, rotatedName } from './rotation.js';

/** kubelet defaults: containerLogMaxSize 10Mi, containerLogMaxFiles 5. */
export const DEFAULT_LOG_MAX_SIZE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LOG_MAX_FILES = 5;

export interface ContainerLogFileOptions {
  path: string;
  /** Rotate once the current file holds at least this many bytes. */
  maxSizeBytes?: number;
  /** Files kept per log, the current one included (the kubelet requires at least 2). */
  maxFiles?: number;
  /** ms since epoch, for the rotated file names. */
  now: () => number;
  logger: Logger;
}

export class ContainerLogFile {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private draining = false;
  private closed = false;
  private drainWaiters: Array<() => void> = [];
  private rotated: string[] | undefined;
  /** Output the disk refused since the last write that succeeded: dropped, counted, reported once. */
  private dropped = { records: 0, bytes: 0 };
  private readonly maxSize: number;
  private readonly maxFiles: number;

  private constructor(
    private readonly opts: ContainerLogFileOptions,
    private fh: FileHandle,
    private size: number,
  ) {
    this.maxSize = Math.max(1, opts.maxSizeBytes ?? DEFAULT_LOG_MAX_SIZE_BYTES);
    this.maxFiles = Math.max(2, opts.maxFiles ?? DEFAULT_LOG_MAX_FILES);
  }

  /** Opens (creating or appending to) the log file. */
  static async open(opts: ContainerLogFileOptions): Promise<ContainerLogFile> {
    const fh = await openNoFollow(opts.path, modes.logFile);
    const { size } = await fh.stat();
    return new ContainerLogFile(opts, fh, size);
  }

  get path(): string {
    return this.opts.path;
  }

  /** Bytes accepted but not yet written; the producer pauses its input when this grows. */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  append(record: Buffer): void {
    if (this.closed) return;
    this.queue.push(record);
    this.queuedBytes += record.length;
    if (!this.draining) void this.drain();
  }

  /** Resolves once everything appended so far is on disk. */
  whenDrained(): Promise<void> {
    if (!this.draining && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Output dropped since the last successful write (the disk refused it). */
  get droppedSinceLastWrite(): { records: number; bytes: number } {
    return { ...this.dropped };
  }

  /** Writes what is queued, then closes the file; later appends are dropped. */
  async close(): Promise<void> {
    await this.whenDrained();
    if (this.closed) return;
    this.closed = true;
    this.reportDropped();
    await this.fh.close().catch(() => {});
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // Fill the current file up to its limit, so every file but the current is ≈ maxSize.
        let take = 0;
        let bytes = 0;
        while (take < this.queue.length && (take === 0 || this.size + bytes < this.maxSize)) {
          bytes += this.queue[take]!.length;
          take++;
        }
        const batch = this.queue.splice(0, take);
        this.queuedBytes -= bytes;
        const buf = batch.length === 1 ? batch[0]! : Buffer.concat(batch, bytes);
        try {
          await this.fh.write(buf, 0, buf.length);
          this.size += buf.length;
          this.reportDropped();
        } catch (err) {
          // As containerd: keep draining the container's output even when the disk refuses it. What
          // the disk refuses is dropped and counted; one line says so, one more when writes resume.
          if (this.dropped.records === 0) {
            this.opts.logger.error('Failed to write container log; dropping its output until the disk takes it', { path: this.opts.path, err: String(err) });
          }
          this.dropped.records += batch.length;
          this.dropped.bytes += bytes;
        }
        if (this.size >= this.maxSize) await this.rotate();
      }
    } finally {
      this.draining = false;
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  private reportDropped(): void {
    if (this.dropped.records === 0) return;
    this.opts.logger.warn('Container log output dropped while the disk refused it', { path: this.opts.path, ...this.dropped });
    this.dropped = { records: 0, bytes: 0 };
  }

  private async rotate(): Promise<void> {
    const path = this.opts.path;
    try {
      if (this.rotated === undefined) this.rotated = await listRotatedLogs(path);
      const target = rotatedName(path, this.opts.now(), new Set(this.rotated));
      await this.fh.close();
      await rename(path, target);
      this.rotated.push(target);
    } catch (err) {
      this.rotated ??= [];
      this.opts.logger.error('Failed to rotate container log', { path, err: String(err) });
    }
    try {
      this.fh = await openNoFollow(path, modes.logFile);
      this.size = (await stat(path)).size;
    } catch (err) {
      this.opts.logger.error('Failed to reopen container log', { path, err: String(err) });
      this.closed = true;
      this.queue = [];
      this.queuedBytes = 0;
      return;
    }
    // The current file counts towards maxFiles.
    while (this.rotated!.length > this.maxFiles - 1) {
      const oldest = this.rotated!.shift()!;
      await unlink(oldest).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') this.opts.logger.warn('Failed to remove rotated container log', { path: oldest, err: String(err) });
      });
    }
  }
}
