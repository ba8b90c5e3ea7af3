// The kubelet's token manager on an injected clock: a pod's token is cached, requested again once 80%
// of its lifetime has passed (the jitter at 0 here), and kept apart per pod and audience.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { TokenManager } from '../../src/kubelet/token-manager.js';
import { FakeClock } from '../../src/util/clock.js';

const pod = (uid: string): Pod => ({ metadata: { name: uid, namespace: 'ns', uid }, spec: { containers: [], serviceAccountName: 'default' } });

test('tokens are cached until 80% of their lifetime, then requested again', async () => {
  const clock = new FakeClock();
  let n = 0;
  const m = new TokenManager(
    clock,
    (_p, s) => ({ token: `t${++n}`, expiresAt: clock.now() + s.expirationSeconds * 1000 }),
    () => 0,
  );
  assert.equal(m.token(pod('a'), { expirationSeconds: 1000 }), 't1');
  await clock.advance(800_000);
  assert.equal(m.token(pod('a'), { expirationSeconds: 1000 }), 't1');
  await clock.advance(1);
  assert.equal(m.token(pod('a'), { expirationSeconds: 1000 }), 't2');
  assert.equal(m.token(pod('b'), { expirationSeconds: 1000 }), 't3');
  assert.equal(m.token(pod('a'), { expirationSeconds: 1000, audience: 'vault' }), 't4');
  m.forgetPod('a');
  assert.equal(m.token(pod('a'), { expirationSeconds: 1000 }), 't5');
  // The default lifetime is an hour.
  assert.equal(m.token(pod('c'), {}), 't6');
  await clock.advance(2880_001);
  assert.equal(m.token(pod('c'), {}), 't7');
});
