// EventStore: v1 Event shape, de-duplication into counts, similar-event aggregation, spam filter.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { EventStore } from '../../src/events/store.js';
import type { Event } from '../../src/api/types.js';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
const web = { namespace: 'default', name: 'web', uid: 'uid-1' };
const webApp = { ...web, fieldPath: 'spec.containers{app}' };

test("an event has the shape of the kubelet's v1 Event", () => {
  const store = new EventStore({ clock: new FakeClock(T0), host: 'node-1' });
  store.event(webApp, 'Normal', 'Started', 'Started container app');
  const [ev] = store.list();
  assert.match(ev!.metadata.name!, /^web\.[0-9a-f]{16}$/);
  assert.equal(ev!.metadata.name, `web.${(BigInt(T0) * 1000000n).toString(16)}`);
  assert.deepEqual(JSON.parse(JSON.stringify(ev)), {
    apiVersion: 'v1',
    count: 1,
    eventTime: null,
    firstTimestamp: '2026-12-02T12:00:00Z',
    involvedObject: { apiVersion: 'v1', fieldPath: 'spec.containers{app}', kind: 'Pod', name: 'web', namespace: 'default', uid: 'uid-1' },
    kind: 'Event',
    lastTimestamp: '2026-12-02T12:00:00Z',
    message: 'Started container app',
    metadata: { name: ev!.metadata.name, namespace: 'default' },
    reason: 'Started',
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
    source: { component: 'kubelet', host: 'node-1' },
    type: 'Normal',
  });
  assert.deepEqual(Object.keys(ev!), [
    'apiVersion',
    'count',
    'eventTime',
    'firstTimestamp',
    'involvedObject',
    'kind',
    'lastTimestamp',
    'message',
    'metadata',
    'reason',
    'reportingComponent',
    'reportingInstance',
    'source',
    'type',
  ]);
  // a pod-level event has no fieldPath
  store.event(web, 'Warning', 'FailedKillPod', 'error killing pod: x');
  assert.equal('fieldPath' in store.list()[1]!.involvedObject, false);
});

test('names stay unique within one clock millisecond', () => {
  const store = new EventStore({ clock: new FakeClock(T0), host: 'h' });
  store.event(webApp, 'Normal', 'Created', 'Created container: app');
  store.event(webApp, 'Normal', 'Started', 'Started container app');
  const [a, b] = store.list();
  assert.notEqual(a!.metadata.name, b!.metadata.name);
});

test('identical events are counted on the first Event with first/last timestamps', async () => {
  const clock = new FakeClock(T0);
  const store = new EventStore({ clock, host: 'h' });
  const seen: [string, number, boolean][] = [];
  store.onEvent((ev, isUpdate) => seen.push([ev.reason!, ev.count!, isUpdate]));
  const msg = 'Back-off restarting failed container app in pod web_default(uid-1)';
  store.event(webApp, 'Warning', 'BackOff', msg);
  await clock.advance(10_000);
  store.event(webApp, 'Warning', 'BackOff', msg);
  await clock.advance(21_000);
  store.event(webApp, 'Warning', 'BackOff', msg);
  const list = store.list();
  assert.equal(list.length, 1);
  assert.equal(list[0]!.count, 3);
  assert.equal(list[0]!.firstTimestamp, '2026-12-02T12:00:00Z');
  assert.equal(list[0]!.lastTimestamp, '2026-12-02T12:00:31Z');
  assert.deepEqual(seen, [
    ['BackOff', 1, false],
    ['BackOff', 2, true],
    ['BackOff', 3, true],
  ]);
});

