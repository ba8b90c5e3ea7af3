// ConfigMaps and Secrets on a real `podvisor agent`, over its socket: create (201, then 409
// AlreadyExists), strict decoding (400) and validation (422 with causes), get, list (all namespaces
// and one), watch, replace (409 on a stale resourceVersion), delete, stringData folded into data, and
// both kept across an agent restart.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from '../agent/helpers.js';

async function startAgent(root: string): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root]);
  await p.waitFor('stderr', /podvisor agent started/);
  return p;
}

async function stop(p: CliProcess): Promise<void> {
  if (p.child.exitCode === null) p.child.kill('SIGTERM');
  await p.exited;
}

test('configmaps and secrets: create, get, list, replace, delete; kept across a restart', async () => {
  const dir = await tempDir();
  const root = join(dir.path, 'root');
  let agent = await startAgent(root);
  const sock = join(root, 'podvisor.sock');
  try {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { A: '1' } };
    let r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps', cm);
    assert.equal(r.status, 201, r.body);
    const created = r.json();
    assert.equal(created.metadata.namespace, 'default');
    assert.ok(created.metadata.uid && created.metadata.resourceVersion && created.metadata.creationTimestamp);

    r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps', cm);
    assert.equal(r.status, 409);
    assert.equal(r.json().reason, 'AlreadyExists');
    assert.equal(r.json().message, 'configmaps "cfg" already exists');

    r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { ...cm, metadata: { name: 'x' }, dataa: {} });
    assert.equal(r.status, 400);
    assert.match(r.json().message, /strict decoding error: .*dataa/);
    // Without fieldValidation the API server warns (its default is Warn) and drops the field (a dry run: nothing stored).
    r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { ...cm, metadata: { name: 'warned' }, dataa: {} });
    assert.equal(r.status, 201, r.body);
    assert.equal(r.json().dataa, undefined);
    assert.match(String(r.headers.warning), /unknown field \\"dataa\\"/);

    r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps', { ...cm, metadata: { name: 'Bad_Name' } });
    assert.equal(r.status, 422);
    assert.equal(r.json().reason, 'Invalid');
    assert.match(r.json().message, /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value/);
    assert.equal(r.json().details.causes[0].field, 'metadata.name');

    r = await call(sock, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    assert.equal(r.status, 201, r.body);
    r = await call(sock, 'POST', '/api/v1/namespaces/other/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      stringData: { P: 'pw' },
    });
    assert.equal(r.status, 201, r.body);
    assert.deepEqual(r.json().data, { P: Buffer.from('pw').toString('base64') });
    assert.equal(r.json().type, 'Opaque');

    r = await call(sock, 'GET', '/api/v1/configmaps');
    assert.equal(r.json().kind, 'ConfigMapList');
    // Every namespace also holds the root CA publisher's kube-root-ca.crt, as on a cluster.
    assert.deepEqual(
      r
        .json()
        .items.map((i: { metadata: { name: string } }) => i.metadata.name)
        .filter((n: string) => n !== 'kube-root-ca.crt'),
      ['cfg'],
    );
    r = await call(sock, 'GET', '/api/v1/namespaces/default/secrets');
    assert.deepEqual(r.json().items, []);
    r = await call(sock, 'GET', '/api/v1/secrets');
    assert.deepEqual(
      r.json().items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace),
      ['other'],
    );

    r = await call(sock, 'PUT', '/api/v1/namespaces/default/configmaps/cfg', {
      ...cm,
      data: { A: '2' },
      metadata: { name: 'cfg', resourceVersion: created.metadata.resourceVersion },
    });
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(r.json().data, { A: '2' });
    assert.notEqual(r.json().metadata.resourceVersion, created.metadata.resourceVersion);
    assert.equal(r.json().metadata.uid, created.metadata.uid);
    r = await call(sock, 'PUT', '/api/v1/namespaces/default/configmaps/cfg', {
      ...cm,
      data: { A: '3' },
      metadata: { name: 'cfg', resourceVersion: created.metadata.resourceVersion },
    });
    assert.equal(r.status, 409);
    assert.equal(r.json().reason, 'Conflict');

    // A watch from the first version sees the replacement; from 0, the current state as ADDED.
    r = await call(sock, 'GET', `/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion=${created.metadata.resourceVersion}`);
    const events = r.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { data: Record<string, string> } });
    assert.deepEqual(
      events.map((e) => [e.type, e.object.data.A]),
      [['MODIFIED', '2']],
    );
    r = await call(sock, 'GET', '/api/v1/configmaps?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dcfg');
    assert.deepEqual(
      r.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
      ['ADDED'],
    );

    await stop(agent);
    agent = await startAgent(root);
    r = await call(sock, 'GET', '/api/v1/namespaces/default/configmaps/cfg');
    assert.equal(r.status, 200, 'kept across the restart');
    assert.deepEqual(r.json().data, { A: '2' });
    r = await call(sock, 'GET', '/api/v1/namespaces/other/secrets/creds');
    assert.equal(r.status, 200);

    r = await call(sock, 'DELETE', '/api/v1/namespaces/default/configmaps/cfg');
    assert.equal(r.status, 200);
    assert.equal(r.json().status, 'Success');
    assert.equal(r.json().details.uid, created.metadata.uid);
    r = await call(sock, 'GET', '/api/v1/namespaces/default/configmaps/cfg');
    assert.equal(r.status, 404);
    assert.equal(r.json().message, 'configmaps "cfg" not found');
    r = await call(sock, 'DELETE', '/api/v1/namespaces/default/configmaps/cfg');
    assert.equal(r.status, 404);
  } finally {
    await stop(agent);
    await dir.remove();
  }
});
