// Watch responses: chunked NDJSON, one {"type","object"} per line, as the API server frames them.
// Selector transitions become ADDED/DELETED as for a filtered watch on a cluster; bookmarks and
// timeoutSeconds end or mark the stream; an expired resourceVersion is an ERROR event with a 410 Status.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusOf } from '../http/status.js';
import type { Watch, WatchEvent } from './backend.js';
import { setLongTimeout, type LongTimer } from '../util/timer.js';

export interface WatchServeOptions<T> {
  resourceVersion: string;
  /** Starts the backend's watch. */
  start(rv: string, onEvent: (ev: WatchEvent<T>) => void): Watch;
  matches(obj: T): boolean;
  key(obj: T): string;
  /** The object a line carries (a Table row, or the object itself). */
  render(obj: T, type: WatchEvent<T>['type']): unknown;
  timeoutSeconds?: number;
  /** Bookmark interval in ms when the client allows bookmarks; undefined: none. */
  bookmarkMs?: number;
  /** The bookmark's object for a resourceVersion. */
  bookmark(rv: string): unknown;
}

/** Gathered watch lines are written once they reach this many characters (or at the end of the turn). */
const BATCH_BYTES = 64 * 1024;

/**
 * Output a watcher may leave unread before it is closed, as kube-apiserver closes a watcher whose
 * buffer is full (the client lists and watches again): a client that never reads costs at most this.
 */
export const MAX_UNREAD_WATCH_BYTES = 8 * 1024 * 1024;

function rvOf(obj: unknown): string | undefined {
  return (obj as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion;
}

/** Serves one watch on res until the client leaves, the timeout passes, or the backend refuses. */
export function serveWatch<T>(req: IncomingMessage, res: ServerResponse, o: WatchServeOptions<T>): void {
  const seen = new Map<string, boolean>();
  let lastRV = o.resourceVersion;
  let watch: Watch | undefined;
  let timer: LongTimer | undefined;
  let bookmarks: NodeJS.Timeout | undefined;
  let done = false;

  // Lines made in one turn of the event loop (a store publishing many changes at once) go out as
  // one chunk at the end of it, or sooner once BATCH_BYTES have gathered: one write, not one a line.
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    if (done || res.destroyed) return;
    res.write(text);
    if (res.writableLength > MAX_UNREAD_WATCH_BYTES) {
      // A stalled client: its buffer is dropped with the connection rather than grown without bound.
      finish();
      res.destroy();
    }
  };
  const write = (type: string, object: unknown) => {
    if (done) return;
    if (pending === '') process.nextTick(flush);
    pending += JSON.stringify({ type, object }) + '\n';
    if (pending.length >= BATCH_BYTES) flush();
  };
  const finish = () => {
    if (done) return;
    flush();
    done = true;
    watch?.stop();
    timer?.cancel();
    if (bookmarks) clearInterval(bookmarks);
    if (!res.writableEnded) res.end();
  };

  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  req.on('close', finish);
  res.on('close', finish);

  const onEvent = (ev: WatchEvent<T>) => {
    if (done) return;
    const rv = rvOf(ev.object);
    if (rv) lastRV = rv;
    if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') {
      if (ev.type === 'ERROR') write('ERROR', ev.object);
      else if (o.bookmarkMs !== undefined) write('BOOKMARK', o.bookmark(lastRV));
      return;
    }
    const k = o.key(ev.object);
    const now = ev.type !== 'DELETED' && o.matches(ev.object);
    const before = seen.get(k);
    let type: string | undefined;
    if (ev.type === 'DELETED') {
      type = before === false || (before === undefined && !o.matches(ev.object)) ? undefined : 'DELETED';
      seen.delete(k);
    } else {
      seen.set(k, now);
      if (ev.type === 'ADDED') type = now ? 'ADDED' : undefined;
      else if (now) type = before === false ? 'ADDED' : 'MODIFIED';
      else type = before === true ? 'DELETED' : undefined;
    }
    if (type) write(type, o.render(ev.object, type as WatchEvent<T>['type']));
  };

  try {
    watch = o.start(o.resourceVersion, onEvent);
  } catch (err) {
    write('ERROR', statusOf(err));
    finish();
    return;
  }
  if (done) watch.stop();
  if (o.timeoutSeconds !== undefined && o.timeoutSeconds > 0) timer = setLongTimeout(finish, o.timeoutSeconds * 1000);
  if (o.bookmarkMs !== undefined) bookmarks = setInterval(() => write('BOOKMARK', o.bookmark(lastRV)), o.bookmarkMs);
}
