// The settle hold of the CLI's waits (no process): an object counts at once when its instances began
// a hold's length ago, not when they begin now; new instances begin the hold again; a dropped hold
// starts over; a zero hold always counts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SettleHolds } from '../../src/cli/settle-holds.js';

test('a hold counts from when the instances began, and begins again with new ones', () => {
  let due = 0;
  const holds = new SettleHolds(() => due++);
  const longAgo = Date.now() - 60_000;
  assert.equal(holds.held('a', 'c=1/0', 1000, longAgo), true, 'instances running for a minute have held 1 s');
  assert.equal(holds.held('b', 'c=2/0', 0, Infinity), true, 'no hold');
  assert.equal(holds.held('c', 'c=3/0', 60_000, Date.now()), false, 'instances that begin now have not held');
  assert.equal(holds.holding('c'), true);
  assert.equal(holds.held('c', 'c=3/0', 60_000, longAgo), false, 'the same instances keep their hold');
  assert.equal(holds.held('c', 'c=3/1', 60_000, Date.now()), false, 'a restart begins the hold again');
  holds.drop('c');
  assert.equal(holds.holding('c'), false);
  assert.equal(holds.held('c', 'c=3/1', 1000, longAgo), true, 'after a drop the hold is taken anew');
  assert.equal(due, 0, 'nothing is due within the test');
});
