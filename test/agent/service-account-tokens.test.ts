// The kubelet's object lookup with the pods' tokens added keeps every answer of the store's own
// lookup (claims, volumes, RuntimeClasses), so adding a token source takes nothing away.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { agentTokens } from '../../src/agent/service-account-tokens.js';
import { FakeClock } from '../../src/util/clock.js';

test('the lookup with tokens answers every question the store answers', () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const objects = new ObjectStore();
  const { lookup } = agentTokens({ key, clock: new FakeClock(0), objects, base: objects, pod: () => undefined });
  for (const method of ['configMap', 'secret', 'services', 'persistentVolumeClaim', 'persistentVolume', 'runtimeClass'] as const) {
    assert.equal(typeof objects[method], 'function', `the store answers ${method}`);
    assert.equal(typeof lookup[method], 'function', `the lookup with tokens answers ${method}`);
  }
  assert.equal(typeof lookup.serviceAccountToken, 'function');
});
