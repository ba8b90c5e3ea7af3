// The TCP listener's authentication: the agent's token is the local administrator; a token the
// injected authenticator accepts (a bound service-account token) is its user; any other bearer token
// is 401 on every path, /healthz included; no token is anonymous only where that is allowed.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import type { RequestInfo, UserInfo } from '../../src/http/router.js';
import { authorize, type AccessPolicy } from '../../src/server/access.js';

const req = (url: string, headers: Record<string, string> = {}) => ({ method: 'GET', url, headers, socket: new Socket() }) as unknown as IncomingMessage;
const sa: UserInfo = {
  username: 'system:serviceaccount:ns:web',
  uid: 'u',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'],
};
const policy: AccessPolicy = { kind: 'tcp', token: 'admin-secret', anonymous: false, authenticate: (t) => (t === 'sa.jwt.token' ? sa : undefined) };
const user = (r: ReturnType<typeof authorize>) => ('code' in r ? r.code : (r as RequestInfo).user.username);

test('the agent token, a service-account token, another token, and none', () => {
  assert.equal(user(authorize(req('/api/v1/pods', { authorization: 'Bearer admin-secret' }), policy)), 'system:admin');
  const r = authorize(req('/api/v1/pods', { authorization: 'Bearer sa.jwt.token' }), policy) as RequestInfo;
  assert.deepEqual(r, { listener: 'tcp', user: sa });
  assert.equal(user(authorize(req('/api/v1/pods', { authorization: 'Bearer other' }), policy)), 401);
  assert.equal(user(authorize(req('/healthz', { authorization: 'Bearer other' }), policy)), 401);
  assert.equal(user(authorize(req('/healthz'), policy)), 'system:anonymous');
  assert.equal(user(authorize(req('/api/v1/pods'), policy)), 401);
  // Without an authenticator only the agent's token is known.
  assert.equal(user(authorize(req('/api/v1/pods', { authorization: 'Bearer sa.jwt.token' }), { kind: 'tcp', token: 'admin-secret', anonymous: false })), 401);
  assert.equal(user(authorize(req('/api/v1/pods'), { kind: 'unix' })), 'system:admin');
});
