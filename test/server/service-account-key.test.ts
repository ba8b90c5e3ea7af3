// The service-account signing key under the root dir: made once (ECDSA P-256, PKCS#8, 0600) and the
// same key on every later start, so tokens issued before a restart verify after it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { JwtSigner } from '../../src/kubeapi/serviceaccount/jwt.js';
import { ensureServiceAccountKey } from '../../src/server/pki.js';

test('the key is made once, 0600, and kept', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-sakey-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const first = await ensureServiceAccountKey(root);
  assert.match(first, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.equal(statSync(join(root, 'pki', 'sa.key')).mode & 0o777, 0o600);
  const token = new JwtSigner(first).sign({ sub: 'x' });
  const again = await ensureServiceAccountKey(root);
  assert.equal(again, first);
  assert.deepEqual(new JwtSigner(again).verify(token), { sub: 'x' });
  assert.equal(new JwtSigner(again).algorithm, 'ES256');
});
