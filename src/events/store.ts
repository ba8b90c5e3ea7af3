// The event recorder the agent uses: each report becomes a v1 Event as client-go's recorder makes it
// for the kubelet (names, source, reporting fields) — and for the agent's controllers, each its own
// source component (recorderFor) —, correlated (aggregated, counted, spam-filtered) and kept in memory
// in first-seen order for listing and streaming.

import type { Event } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { EventCorrelator } from './correlator.js';
import type { EventObject, EventRecorder, EventRecorderFactory, EventType } from './recorder.js';

export interface EventStoreOptions {
  clock: Clock;
  /** The node name: source.host and reportingInstance. */
  host: string;
  /** false disables client-go's per-object spam filter (25 events, then one per 5 minutes). */
  spamFilter?: boolean;
}

export type EventListener = (ev: Event, isUpdate: boolean) => void;

const kubeletComponent = 'kubelet';

/** Who reports an event (client-go's EventSource): the kubelet names its node, a controller none. */
interface EventSource {
  component: string;
  host: string;
}

/** An unset MicroTime as the API server writes it: null (kubernetes-types types the field as a string). */
const unsetMicroTime = null as unknown as string;

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19) + 'Z';
}

export class EventStore implements EventRecorder, EventRecorderFactory {
  private readonly clock: Clock;
  private readonly host: string;
  private readonly correlator: EventCorrelator;
  private readonly events: Event[] = [];
  private readonly indexByName = new Map<string, number>();
  private readonly listeners = new Set<EventListener>();
  // Names are `<object>.<hex UnixNano>`; the clock has ms resolution, so a counter keeps names unique.
  private lastNanos = 0n;

  constructor(opts: EventStoreOptions) {
    this.clock = opts.clock;
    this.host = opts.host;
    this.correlator = new EventCorrelator({ spamFilter: opts.spamFilter ?? true });
  }

  event(obj: EventObject, type: EventType, reason: string, message: string): void {
    this.record({ component: kubeletComponent, host: this.host }, obj, type, reason, message);
  }

  recorderFor(component: string): EventRecorder {
    const source: EventSource = { component, host: '' };
    return { event: (obj, type, reason, message) => this.record(source, obj, type, reason, message) };
  }

  private record(source: EventSource, obj: EventObject, type: EventType, reason: string, message: string): void {
    const now = this.clock.now();
    const fresh = this.makeEvent(source, obj, type, reason, message, now, true);
    const result = this.correlator.correlate(fresh, now, (from, combined) =>
      // The aggregate event as client-go builds it: no reporting fields.
      this.makeEvent(source, this.objectOf(from), from.type as EventType, from.reason ?? '', combined, now, false),
    );
    if (result.skip) return;
    const ev = result.event;
    const name = ev.metadata.name!;
    const at = this.indexByName.get(name);
    let isUpdate = false;
    if (at !== undefined) {
      this.events[at] = ev;
      isUpdate = true;
    } else {
      this.indexByName.set(name, this.events.length);
      this.events.push(ev);
    }
    for (const l of [...this.listeners]) l(ev, isUpdate);
  }

  /** Every event recorded, in first-seen order (updated in place as counts grow). */
  list(): Event[] {
    return [...this.events];
  }

  /** Called for every new event (isUpdate false) and every count update (true). */
  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private objectOf(e: Event): EventObject {
    const o = e.involvedObject;
    return {
      namespace: o.namespace ?? '',
      name: o.name ?? '',
      uid: o.uid ?? '',
      fieldPath: o.fieldPath,
      kind: o.kind,
      apiVersion: o.apiVersion,
      resourceVersion: o.resourceVersion,
    };
  }

  private nextName(objectName: string, now: number): string {
    let nanos = BigInt(now) * 1000000n;
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n;
    this.lastNanos = nanos;
    return `${objectName}.${nanos.toString(16)}`;
  }

  /** client-go's makeEvent + generateEvent, keys in the order of the API server's JSON. */
  private makeEvent(source: EventSource, obj: EventObject, type: EventType, reason: string, message: string, now: number, reporting: boolean): Event {
    const t = rfc3339(now);
    const involvedObject: Event['involvedObject'] = { apiVersion: obj.apiVersion ?? 'v1' };
    if (obj.fieldPath) involvedObject.fieldPath = obj.fieldPath;
    involvedObject.kind = obj.kind ?? 'Pod';
    involvedObject.name = obj.name;
    involvedObject.namespace = obj.namespace;
    if (obj.resourceVersion) involvedObject.resourceVersion = obj.resourceVersion;
    involvedObject.uid = obj.uid;
    return {
      apiVersion: 'v1',
      count: 1,
      eventTime: unsetMicroTime,
      firstTimestamp: t,
      involvedObject,
      kind: 'Event',
      lastTimestamp: t,
      message,
      metadata: { name: this.nextName(obj.name, now), namespace: obj.namespace || 'default' },
      reason,
      reportingComponent: reporting ? source.component : '',
      reportingInstance: reporting ? source.host : '',
      source: source.host ? { component: source.component, host: source.host } : { component: source.component },
      type,
    };
  }
}
