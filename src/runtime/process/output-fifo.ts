// A container's stdout and stderr as named pipes (FIFOs) in the runtime's state directory, so its
// output outlives the runtime service.
//
// Why FIFOs: with plain pipes, the read end lives only in the runtime, so a runtime that dies takes
// it along and the container's next write fails (EPIPE/SIGPIPE). Here the container's stdout and
// stderr are each a FIFO opened read-write: the container itself holds a reader, so its writes never
// fail; while no runtime reads, they fill the pipe buffer and then wait. A restarted runtime opens
// the same FIFOs by path and carries on reading where the buffer stands, so the CRI log is continuous
// (only a line the dead runtime had read but not yet written is lost). That needs no extra process
// per container (a log shim would be one per container) and no second copy of the output on disk
// (writing raw output to a file for the runtime to convert would be). The runtime reads through a
// non-blocking descriptor wrapped as a socket, so 100 containers cost no threads.

import { execFile } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, renameSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const OUTPUT_STREAMS = ['stdout', 'stderr'] as const;

/** FIFOs made per mkfifo(1) run: Node has no mkfifo call, so they are made ahead in batches. */
const FIFO_BATCH = 64;

/**
 * Hands out FIFOs (0600) made ahead of need in a pool directory, so starting a container costs two
 * renames rather than a process spawn.
 */
export class FifoPool {
  private ready: string[] = [];
  private next = 0;
  private filling: Promise<void> | undefined;

  constructor(private readonly dir: string) {}

  /** Moves a fresh FIFO for each output stream into dir (created 0700). */
  async createOutputFifos(dir: string): Promise<void> {
    const fifos = [await this.take(), await this.take()];
    // Synchronous: a directory and two renames, cheaper than three thread-pool round trips.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    OUTPUT_STREAMS.forEach((s, i) => renameSync(fifos[i]!, join(dir, s)));
  }

  private async take(): Promise<string> {
    while (this.ready.length === 0) {
      this.filling ??= this.fill().finally(() => (this.filling = undefined));
      await this.filling;
    }
    return this.ready.pop()!;
  }

  private async fill(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const names = Array.from({ length: FIFO_BATCH }, () => join(this.dir, `${process.pid}-${this.next++}`));
    await execFileP('mkfifo', ['-m', '600', ...names]);
    this.ready.push(...names);
  }
}

/** Descriptors for the container's stdout and stderr (read-write: see above). Close them once spawned. */
export function openContainerEnds(dir: string): [number, number] {
  const out = openSync(join(dir, 'stdout'), constants.O_RDWR);
  try {
    return [out, openSync(join(dir, 'stderr'), constants.O_RDWR)];
  } catch (err) {
    closeSync(out);
    throw err;
  }
}

/** The runtime's readers of both FIFOs. They end once every process holding the container's ends exited. */
export function openRuntimeReaders(dir: string): [Socket, Socket] {
  return OUTPUT_STREAMS.map((s) => {
    const fd = openSync(join(dir, s), constants.O_RDONLY | constants.O_NONBLOCK);
    return new Socket({ fd, readable: true, writable: false });
  }) as [Socket, Socket];
}

/** Removes FIFOs a previous runtime process made ahead and never handed out. */
export async function clearFifoPool(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
