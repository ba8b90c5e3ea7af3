// The server's one Status module: what any thrown value becomes on the wire, the 422 built from field
// errors, and the route table's answers (405 for another method, 404 for no route, a thrown error's
// Status, false from handle() when nothing took the request).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Router } from '../../src/http/router.js';
import { ApiError, conflict, invalid, notFound, rawStatusResponse, statusOf } from '../../src/http/status.js';

describe('Status', () => {
  test('an ApiError keeps its code, reason and details; a foreign error with a code and reason too; anything else is 500', () => {
    assert.deepEqual(statusOf(notFound('pods', 'web')), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "web" not found',
      reason: 'NotFound',
      details: { name: 'web', kind: 'pods' },
      code: 404,
    });
    assert.equal(statusOf(notFound('pods', 'web', 'metrics.k8s.io')).message, 'pods.metrics.k8s.io "web" not found');
    assert.equal(statusOf({ code: 410, reason: 'Expired', message: 'too old' }).code, 410);
    const internal = statusOf(new Error('boom'));
    assert.equal(internal.code, 500);
    assert.equal(internal.reason, 'InternalError');
    assert.equal(internal.message, 'Internal error occurred: boom');
    assert.equal(statusOf({ code: 'ENOENT', reason: 'x' }).code, 500);
    assert.equal(
      conflict('secrets', 's', 'the object has been modified').message,
      'Operation cannot be fulfilled on secrets "s": the object has been modified',
    );
  });

  test('Invalid lists one error bare and several in brackets, sorted, one cause each', () => {
    const one = invalid('Pod', 'p', [{ type: 'Required', field: 'spec.containers', detail: '' }]);
    assert.equal(one.code, 422);
    assert.equal(one.message, 'Pod "p" is invalid: spec.containers: Required value');
    assert.deepEqual(one.details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }]);
    const two = invalid('ConfigMap', 'c', [
      { type: 'Invalid', field: 'metadata.name', value: 'C', detail: 'bad' },
      { type: 'Forbidden', field: 'data', detail: 'field is immutable' },
    ]);
    assert.match(two.message, /^ConfigMap "c" is invalid: \[.*, .*\]$/);
    assert.equal(two.details?.causes?.length, 2);
  });

  test('a refused upgrade gets the Status as a raw HTTP response', () => {
    const raw = rawStatusResponse(statusOf(new ApiError(400, 'BadRequest', 'no')));
    assert.match(raw, /^HTTP\/1\.1 400 BadRequest\r\nContent-Type: application\/json\r\nContent-Length: \d+\r\nConnection: close\r\n\r\n\{/);
  });
});

describe('route table', () => {
  let server: Server;
  let url: string;
  const outer = new Router();
  const inner = new Router();

  before(async () => {
    inner.route('GET', '/things/:name', (_req, res, p) => {
      if (p.name === 'bad') throw notFound('things', 'bad');
      res.end(`thing ${p.name}`);
    });
    outer.use(async (req, res) => inner.handle(req, res));
    outer.route(['GET', 'POST'], '/other', (_req, res) => void res.end('other'));
    server = createServer((req, res) => void outer.dispatch(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('routes, 405, 404 and thrown errors as Status', async () => {
    assert.equal(await (await fetch(`${url}/things/a%20b`)).text(), 'thing a b');
    assert.equal(await (await fetch(`${url}/other`, { method: 'POST' })).text(), 'other');
    const wrongMethod = await fetch(`${url}/things/a`, { method: 'DELETE' });
    assert.equal(wrongMethod.status, 405);
    assert.equal(((await wrongMethod.json()) as { reason: string }).reason, 'MethodNotAllowed');
    const thrown = await fetch(`${url}/things/bad`);
    assert.equal(thrown.status, 404);
    assert.equal(((await thrown.json()) as { message: string }).message, 'things "bad" not found');
    const none = await fetch(`${url}/things`);
    assert.equal(none.status, 404);
    assert.equal(((await none.json()) as { kind: string }).kind, 'Status');
  });
});
