// The probe timeline printer: the table's columns, where each probe stands in words (below its
// threshold, at it, recovered), the sparkline, and describe's Last line beside a probe's spec.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describePod } from '../../src/printers/describe-pod.js';
import {
  formatProbeStandings,
  formatProbeTable,
  formatSparklines,
  lastResultText,
  probeStanding,
  type ProbeHistoryItem,
} from '../../src/printers/probe-timeline.js';

const t0 = Date.parse('2026-01-02T03:04:05.000Z');
const at = (s: number) => new Date(t0 + s * 1000).toISOString();
const item = (s: number, probe: string, result: string, streak: number, threshold: number, effect = '', output = ''): ProbeHistoryItem => ({
  container: 'web',
  probe,
  time: at(s),
  result,
  latencyMs: 2,
  output,
  streak,
  threshold,
  effect,
});

const readiness = [
  item(0, 'readiness', 'Success', 1, 1, 'Ready', 'ok'),
  item(1, 'readiness', 'Success', 2, 1),
  item(2, 'readiness', 'Failure', 1, 3, '', 'HTTP probe failed with statuscode: 503'),
  item(3, 'readiness', 'Failure', 2, 3, '', 'HTTP probe failed with statuscode: 503'),
];

test('a readiness probe failing below its threshold is still Ready, NotReady at the next failure', () => {
  assert.equal(probeStanding(readiness, t0 + 6000), 'web readiness failing 2/3 since 4s: still Ready, NotReady at the next failure');
  const notReady = [...readiness, item(4, 'readiness', 'Failure', 3, 3, 'NotReady', 'x')];
  assert.equal(probeStanding(notReady, t0 + 6000), 'web readiness failing 3/3 since 4s: NotReady');
  const recovered = [...notReady, item(5, 'readiness', 'Success', 1, 1, 'Ready')];
  assert.equal(probeStanding(recovered, t0 + 8000), 'web readiness passing 1/1 since 3s: Ready');
});

test('liveness and startup standings', () => {
  assert.equal(probeStanding([item(0, 'liveness', 'Failure', 1, 3)], t0 + 1000), 'web liveness failing 1/3 since 1s: restart after 2 more failures');
  assert.equal(probeStanding([item(0, 'liveness', 'Failure', 3, 3, 'Restart')], t0 + 1000), 'web liveness failing 3/3 since 1s: container restarted');
  assert.equal(probeStanding([item(0, 'startup', 'Success', 1, 1, 'Started')], t0), 'web startup passing 1/1 since 0s: Started');
  assert.equal(probeStanding([item(0, 'startup', 'Failure', 29, 30)], t0), 'web startup failing 29/30 since 0s: not started, restart at the next failure');
});

test('the table, the sparkline and the standings', () => {
  const table = formatProbeTable(readiness);
  assert.equal(table.split('\n')[0], 'TIME           CONTAINER   PROBE       RESULT    LATENCY   STREAK   EFFECT   OUTPUT');
  assert.match(table, /03:04:07\.000 +web +readiness +Failure +2ms +1\/3 +- +HTTP probe failed with statuscode: 503\n/);
  assert.match(table, /03:04:05\.000 +web +readiness +Success +2ms +1\/1 +Ready +ok\n/);
  assert.match(formatSparklines(readiness), /^web +readiness +▁▁██ +Failure 2\/3\n$/);
  assert.equal(formatProbeStandings(readiness, t0 + 6000), 'web readiness failing 2/3 since 4s: still Ready, NotReady at the next failure\n');
});

test("describe's Last line: a recovered probe reads as recovered", () => {
  assert.equal(lastResultText(readiness, 'web', 'readiness', t0 + 6000), 'Failure 3s ago (streak 2)');
  assert.equal(lastResultText(readiness, 'web', 'liveness', t0), undefined);
  const pod = {
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'web', image: 'img', readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 1 } }] },
  };
  const recovered = [...readiness, item(4, 'readiness', 'Success', 1, 1, 'Ready'), item(5, 'readiness', 'Success', 2, 1)];
  const text = describePod(pod, [], t0 + 8000, recovered);
  assert.match(text, /\n    Readiness: +http-get http:\/\/:80\/ .*\n    Last readiness: +Success 3s ago \(streak 2\)\n/);
  assert.doesNotMatch(describePod(pod, [], t0), /Last readiness/);
});
