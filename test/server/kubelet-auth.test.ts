// The kubelet port's request attributes, its authentication order and the kubelet streaming paths'
// translation into the API's, without a network: the real-server behaviour is in test/cluster.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { checkKubeletRequest, kubeletRequestAttributes } from '../../src/server/kubelet-auth.js';
import { SubjectAccessReviewAuthorizer, TokenReviewAuthenticator } from '../../src/server/auth-webhook.js';
import { translateKubeletStreamingURL } from '../../src/streaming/kubelet-paths.js';
import { FakeClock } from '../../src/util/clock.js';

// A request object as node:http gives one: method, url, headers, on a plain (unencrypted) socket.
const req = (method: string, url: string, headers: Record<string, string> = {}) =>
  ({ method, url, headers, socket: new Socket() }) as unknown as IncomingMessage;

describe('kubelet request attributes', () => {
  it('maps the method to the verb and the path to the subresource, as the kubelet', () => {
    const a = (m: string, p: string) => {
      const r = kubeletRequestAttributes(m, p, 'n1');
      return `${r.verb} ${r.resource}/${r.subresource} ${r.name}`;
    };
    assert.equal(a('GET', '/pods'), 'get nodes/proxy n1');
    assert.equal(a('POST', '/exec/default/web/app'), 'create nodes/proxy n1');
    assert.equal(a('GET', '/containerLogs/default/web/app'), 'get nodes/proxy n1');
    assert.equal(a('GET', '/stats/summary'), 'get nodes/stats n1');
    assert.equal(a('GET', '/metrics/resource'), 'get nodes/metrics n1');
    assert.equal(a('GET', '/logs/syslog'), 'get nodes/log n1');
    assert.equal(a('GET', '/spec/'), 'get nodes/spec n1');
    assert.equal(a('GET', '/statsx'), 'get nodes/proxy n1');
    assert.equal(a('PUT', '/debug/flags/v'), 'update nodes/proxy n1');
  });
});

describe('kubelet port authentication and authorisation', () => {
  const clock = new FakeClock();
  it('401 without credentials unless anonymous, 401 for an unknown token, 403 with the kubelet words', async () => {
    const reviews: unknown[] = [];
    const post = async (path: string, body: any) => {
      reviews.push(path);
      if (path.endsWith('/tokenreviews')) {
        return body.spec.token === 'good'
          ? { status: { authenticated: true, user: { username: 'alice', groups: ['dev'] } } }
          : { status: { authenticated: false } };
      }
      return { status: { allowed: body.spec.resourceAttributes.subresource === 'stats' } };
    };
    const tokens = new TokenReviewAuthenticator(post, clock);
    const sar = new SubjectAccessReviewAuthorizer(post, clock);
    const o = { nodeName: 'n1', x509: true, anonymous: false, authenticateToken: (t: string) => tokens.authenticate(t), authorize: sar.authorize.bind(sar) };
    assert.deepEqual(await checkKubeletRequest(req('GET', '/pods'), o), { ok: false, code: 401, message: 'Unauthorized' });
    assert.deepEqual(await checkKubeletRequest(req('GET', '/pods', { authorization: 'Bearer bad' }), o), { ok: false, code: 401, message: 'Unauthorized' });
    assert.deepEqual(await checkKubeletRequest(req('GET', '/pods', { authorization: 'Bearer good' }), o), {
      ok: false,
      code: 403,
      message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)',
    });
    const ok = await checkKubeletRequest(req('GET', '/stats/summary', { authorization: 'Bearer good' }), o);
    assert.equal(ok.ok, true);
    // The token's review and the allowed decision are cached.
    const n = reviews.length;
    await checkKubeletRequest(req('GET', '/stats/summary', { authorization: 'Bearer good' }), o);
    assert.equal(reviews.length, n);
    // Until they expire: the token's after 2 minutes, the allowed decision after 5.
    await clock.advance(120_001);
    await checkKubeletRequest(req('GET', '/stats/summary', { authorization: 'Bearer good' }), o);
    assert.deepEqual(reviews.slice(n), ['/apis/authentication.k8s.io/v1/tokenreviews']);
    await clock.advance(180_000);
    await checkKubeletRequest(req('GET', '/stats/summary', { authorization: 'Bearer good' }), o);
    assert.deepEqual(reviews.slice(n + 1), ['/apis/authentication.k8s.io/v1/tokenreviews', '/apis/authorization.k8s.io/v1/subjectaccessreviews']);
    const anon = await checkKubeletRequest(req('GET', '/stats/summary'), { ...o, anonymous: true });
    assert.deepEqual(anon.ok && anon.user, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('a webhook that cannot be reached: 401 for tokens, 500 for authorisation', async () => {
    const down = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    const o = {
      nodeName: 'n1',
      x509: false,
      anonymous: true,
      authenticateToken: (t: string) => new TokenReviewAuthenticator(down, clock).authenticate(t),
      authorize: (u: any, a: any) => new SubjectAccessReviewAuthorizer(down, clock).authorize(u, a),
    };
    assert.equal(((await checkKubeletRequest(req('GET', '/pods', { authorization: 'Bearer x' }), o)) as any).code, 401);
    assert.deepEqual(await checkKubeletRequest(req('GET', '/pods'), o), {
      ok: false,
      code: 500,
      message: 'Authorization error (user=system:anonymous, verb=get, resource=nodes, subresource=proxy)',
    });
  });
});

describe('kubelet streaming paths', () => {
  it('translates the API server parameter names into the API paths', () => {
    const t = translateKubeletStreamingURL('/exec/default/web/app?command=sh&command=-c&command=echo%20hi&input=1&output=1&error=1&tty=1')!;
    assert.equal(t.url, '/api/v1/namespaces/default/pods/web/exec?container=app&command=sh&command=-c&command=echo+hi&stdin=1&stdout=1&stderr=1&tty=1');
    const u = translateKubeletStreamingURL('/attach/ns1/web/1234-uid/app?output=1')!;
    assert.equal(u.url, '/api/v1/namespaces/ns1/pods/web/attach?container=app&stdout=1');
    assert.equal(u.uid, '1234-uid');
    assert.equal(translateKubeletStreamingURL('/portForward/default/web?port=8080')!.url, '/api/v1/namespaces/default/pods/web/portforward?ports=8080');
    assert.equal(translateKubeletStreamingURL('/portForward/default/web')!.url, '/api/v1/namespaces/default/pods/web/portforward');
    assert.equal(translateKubeletStreamingURL('/pods'), undefined);
  });
});