test('the dedup key includes fieldPath, type, reason and message', () => {
  const store = new EventStore({ clock: new FakeClock(T0), host: 'h' });
  store.event(webApp, 'Normal', 'Killing', 'Stopping container app');
  store.event({ ...web, fieldPath: 'spec.containers{side}' }, 'Normal', 'Killing', 'Stopping container app');
  store.event(web, 'Normal', 'Killing', 'Stopping container app');
  store.event(webApp, 'Warning', 'Killing', 'Stopping container app');
  store.event(webApp, 'Normal', 'Other', 'Stopping container app');
  store.event(webApp, 'Normal', 'Killing', 'Stopping container app!');
  store.event({ ...webApp, uid: 'uid-2' }, 'Normal', 'Killing', 'Stopping container app');
  store.event(webApp, 'Normal', 'Killing', 'Stopping container app');
  const list = store.list();
  assert.equal(list.length, 7);
  assert.equal(list[0]!.count, 2);
  assert.ok(list.slice(1).every((e) => e.count === 1));
});

test('similar events with different messages are combined from the 10th distinct message on', async () => {
  const clock = new FakeClock(T0);
  const store = new EventStore({ clock, host: 'h' });
  for (let i = 1; i <= 9; i++) {
    store.event({ ...web, fieldPath: `spec.containers{c${i}}` }, 'Warning', 'Unhealthy', `Readiness probe failed: ${i}`);
    await clock.advance(1000);
  }
  assert.equal(store.list().length, 9);
  store.event(webApp, 'Warning', 'Unhealthy', 'Readiness probe failed: 10');
  await clock.advance(1000);
  store.event(webApp, 'Warning', 'Unhealthy', 'Readiness probe failed: 11');
  const list = store.list();
  assert.equal(list.length, 10);
  const combined = list[9]!;
  assert.equal(combined.message, '(combined from similar events): Readiness probe failed: 11');
  assert.equal(combined.count, 2);
  assert.equal(combined.firstTimestamp, '2026-12-02T12:00:09Z');
  assert.equal(combined.lastTimestamp, '2026-12-02T12:00:10Z');
  assert.equal(combined.reportingComponent, '');
  assert.equal(combined.involvedObject.fieldPath, 'spec.containers{app}');
});

test('aggregation starts afresh after 600 s without a similar event', async () => {
  const clock = new FakeClock(T0);
  const store = new EventStore({ clock, host: 'h' });
  for (let i = 1; i <= 9; i++) store.event(web, 'Warning', 'Failed', `Error: ${i}`);
  await clock.advance(601_000);
  store.event(web, 'Warning', 'Failed', 'Error: 10');
  const last = store.list().at(-1)!;
  assert.equal(last.message, 'Error: 10');
});

test('the spam filter lets 25 events per object through, then one per 5 minutes', async () => {
  const clock = new FakeClock(T0);
  const store = new EventStore({ clock, host: 'h' });
  const emitted: Event[] = [];
  store.onEvent((ev) => emitted.push(ev));
  for (let i = 0; i < 30; i++) store.event(webApp, 'Warning', 'BackOff', 'Back-off restarting failed container app in pod web_default(uid-1)');
  assert.equal(emitted.length, 25);
  assert.equal(store.list()[0]!.count, 25);
  await clock.advance(300_000);
  store.event(webApp, 'Warning', 'BackOff', 'Back-off restarting failed container app in pod web_default(uid-1)');
  // the skipped occurrences were still counted
  assert.equal(store.list()[0]!.count, 31);
  // another pod has its own budget
  store.event({ ...web, name: 'db', uid: 'uid-2' }, 'Normal', 'Started', 'Started container db');
  assert.equal(store.list().length, 2);

  const unfiltered = new EventStore({ clock, host: 'h', spamFilter: false });
  for (let i = 0; i < 30; i++) unfiltered.event(webApp, 'Normal', 'Pulled', 'x');
  assert.equal(unfiltered.list()[0]!.count, 30);
});

test('unsubscribed listeners hear nothing more', () => {
  const store = new EventStore({ clock: new FakeClock(T0), host: 'h' });
  let n = 0;
  const off = store.onEvent(() => n++);
  store.event(web, 'Normal', 'A', 'a');
  off();
  store.event(web, 'Normal', 'B', 'b');
  assert.equal(n, 1);
  assert.equal(store.list().length, 2);
});
