// Events to the API server, as client-go's event sink writes the kubelet's: a new event is created
// (POST), a repeat the correlator counted is patched (count, lastTimestamp, message) and created when
// the patch finds it gone. Writes go out in order from a bounded queue; an unreachable API server is
// retried with back-off, up to the recorder's 12 attempts per event, and a full queue drops the oldest.

import type { Event } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isNotFound, isRetriable, RetryBackoff, STRATEGIC_MERGE_PATCH, type ApiClient } from './client.js';

/** client-go's maxTriesPerEvent. */
export const MAX_TRIES_PER_EVENT = 12;
/** client-go's broadcaster queue length. */
export const EVENT_QUEUE_LENGTH = 1000;

interface Pending {
  event: Event;
  isUpdate: boolean;
  tries: number;
}

export interface EventSinkOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  /** Rewrites an event's involved object before it is sent (static pod → mirror pod); undefined drops it. */
  translate?: (ev: Event) => Event | undefined;
}

export class EventSink {
  private readonly o: EventSinkOptions;
  private readonly queue: Pending[] = [];
  private readonly backoff = new RetryBackoff(1000, 10_000);
  private running = false;
  private stopped = false;
  /** Writes the API server accepted. */
  written = 0;
  dropped = 0;

  constructor(opts: EventSinkOptions) {
    this.o = opts;
  }

  /** Takes an event from the store (isUpdate: a count update of one already sent). */
  push(event: Event, isUpdate: boolean): void {
    if (this.stopped) return;
    if (this.queue.length >= EVENT_QUEUE_LENGTH) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push({ event, isUpdate, tries: 0 });
    if (!this.running) void this.drain();
  }

  stop(): void {
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (!this.stopped && this.queue.length) {
        const p = this.queue[0]!;
        const ev = this.o.translate ? this.o.translate(p.event) : p.event;
        if (!ev) {
          this.queue.shift();
          continue;
        }
        try {
          await this.write(ev, p.isUpdate);
          this.written++;
          this.queue.shift();
          this.backoff.reset();
        } catch (err) {
          p.tries++;
          if (!isRetriable(err) || p.tries >= MAX_TRIES_PER_EVENT) {
            this.o.logger.warn('Unable to write event (will not retry)', { reason: ev.reason, err: (err as Error).message });
            this.queue.shift();
            this.dropped++;
            continue;
          }
          await this.o.clock.sleep(this.backoff.next());
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async write(ev: Event, isUpdate: boolean): Promise<void> {
    const ns = ev.metadata?.namespace || 'default';
    const base = `/api/v1/namespaces/${encodeURIComponent(ns)}/events`;
    if (isUpdate) {
      try {
        await this.o.client.request('PATCH', `${base}/${encodeURIComponent(ev.metadata!.name!)}`, {
          body: { count: ev.count, lastTimestamp: ev.lastTimestamp, message: ev.message },
          contentType: STRATEGIC_MERGE_PATCH,
        });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    try {
      await this.o.client.request('POST', base, { body: ev });
    } catch (err) {
      // Created already (a retry whose first answer was lost).
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}
