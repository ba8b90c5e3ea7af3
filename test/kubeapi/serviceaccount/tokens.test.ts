// Bound service-account tokens on an injected clock: what a token carries (upstream's claims), that
// only the agent's key signs one (ES256 and RS256, a changed byte or another key is refused), expiry
// with go-jose's minute of leeway, and the account and pod a token names: deleted, or recreated with
// another uid, the token no longer authenticates.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import type { Pod } from '../../../src/api/types.js';
import type { ServiceAccount } from '../../../src/api/service-account.js';
import { JwtSigner } from '../../../src/kubeapi/serviceaccount/jwt.js';
import { defaultIssuer, ServiceAccountTokens } from '../../../src/kubeapi/serviceaccount/tokens.js';
import { FakeClock } from '../../../src/util/clock.js';

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const rsaKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

function setup(key = ecKey()) {
  const clock = new FakeClock(Date.UTC(2026, 11, 1));
  const accounts = new Map<string, ServiceAccount>([['ns1/web', { metadata: { name: 'web', namespace: 'ns1', uid: 'sa-uid' } }]]);
  const pods = new Map<string, Pod>([
    ['ns1/p', { metadata: { name: 'p', namespace: 'ns1', uid: 'pod-uid' }, spec: { containers: [], serviceAccountName: 'web' } }],
  ]);
  const signer = new JwtSigner(key);
  const tokens = new ServiceAccountTokens({
    signer,
    now: () => clock.now(),
    serviceAccount: (ns, n) => accounts.get(`${ns}/${n}`),
    pod: (ns, n) => pods.get(`${ns}/${n}`),
    newId: () => 'jti-1',
  });
  return { clock, accounts, pods, signer, tokens };
}

const issue = { namespace: 'ns1', serviceAccount: { name: 'web', uid: 'sa-uid' }, audiences: [] as string[], expirationSeconds: 600 };

test('a token carries the claims upstream issues, signed ES256 with the key id of its public key', () => {
  const { tokens, signer, clock } = setup();
  const t = tokens.issue({ ...issue, pod: { name: 'p', uid: 'pod-uid' } });
  const [h, c] = t.token.split('.');
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, string>;
  assert.equal(header.alg, 'ES256');
  assert.equal(header.kid, signer.keyId);
  const now = clock.now() / 1000;
  assert.deepEqual(JSON.parse(Buffer.from(c!, 'base64url').toString()), {
    aud: [defaultIssuer],
    exp: now + 600,
    iat: now,
    iss: defaultIssuer,
    jti: 'jti-1',
    'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'web', uid: 'sa-uid' }, pod: { name: 'p', uid: 'pod-uid' } },
    nbf: now,
    sub: 'system:serviceaccount:ns1:web',
  });
  assert.equal(t.expirationTimestamp, new Date((now + 600) * 1000).toISOString().replace('.000Z', 'Z'));
  const r = tokens.authenticate(t.token);
  assert.ok('user' in r, JSON.stringify(r));
  assert.deepEqual(r.user, {
    username: 'system:serviceaccount:ns1:web',
    uid: 'sa-uid',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/pod-name': ['p'],
      'authentication.kubernetes.io/pod-uid': ['pod-uid'],
      'authentication.kubernetes.io/credential-id': ['JTI=jti-1'],
    },
  });
});

test('only the key signs: a changed payload, another key, alg none and garbage are refused; RS256 keys work too', () => {
  const { tokens } = setup();
  const t = tokens.issue(issue).token;
  const [h, c, s] = t.split('.') as [string, string, string];
  const forged = Buffer.from(c, 'base64url').toString().replace('"web"', '"adm"');
  assert.ok('error' in tokens.authenticate(`${h}.${Buffer.from(forged).toString('base64url')}.${s}`));
  const none = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
  assert.ok('error' in tokens.authenticate(`${none}.${c}.`));
  assert.ok('error' in tokens.authenticate('not-a-token'));
  const other = setup().tokens.issue(issue).token;
  assert.ok('error' in tokens.authenticate(other));

  const rsa = setup(rsaKey());
  const rt = rsa.tokens.issue(issue).token;
  assert.equal(JSON.parse(Buffer.from(rt.split('.')[0]!, 'base64url').toString()).alg, 'RS256');
  assert.ok('user' in rsa.tokens.authenticate(rt));
  assert.ok('error' in tokens.authenticate(rt));
  assert.match(rsa.signer.keyId, /^[A-Za-z0-9_-]{43}$/);
});

test('expiry: valid up to a minute past exp (the leeway), refused after', async () => {
  const { tokens, clock } = setup();
  const t = tokens.issue(issue).token;
  await clock.advance(600_000 + 60_000);
  assert.ok('user' in tokens.authenticate(t));
  await clock.advance(1000);
  assert.deepEqual(tokens.authenticate(t), { error: 'service account token has expired' });
});

test('audiences: a token for another audience is not the API’s, but a review for that audience accepts it', () => {
  const { tokens } = setup();
  const t = tokens.issue({ ...issue, audiences: ['vault'] }).token;
  const r = tokens.authenticate(t);
  assert.ok('error' in r && /audiences/.test(r.error), JSON.stringify(r));
  const v = tokens.authenticate(t, ['vault']);
  assert.ok('user' in v);
  assert.deepEqual(v.audiences, ['vault']);
});

test('the account and the bound pod: deleted or recreated with another uid, the token is refused', () => {
  const { tokens, accounts, pods } = setup();
  const t = tokens.issue({ ...issue, pod: { name: 'p', uid: 'pod-uid' } }).token;
  pods.set('ns1/p', { ...pods.get('ns1/p')!, metadata: { name: 'p', namespace: 'ns1', uid: 'other' } });
  assert.match((tokens.authenticate(t) as { error: string }).error, /pod UID \(other\) does not match claim \(pod-uid\)/);
  pods.delete('ns1/p');
  assert.deepEqual(tokens.authenticate(t), { error: 'pod ns1/p has been deleted' });
  const unbound = tokens.issue(issue).token;
  assert.ok('user' in tokens.authenticate(unbound));
  accounts.set('ns1/web', { metadata: { name: 'web', namespace: 'ns1', uid: 'new-uid' } });
  assert.match((tokens.authenticate(unbound) as { error: string }).error, /service account UID \(sa-uid\) does not match claim \(new-uid\)/);
  accounts.delete('ns1/web');
  assert.deepEqual(tokens.authenticate(unbound), { error: 'service account ns1/web has been deleted' });
});

test('a pod being deleted: its token holds for a minute after the deletion began', async () => {
  const { tokens, pods, clock } = setup();
  const t = tokens.issue({ ...issue, pod: { name: 'p', uid: 'pod-uid' } }).token;
  const p = pods.get('ns1/p')!;
  pods.set('ns1/p', { ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(clock.now()).toISOString() } });
  await clock.advance(60_000);
  assert.ok('user' in tokens.authenticate(t));
  await clock.advance(1000);
  assert.deepEqual(tokens.authenticate(t), { error: 'service account token has been invalidated' });
});
