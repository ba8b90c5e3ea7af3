// `run -o json` carries each failed container's log tail: in its pod's annotations, under
// `podvisor.io/log-tail.<container>`, the last lines of its log; pods that made it carry none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixture, runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';

test('run -o json: the failed container log tail in its pod annotations', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('job-fails.yaml'), '-o', 'json', '--root-dir', join(tmp.path, 'root')]);
    assert.equal(r.code, 1, r.stderr);
    const list = JSON.parse(r.stdout) as { kind: string; items: { metadata: { name: string; annotations?: Record<string, string> } }[] };
    assert.equal(list.kind, 'List');
    const pod = list.items.find((p) => p.metadata.name === 'job');
    assert.equal(pod?.metadata.annotations?.['podvisor.io/log-tail.work'], 'working\nfailed hard');
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
