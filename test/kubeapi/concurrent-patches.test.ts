// Patches sent at the same moment to one object on a real `podvisor agent` all stick: each is applied
// to the object as the one before it stored it (the apiserver's patcher retries a patch that names no
// resourceVersion on a conflict), for pods (the pod registry) and for ConfigMaps (the object store).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { call, shellPod } from '../agent/helpers.js';

const patches = 16;

test('concurrent merge patches of one pod and one ConfigMap all stick', async () => {
  const dir = await tempDir();
  const root = join(dir.path, 'root');
  const agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
  const sock = join(root, 'podvisor.sock');
  try {
    let r = await call(sock, 'POST', '/api/v1/namespaces/default/pods', shellPod('target', 'exec sleep 600'));
    assert.equal(r.status, 201, r.body);
    r = await call(sock, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' } });
    assert.equal(r.status, 201, r.body);

    for (const resource of ['configmaps', 'pods']) {
      const path = `/api/v1/namespaces/default/${resource}/target`;
      const replies = await Promise.all(
        Array.from({ length: patches }, (_, i) =>
          call(sock, 'PATCH', path, { metadata: { labels: { [`l${i}`]: 'x' } } }, { 'Content-Type': 'application/merge-patch+json' }),
        ),
      );
      assert.deepEqual(
        replies.map((x) => x.status),
        replies.map(() => 200),
        `every patch of ${resource} answered 200: ${replies.map((x) => x.body).join('\n')}`,
      );
      const labels = (await call(sock, 'GET', path)).json().metadata.labels as Record<string, string>;
      assert.deepEqual(
        Object.keys(labels)
          .filter((k) => k.startsWith('l'))
          .sort(),
        Array.from({ length: patches }, (_, i) => `l${i}`).sort(),
        `every label patched into ${resource} is kept`,
      );
    }
  } finally {
    await call(sock, 'DELETE', '/api/v1/namespaces/default/pods/target?gracePeriodSeconds=0').catch(() => undefined);
    agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  }
});
