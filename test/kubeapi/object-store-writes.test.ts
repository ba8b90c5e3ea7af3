// The object store's writes of one kind happen one at a time (etcd's compare-and-swap): a write sent
// while another is still storing reads what that one stored, so neither is lost, and a stale
// resourceVersion is a conflict.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { objectStrategies } from '../../src/kubeapi/strategies.js';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'busybox' }] } },
  },
};

for (const where of ['in memory', 'on disk'] as const) {
  test(`a status write and a spec write sent together both stick (${where})`, async (t) => {
    const dir = where === 'on disk' ? mkdtempSync(join(tmpdir(), 'podvisor-store-')) : undefined;
    if (dir) t.after(() => rmSync(dir, { recursive: true, force: true }));
    const store = new ObjectStore({ kinds: [...objectStrategies], ...(dir ? { dir } : {}) });
    const created = await store.create('Deployment', deployment);
    const { resourceVersion: _rv, ...meta } = created.metadata!;
    // Neither awaited before the other is sent, as a controller's status write and a client's scale arrive.
    const status = store.updateStatus('Deployment', { ...created, metadata: meta, status: { replicas: 1, readyReplicas: 1 } });
    const scale = store.update('Deployment', { ...created, metadata: meta, spec: { ...deployment.spec, replicas: 3 } });
    await Promise.all([status, scale]);
    const stored = store.get('Deployment', 'default', 'web') as { spec: { replicas: number }; status?: { readyReplicas?: number } };
    assert.equal(stored.spec.replicas, 3, 'the spec write is kept');
    assert.equal(stored.status?.readyReplicas, 1, 'the status write is kept');

    // A write that names the resourceVersion it read, after another write, is a conflict.
    await assert.rejects(store.update('Deployment', { ...created, spec: { ...deployment.spec, replicas: 5 } }), (err: { code?: number }) => err.code === 409);
  });
}
