// Request bodies on the API: a 100,000-deep JSON body is a 400 naming the nesting limit (not a 500
// from a parser's stack), and a body sent as `Content-Type: application/yaml` is read as YAML, as
// kube-apiserver reads it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryBackend } from '../kubeapi/memory-backend.js';
import { startApiServer, type ApiServer } from '../kubeapi/harness.js';

describe('API request bodies', () => {
  let api: ApiServer;
  before(async () => {
    api = await startApiServer(new MemoryBackend());
  });
  after(async () => {
    await api.close();
  });

  const post = (body: string, contentType: string) =>
    fetch(`${api.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'Content-Type': contentType }, body });

  test('a 100,000-deep JSON body: 400 naming the limit', async () => {
    const deep = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    for (const type of ['application/json', 'application/yaml']) {
      const r = await post(deep, type);
      const status = (await r.json()) as { code: number; reason: string; message: string };
      assert.equal(r.status, 400, `${type}: ${JSON.stringify(status)}`);
      assert.match(status.message, /deeper than 100 levels/);
    }
  });

  test('Content-Type: application/yaml is read as YAML', async () => {
    const yaml = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: from-yaml\nspec:\n  containers:\n  - name: app\n    image: nginx\n';
    const r = await post(yaml, 'application/yaml');
    assert.equal(r.status, 201, await r.clone().text());
    const pod = (await r.json()) as { metadata: { name: string }; spec: { containers: Array<{ image: string }> } };
    assert.equal(pod.metadata.name, 'from-yaml');
    assert.equal(pod.spec.containers[0]!.image, 'nginx');
    const bad = await post('metadata: [unclosed', 'application/yaml');
    assert.equal(bad.status, 400);
  });
});
