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
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const OUTPUT_STREAMS = ['stdout', 'stderr'] as const;

/** Creates the FIFOs (0600) in dir; Node has no mkfifo call, so mkfifo(1) makes both at once. */
export async function createOutputFifos(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await execFileP('mkfifo', ['-m', '600', ...OUTPUT_STREAMS.map((s) => join(dir, s))]);
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
