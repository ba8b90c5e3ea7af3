// kubectl's event printing and apimachinery's HumanDuration.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration, translateTimestampSince } from '../../src/printers/ages.js';
import { formatDescribeEvents, formatEventTable } from '../../src/printers/events.js';
import { FakeClock } from '../../src/util/clock.js';
import { EventStore } from '../../src/events/store.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

test('HumanDuration table', () => {
  const cases: [number, string][] = [
    [-3 * s, '<invalid>'],
    [-2 * s, '<invalid>'],
    [-1999, '0s'],
    [-1 * s, '0s'],
    [0, '0s'],
    [999, '0s'],
    [1 * s, '1s'],
    [59 * s, '59s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [2 * m + 1 * s, '2m1s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m, '10m'],
    [10 * m + 59 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 1 * m, '3h1m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h, '8h'],
    [47 * h + 59 * m, '47h'],
    [48 * h, '2d'],
    [2 * d + 1 * h, '2d1h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d, '8d'],
    [364 * d, '364d'],
    [2 * 365 * d - 1 * h, '729d'],
    [2 * 365 * d, '2y'],
    [2 * 365 * d + 1 * d, '2y1d'],
    [8 * 365 * d - 1 * d, '7y364d'],
    [8 * 365 * d, '8y'],
    [20 * 365 * d, '20y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
  assert.equal(translateTimestampSince(undefined, 0), '<unknown>');
  assert.equal(translateTimestampSince('2026-01-01T00:00:00Z', Date.UTC(2026, 0, 1, 0, 0, 31)), '31s');
});

async function sampleStore() {
  const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
  const clock = new FakeClock(T0);
  const store = new EventStore({ clock, host: 'node-1' });
  const app = { namespace: 'default', name: 'web', uid: 'u', fieldPath: 'spec.containers{app}' };
  store.event(app, 'Normal', 'Started', 'Started container app');
  await clock.advance(10 * s);
  store.event(app, 'Warning', 'BackOff', 'Back-off restarting failed container app in pod web_default(u)');
  await clock.advance(10 * s);
  store.event(app, 'Warning', 'BackOff', 'Back-off restarting failed container app in pod web_default(u)');
  await clock.advance(11 * s);
  store.event({ namespace: 'default', name: 'db', uid: 'v' }, 'Normal', 'Killing', 'Stopping container db');
  return { store, now: clock.now() };
}

test('kubectl get events table', async () => {
  const { store, now } = await sampleStore();
  assert.equal(
    formatEventTable(store.list(), now),
    [
      'LAST SEEN   TYPE      REASON    OBJECT    MESSAGE',
      '31s         Normal    Started   pod/web   Started container app',
      '11s         Warning   BackOff   pod/web   Back-off restarting failed container app in pod web_default(u)',
      '0s          Normal    Killing   pod/db    Stopping container db',
      '',
    ].join('\n'),
  );
  assert.equal(formatEventTable(store.list().slice(2), now, { noHeaders: true }), '0s    Normal   Killing   pod/db   Stopping container db\n');
  assert.equal(
    formatEventTable(store.list().slice(1, 2), now, { wide: true }),
    [
      'LAST SEEN   TYPE      REASON    OBJECT    SUBOBJECT              SOURCE            MESSAGE                                                          FIRST SEEN   COUNT   NAME',
      `11s         Warning   BackOff   pod/web   spec.containers{app}   kubelet, node-1   Back-off restarting failed container app in pod web_default(u)   21s          2       ${store.list()[1]!.metadata.name}`,
      '',
    ].join('\n'),
  );
});

test('kubectl describe Events section', async () => {
  const { store, now } = await sampleStore();
  assert.equal(
    formatDescribeEvents(store.list(), now),
    [
      'Events:',
      '  Type     Reason   Age                From     Message',
      '  ----     ------   ----               ----     -------',
      '  Normal   Started  31s                kubelet  Started container app',
      '  Warning  BackOff  11s (x2 over 21s)  kubelet  Back-off restarting failed container app in pod web_default(u)',
      '  Normal   Killing  0s                 kubelet  Stopping container db',
      '',
    ].join('\n'),
  );
  assert.equal(formatDescribeEvents([], now), 'Events:  <none>\n');
});

test('a live event stream keeps columns aligned and messages on one row', async () => {
  const { EventStreamFormatter } = await import('../../src/printers/events.js');
  const t = '2026-01-01T00:00:00Z';
  const ev = (reason: string, name: string, message: string) =>
    ({ metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name }, reason, type: 'Normal', message, firstTimestamp: t, lastTimestamp: t }) as never;
  const f = new EventStreamFormatter(['pod/a-long-name', 'pod/b']);
  const out =
    f.format(ev('Started', 'b', 'Started container app'), Date.parse(t) + 65_000) +
    f.format(ev('Killing', 'a-long-name', 'Stopping\ncontainer app\n'), Date.parse(t) + 5000);
  const lines = out.split('\n');
  const col = lines[0]!.indexOf('MESSAGE');
  assert.equal(lines[1]!.indexOf('Started container app'), col);
  assert.equal(lines[2]!.indexOf('Stopping\\ncontainer app'), col);
  assert.match(lines[1]!, /^65s /);
  assert.equal(lines.length, 4);
});
