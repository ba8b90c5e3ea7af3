// ControllerExpectations with an injected clock: creations and deletions outstanding until observed
// (or given up), satisfied once none remain or after 5 minutes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ControllerExpectations, ExpectationsTimeoutMs } from '../../src/controllers/expectations.js';

test('creations and deletions are outstanding until observed; a stale record expires', () => {
  let now = 0;
  const e = new ControllerExpectations(() => now);
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectCreations('ns/rs', 3);
  assert.equal(e.satisfied('ns/rs'), false);
  e.creationObserved('ns/rs');
  e.creationObserved('ns/rs', 2);
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectDeletions('ns/rs', 1);
  assert.equal(e.satisfied('ns/rs'), false);
  now += ExpectationsTimeoutMs + 1;
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectDeletions('ns/rs', 1);
  e.deletionObserved('ns/rs');
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectCreations('ns/rs', 1);
  e.delete('ns/rs');
  assert.equal(e.satisfied('ns/rs'), true);
});
