// Termination messages through `run` and the runtime service: the file named in
// PODVISOR_TERMINATION_MESSAGE_PATH and the log-tail fallback reach the pod status and the summary.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixture, runCli, tempDir } from '../fixtures/cli/cli-process.js';

interface Pod {
  status: { containerStatuses: { name: string; state: { terminated?: { exitCode: number; message?: string } } }[] };
}

test('run: each failed container reports its termination message, from its file or its log', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('termination-message.yaml'), '--root-dir', join(tmp.path, 'root'), '-o', 'json']);
    assert.equal(r.code, 1, r.stderr);
    const pod = (JSON.parse(r.stdout) as { items: Pod[] }).items[0]!;
    const term = (name: string) => pod.status.containerStatuses.find((c) => c.name === name)!.state.terminated!;
    assert.deepEqual(term('file'), { ...term('file'), exitCode: 3, message: 'schema v3 not supported\n' });
    assert.deepEqual(term('logs'), { ...term('logs'), exitCode: 4, message: 'connecting\nfatal: no route\n' });
    assert.match(r.stderr, /container file: exit code 3 \(Error\)\n {4}message: schema v3 not supported\n/);
  } finally {
    await tmp.remove();
  }
});
