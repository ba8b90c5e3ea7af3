// Container output as it reaches the CRI log files, for a runtime on the other side of the CRI
// (which streams no output): follows each started container's log file, as `kubectl logs -f`
// would, and hands on each record. Rotation (the file shrinking) restarts from its beginning.

import { open, stat } from 'node:fs/promises';
import type { RuntimeService } from '../cri.js';
import { decodeRecord, type LogStream } from './cri-format.js';

const POLL_MS = 100;
const READ_CHUNK = 256 * 1024;

interface Followed {
  path: string;
  offset: number;
  /** Bytes of an unfinished line. */
  rest: Buffer;
  /** The container stopped: read what is left once more, then stop following. */
  last: boolean;
  busy: boolean;
}

export type OutputListener = (containerId: string, stream: LogStream, line: string) => void;

/**
 * Calls listener for each record (a line without its newline, or a piece of a long line) written by
 * containers started from now on; containers already running are followed from their log's current
 * end. With containerId, only that container is followed. Returns the function that stops following.
 */
export function followContainerOutput(runtime: RuntimeService, listener: OutputListener, opts: { containerId?: string } = {}): () => void {
  const followed = new Map<string, Followed>();
  let stopped = false;
  const only = opts.containerId;

  const follow = async (id: string, fromEnd: boolean) => {
    if (followed.has(id) || (only !== undefined && id !== only)) return;
    let path = '';
    try {
      path = (await runtime.containerStatus(id)).logPath;
    } catch {
      return;
    }
    if (!path || stopped || followed.has(id)) return;
    const offset = fromEnd
      ? await stat(path).then(
          (s) => s.size,
          () => 0,
        )
      : 0;
    followed.set(id, { path, offset, rest: Buffer.alloc(0), last: false, busy: false });
  };

  const readMore = async (id: string, f: Followed) => {
    if (f.busy) return;
    f.busy = true;
    try {
      const size = await stat(f.path).then(
        (s) => s.size,
        () => -1,
      );
      if (size >= 0 && size < f.offset) {
        f.offset = 0;
        f.rest = Buffer.alloc(0);
      }
      if (size > f.offset) {
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
      }
      if (f.last) followed.delete(id);
    } finally {
      f.busy = false;
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

  const timer = setInterval(() => {
    for (const [id, f] of followed) void readMore(id, f).catch(() => {});
  }, POLL_MS);
  timer.unref();

  const off = runtime.onContainerEvent((ev) => {
    if (ev.type === 'CONTAINER_STARTED_EVENT') void follow(ev.containerId, false);
    else if (ev.type === 'CONTAINER_STOPPED_EVENT' || ev.type === 'CONTAINER_DELETED_EVENT') {
      const f = followed.get(ev.containerId);
      if (f) f.last = true;
    }
  });
  void runtime.listContainers({ state: 'CONTAINER_RUNNING', ...(only !== undefined ? { id: only } : {}) }).then(
    (list) => list.forEach((c) => void follow(c.id, true)),
    () => {},
  );

  return () => {
    stopped = true;
    off();
    clearInterval(timer);
    followed.clear();
  };
}
