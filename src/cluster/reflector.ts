// A reflector after client-go's: LIST, then WATCH from the list's resourceVersion, decoding the
// chunked NDJSON stream; a closed stream is re-watched from the last resourceVersion seen, 410 Gone
// (or any other watch error) relists, and an unreachable API server is retried with back-off. The
// store it keeps turns every relist into the adds, updates and deletes that happened meanwhile.

import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { ApiStatusError, objectKey, RetryBackoff, type ApiClient } from './client.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Meta {
  metadata?: { namespace?: string; name?: string; resourceVersion?: string; uid?: string };
}

export interface ReflectorOptions<T> {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  /** e.g. `/api/v1/pods` */
  path: string;
  /** e.g. `{ fieldSelector: 'spec.nodeName=n1' }` */
  query?: Record<string, string>;
  /** Every change of the stored state, in order. */
  onChange: (type: ChangeType, obj: T, old?: T) => void;
  /** After each successful list (the first and every relist). */
  onListed?: () => void;
  /** Server-side watch timeout; 5 to 10 min (random) when unset, as client-go picks it. */
  watchTimeoutSeconds?: number;
  random?: () => number;
}

/** The watch's own words for `type` and `object` on each line. */
interface WatchLine {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

export class Reflector<T extends Meta> {
  private readonly opts: ReflectorOptions<T>;
  private readonly store = new Map<string, T>();
  private readonly backoff = new RetryBackoff();
  private resourceVersion = '';
  private stopped = false;
  private abortStream?: () => void;
  private wake?: { timer: Timer; resolve: () => void };
  private loop?: Promise<void>;
  private listedOnce = false;
  private readonly listedWaiters: Array<() => void> = [];

  constructor(opts: ReflectorOptions<T>) {
    this.opts = opts;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves after the first successful list. */
  whenListed(): Promise<void> {
    if (this.listedOnce) return Promise.resolve();
    return new Promise((r) => this.listedWaiters.push(r));
  }

  /** The stored objects. */
  list(): T[] {
    return [...this.store.values()];
  }

  get(namespace: string, name: string): T | undefined {
    return this.store.get(`${namespace}/${name}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abortStream?.();
    this.wake?.timer.cancel();
    this.wake?.resolve();
    await this.loop;
  }

  private async run(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        needList = await this.watchOnce();
        this.backoff.reset();
      } catch (err) {
        if (this.stopped) break;
        if (err instanceof ApiStatusError && err.code === 410) {
          needList = true;
          continue;
        }
        const delay = this.backoff.next();
        this.opts.logger.warn('API server list/watch failed; retrying', { path: this.opts.path, err: (err as Error).message, retryInMs: delay });
        needList = true;
        await this.sleep(delay);
      }
    }
  }

  private async relist(): Promise<void> {
    const o = this.opts;
    const list = await o.client.request<{ metadata?: { resourceVersion?: string }; items?: T[] }>('GET', o.path, { query: o.query, timeoutMs: 60_000 });
    if (this.stopped) return;
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    const seen = new Set<string>();
    for (const item of list.items ?? []) {
      const key = objectKey(item);
      seen.add(key);
      this.apply('ADDED', item);
    }
    for (const [key, old] of [...this.store]) {
      if (!seen.has(key)) {
        this.store.delete(key);
        o.onChange('DELETED', old, old);
      }
    }
    o.onListed?.();
    if (!this.listedOnce) {
      this.listedOnce = true;
      for (const w of this.listedWaiters.splice(0)) w();
    }
  }

  /** Applies a change to the store and reports it; a re-delivered unchanged object is not reported. */
  private apply(type: ChangeType, obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (type === 'DELETED') {
      this.store.delete(key);
      this.opts.onChange('DELETED', obj, old);
      return;
    }
    this.store.set(key, obj);
    if (!old) this.opts.onChange('ADDED', obj);
    else if (old.metadata?.uid !== obj.metadata?.uid) {
      // Same name, new object: the old one is gone.
      this.opts.onChange('DELETED', old, old);
      this.opts.onChange('ADDED', obj);
    } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.opts.onChange('MODIFIED', obj, old);
  }

  /** One watch request; resolves true when a relist is needed, false to re-watch from the last version. */
  private async watchOnce(): Promise<boolean> {
    const o = this.opts;
    const random = o.random ?? Math.random;
    const timeoutSeconds = o.watchTimeoutSeconds ?? Math.floor(300 * (1 + random()));
    const { res, abort } = await o.client.openStream(
      o.path,
      { ...o.query, watch: 'true', resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds },
      (timeoutSeconds + 30) * 1000,
    );
    this.abortStream = abort;
    if (this.stopped) abort();
    // The first event proves the connection works: a good stream resets the back-off.
    return new Promise<boolean>((resolve, reject) => {
      let buf = '';
      let relist = false;
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        this.abortStream = undefined;
        if (err && !relist) reject(err);
        else resolve(relist);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line || relist) continue;
          let ev: WatchLine;
          try {
            ev = JSON.parse(line) as WatchLine;
          } catch {
            o.logger.warn('Undecodable watch line; relisting', { path: o.path });
            relist = true;
            abort();
            continue;
          }
          if (ev.type === 'ERROR') {
            const code = Number(ev.object.code ?? 0);
            if (code !== 410) o.logger.warn('Watch error; relisting', { path: o.path, code, message: String(ev.object.message ?? '') });
            relist = true;
            abort();
            continue;
          }
          const rv = (ev.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
          if (rv) this.resourceVersion = rv;
          if (ev.type === 'BOOKMARK') continue;
          this.backoff.reset();
          this.apply(ev.type, ev.object as unknown as T);
        }
      });
      res.once('end', () => finish());
      res.once('close', () => finish(this.stopped ? undefined : new Error('watch connection closed')));
      res.on('error', (err) => finish(err));
    }).catch((err: Error) => {
      // A stream that simply ended (server-side timeout, or an abort after an ERROR) re-watches.
      if (this.stopped) return false;
      throw err;
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.opts.clock.setTimer(ms, () => {
        this.wake = undefined;
        resolve();
      });
      this.wake = { timer, resolve };
    });
  }
}
