// Container output as it reaches the CRI log files, for a runtime on the other side of the CRI
// (which streams no output): follows each started container's log file, as `kubectl logs -f`
// would, and hands on each record; containers are found by the runtime's events and by relisting,
// as the kubelet's PLEG finds them. Rotation (the file shrinking) restarts from its beginning.

import { open, stat } from 'node:fs/promises';
import type { RuntimeService } from '../cri.js';
import { decodeRecord, type LogStream } from './cri-format.js';

const POLL_MS = 100;
/**
 * How often the containers are listed again: a runtime without the container event stream
 * (containerd 1.6) tells of no start, and a container can start and exit between two looks.
 */
const RELIST_MS = 500;
const READ_CHUNK = 256 * 1024;

interface Followed {
  path: string;
  offset: number;
  /** Bytes of an unfinished line. */
  rest: Buffer;
  /** The container stopped: read what is left once more, then stop following. */
  last: boolean;
  /** The read under way, if any. */
  reading?: Promise<void>;
}

export type OutputListener = (containerId: string, stream: LogStream, line: string) => void;

export interface ContainerOutputFollow {
  /**
   * Hands on everything written so far: looks for containers again (a short-lived one may have
   * started and exited since the last look), then reads each followed log to its end.
   */
  drain(): Promise<void>;
  /** Stops following (what is not drained is not read). */
  stop(): void;
}

/**
 * Calls listener for each record (a line without its newline, or a piece of a long line) written by
 * containers started from now on, found by the runtime's container events and by relisting; those
 * already running are followed from their log's current end, those exited before are left out.
 * With containerId, only that container is followed.
 */
export function followContainerOutput(runtime: RuntimeService, listener: OutputListener, opts: { containerId?: string } = {}): ContainerOutputFollow {
  const followed = new Map<string, Followed>();
  /** Every container already looked at (followed, being looked up, or left out). */
  const known = new Set<string>();
  /** Containers whose stop was told before their log was followed. */
  const stoppedEarly = new Set<string>();
  const lookups = new Set<Promise<void>>();
  let stopped = false;
  const only = opts.containerId;
  const filter = only !== undefined ? { id: only } : {};

  const follow = (id: string, fromEnd: boolean) => {
    if (known.has(id) || (only !== undefined && id !== only)) return;
    known.add(id);
    const lookup = (async () => {
      let status;
      try {
        status = await runtime.containerStatus(id);
      } catch {
        return;
      }
      const path = status.logPath;
      if (!path || stopped) return;
      const offset = fromEnd
        ? await stat(path).then(
            (s) => s.size,
            () => 0,
          )
        : 0;
      const last = stoppedEarly.has(id) || status.state === 'CONTAINER_EXITED';
      followed.set(id, { path, offset, rest: Buffer.alloc(0), last });
    })().finally(() => lookups.delete(lookup));
    lookups.add(lookup);
  };

  const readMore = (id: string, f: Followed): Promise<void> => {
    f.reading ??= readLog(id, f)
      .then(() => {
        if (f.last) followed.delete(id);
      })
      .catch(() => {})
      .finally(() => (f.reading = undefined));
    return f.reading;
  };

  const readLog = async (id: string, f: Followed) => {
    const size = await stat(f.path).then(
      (s) => s.size,
      () => -1,
    );
    if (size >= 0 && size < f.offset) {
      f.offset = 0;
      f.rest = Buffer.alloc(0);
    }
    if (size <= f.offset) return;
    const fh = await open(f.path, 'r');
    try {
      while (f.offset < size) {
        const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - f.offset));
        const { bytesRead } = await fh.read(buf, 0, buf.length, f.offset);
        if (bytesRead <= 0) break;
        f.offset += bytesRead;
        emit(id, f, buf.subarray(0, bytesRead));
      }
    } finally {
      await fh.close();
    }
  };

  const emit = (id: string, f: Followed, chunk: Buffer) => {
    let data = f.rest.length ? Buffer.concat([f.rest, chunk]) : chunk;
    let nl: number;
    while ((nl = data.indexOf(0x0a)) >= 0) {
      const rec = decodeRecord(data.subarray(0, nl));
      data = data.subarray(nl + 1);
      if (rec) listener(id, rec.stream, rec.content.toString('utf8'));
    }
    f.rest = Buffer.from(data);
  };

  /** Containers not seen before were created after the first look: followed from their log's start. */
  const relist = () =>
    runtime.listContainerStates(filter).then(
      (list) => list.forEach((c) => follow(c.id, false)),
      () => {},
    );

  // The first look: running containers from their log's end, created ones (not started yet) from
  // the start, exited ones not at all.
  const firstLook = runtime.listContainerStates(filter).then(
    (list) =>
      list.forEach((c) => {
        if (c.state === 'CONTAINER_RUNNING') follow(c.id, true);
        else if (c.state === 'CONTAINER_CREATED') follow(c.id, false);
        else known.add(c.id);
      }),
    () => {},
  );

  let ticks = 0;
  const timer = setInterval(() => {
    for (const [id, f] of followed) void readMore(id, f);
    if (++ticks % (RELIST_MS / POLL_MS) === 0) void firstLook.then(relist);
  }, POLL_MS);
  timer.unref();

  const off = runtime.onContainerEvent((ev) => {
    if (ev.type === 'CONTAINER_STARTED_EVENT') void firstLook.then(() => follow(ev.containerId, false));
    else if (ev.type === 'CONTAINER_STOPPED_EVENT' || ev.type === 'CONTAINER_DELETED_EVENT') {
      const f = followed.get(ev.containerId);
      if (f) f.last = true;
      else stoppedEarly.add(ev.containerId);
    }
  });

  return {
    async drain() {
      await firstLook;
      await relist();
      await Promise.all([...lookups]);
      for (const [id, f] of [...followed]) {
        // A read under way may have measured the file before its last lines: read once more after it.
        await f.reading;
        await readMore(id, f);
      }
    },
    stop() {
      stopped = true;
      off();
      clearInterval(timer);
      followed.clear();
    },
  };
}
