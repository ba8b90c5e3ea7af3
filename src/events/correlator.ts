// client-go's EventCorrelator (tools/record/events_cache.go) as the kubelet's recorder uses it:
// similar-event aggregation, de-duplication into counts, and the per-object spam filter.

import type { Event } from '../api/types.js';

const maxLruCacheEntries = 4096;
// More than 10 events about one object and reason differing only by message within 10 minutes
// are combined into one event.
export const defaultAggregateMaxEvents = 10;
export const defaultAggregateIntervalSeconds = 600;
// A source may send 25 events about an object at once, then one every 5 minutes.
export const defaultSpamBurst = 25;
export const defaultSpamQPS = 1 / 300;

/** A bounded map that forgets the least recently used key (groupcache/lru). */
class LRU<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  add(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

function getEventKey(e: Event): string {
  const o = e.involvedObject;
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]
    .map((x) => x ?? '')
    .join('');
}

function getSpamKey(e: Event): string {
  const o = e.involvedObject;
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((x) => x ?? '').join('');
}

/** EventAggregatorByReasonFunc: the aggregate key leaves out fieldPath and message. */
function aggregateKeyOf(e: Event): { aggregateKey: string; localKey: string } {
  const o = e.involvedObject;
  const aggregateKey = [
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ]
    .map((x) => x ?? '')
    .join('');
  return { aggregateKey, localKey: e.message ?? '' };
}

interface AggregateRecord {
  /** Distinct messages seen, in insertion order. */
  localKeys: Set<string>;
  lastTimestamp: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string;
  name: string;
}

/** A token bucket (x/time/rate via flowcontrol), starting full. */
class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  tryAccept(now: number): boolean {
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.qps);
    this.last = Math.max(this.last, now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}

export interface CorrelatorOptions {
  /** false turns the spam filter off (every event is recorded); on by default as in client-go. */
  spamFilter?: boolean;
}

export interface CorrelateResult {
  /** The event to create or update (same metadata.name as an earlier one = update). */
  event: Event;
  /** True when an existing event is being updated. */
  isUpdate: boolean;
  /** True when the spam filter drops it: nothing is to be written. */
  skip: boolean;
}

/** Builds the combined event the aggregator substitutes; `nameFor` gives it a fresh name. */
export type AggregateEventFactory = (from: Event, message: string) => Event;

export class EventCorrelator {
  private readonly aggregates = new LRU<AggregateRecord>(maxLruCacheEntries);
  private readonly logs = new LRU<EventLog>(maxLruCacheEntries);
  private readonly spam = new LRU<TokenBucket>(maxLruCacheEntries);
  private readonly spamFilter: boolean;

  constructor(opts: CorrelatorOptions = {}) {
    this.spamFilter = opts.spamFilter ?? true;
  }

  /** EventCorrelate: aggregate, observe (count), then filter; `now` in ms. */
  correlate(newEvent: Event, now: number, makeAggregate: AggregateEventFactory): CorrelateResult {
    const { event: aggregated, key } = this.aggregate(newEvent, now, makeAggregate);
    const { event, isUpdate } = this.observe(aggregated, key);
    const skip = this.filter(event, now);
    return { event, isUpdate, skip };
  }

  private aggregate(e: Event, now: number, makeAggregate: AggregateEventFactory): { event: Event; key: string } {
    const eventKey = getEventKey(e);
    const { aggregateKey, localKey } = aggregateKeyOf(e);
    let record = this.aggregates.get(aggregateKey);
    if (!record || now - record.lastTimestamp > defaultAggregateIntervalSeconds * 1000) {
      record = { localKeys: new Set(), lastTimestamp: 0 };
    }
    record.localKeys.add(localKey);
    record.lastTimestamp = now;
    this.aggregates.add(aggregateKey, record);
    if (record.localKeys.size < defaultAggregateMaxEvents) return { event: e, key: eventKey };
    // Keep the set below the maximum (client-go pops an arbitrary member; the oldest here).
    record.localKeys.delete(record.localKeys.values().next().value as string);
    return { event: makeAggregate(e, '(combined from similar events): ' + (e.message ?? '')), key: aggregateKey };
  }

  private observe(e: Event, key: string): { event: Event; isUpdate: boolean } {
    const last = this.logs.get(key);
    let event = e;
    let isUpdate = false;
    if (last && last.count > 0) {
      event = { ...e, count: last.count + 1, firstTimestamp: last.firstTimestamp, metadata: { ...e.metadata, name: last.name } };
      isUpdate = true;
    }
    this.logs.add(key, { count: event.count ?? 1, firstTimestamp: event.firstTimestamp ?? '', name: event.metadata.name ?? '' });
    return { event, isUpdate };
  }

  private filter(e: Event, now: number): boolean {
    if (!this.spamFilter) return false;
    const key = getSpamKey(e);
    let bucket = this.spam.get(key);
    if (!bucket) bucket = new TokenBucket(defaultSpamQPS, defaultSpamBurst, now);
    const accepted = bucket.tryAccept(now);
    this.spam.add(key, bucket);
    return !accepted;
  }
}
