// authorization.k8s.io/v1's reviews over HTTP: created (201) and answered, never stored (no list);
// discovery lists them create-only; invalid specs refused with kube-apiserver's words (the message's
// kind-less `.authorization.k8s.io ""`, Go's printing of the values), as 1.20's apiserver answered.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startApiServer, type ApiServer } from './harness.js';
import { MemoryBackend } from './memory-backend.js';

let api: ApiServer;
before(async () => {
  api = await startApiServer(new MemoryBackend());
});
after(async () => {
  await api.close();
});

async function post(path: string, body: unknown): Promise<{ code: number; body: Record<string, unknown> }> {
  const res = await fetch(`${api.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
}

const group = '/apis/authorization.k8s.io/v1';

test('discovery: the four reviews, create only', async () => {
  const list = (await (await fetch(`${api.url}${group}`)).json()) as { resources: Array<{ name: string; verbs: string[]; namespaced: boolean }> };
  assert.deepEqual(
    list.resources.map((r) => [r.name, r.namespaced, r.verbs.join(',')]),
    [
      ['localsubjectaccessreviews', true, 'create'],
      ['selfsubjectaccessreviews', false, 'create'],
      ['selfsubjectrulesreviews', false, 'create'],
      ['subjectaccessreviews', false, 'create'],
    ],
  );
  assert.equal((await fetch(`${api.url}${group}/subjectaccessreviews`)).status, 405);
});

test('a SubjectAccessReview of a system:masters user is allowed; of another user with no binding, not', async () => {
  const allowed = await post(`${group}/subjectaccessreviews`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { resourceAttributes: { verb: 'delete', resource: 'nodes' }, user: 'root', groups: ['system:masters'] },
  });
  assert.equal(allowed.code, 201);
  assert.deepEqual(allowed.body.status, { allowed: true });
  const denied = await post(`${group}/subjectaccessreviews`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { nonResourceAttributes: { verb: 'get', path: '/api' }, user: 'bob' },
  });
  assert.deepEqual(denied.body.status, { allowed: false });
  assert.equal(denied.body.kind, 'SubjectAccessReview');
});

test('invalid reviews in kube-apiserver words', async () => {
  const empty = await post(`${group}/subjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: {} });
  assert.equal(empty.code, 422);
  assert.equal(
    empty.body.message,
    '.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
  );
  assert.equal((empty.body.details as { group: string }).group, 'authorization.k8s.io');
  const both = await post(`${group}/selfsubjectaccessreviews`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { verb: 'get', resource: 'pods' }, nonResourceAttributes: { path: '/x', verb: 'get' } },
  });
  assert.equal(
    both.body.message,
    '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes',
  );
  const local = await post(`${group}/namespaces/ns1/localsubjectaccessreviews`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'LocalSubjectAccessReview',
    spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' }, user: 'bob' },
  });
  assert.equal(
    local.body.message,
    '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
  );
});
