// Applying to an agent that writes the same objects meanwhile, through the built CLI and a real
// agent: after a kill -9 of the agent and its restart (its controllers settle the Deployment again),
// applies of the same Deployment at once all go through, each conflicting patch read again and sent
// again at the latest resourceVersion, as kubectl apply does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';
import { lockOwner } from '../../src/runtime/root-lock.js';

function deployment(note: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', annotations: { note } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { terminationGracePeriodSeconds: 1, containers: [shell('web', 'exec sleep 300')] },
      },
    },
  };
}

test('up -d after a kill -9 and restart of the agent: concurrent applies of one Deployment all go through, retried on conflict', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const files = ['a', 'b', 'c', 'd'].map((note) => {
    const f = join(tmp.path, `web-${note}.yaml`);
    writeFileSync(f, manifestYaml(deployment(note)));
    return f;
  });
  try {
    const first = await runCli(['up', '-d', '-f', files[0]!, '--root-dir', root]);
    assert.equal(first.code, 0, first.stderr);
    const agent = lockOwner(root);
    assert.equal(agent?.command, 'agent');
    process.kill(agent!.pid, 'SIGKILL');
    await waitFor('the killed agent lets go of the root dir', () => lockOwner(root) === undefined);

    // The first of them starts the agent again; each changes the Deployment, so the others' reads go stale.
    const ups = await Promise.all(files.map((f) => runCli(['up', '-d', '-f', f, '--root-dir', root])));
    for (const r of ups) {
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /Conflict/);
      assert.match(r.stdout, /^deployment\.apps\/web (configured|unchanged)$/m);
    }
    const got = await runCli(['get', 'deploy', 'web', '-o', 'jsonpath={.metadata.annotations.note}', '--root-dir', root]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^[abcd]$/);
  } finally {
    await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
