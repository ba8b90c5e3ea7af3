// `run --logs` of a bare pod whose container prints and exits at once, through the real executable,
// on both runtimes: every line is printed, prefixed, before the final table — on containerd 1.6,
// which streams no container events, the containers are found by relisting; on the process runtime
// a container that stopped before its log was followed is still read to its end.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';
import { containerdSuite, type ContainerdEnv } from '../containerd/harness.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

const quickPod = (image: string) => `apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: ${image}
    command: ["sh", "-c", "echo first line; echo second line"]
`;

async function runLogs(manifest: string, ...flags: string[]) {
  const tmp = await tempDir();
  try {
    const file = join(tmp.path, 'pod.yaml');
    writeFileSync(file, manifest);
    return await runCli(['run', '--logs', '-f', file, '--root-dir', join(tmp.path, 'root'), ...flags], 180_000);
  } finally {
    await tmp.remove();
  }
}

function assertLinesBeforeTable(stdout: string): void {
  const lines = stdout.split('\n');
  const table = lines.findIndex((l) => l.startsWith('NAME '));
  assert.ok(table > 0, stdout);
  assert.deepEqual(
    lines.slice(0, table).filter((l) => l.startsWith('hello/main | ')),
    ['hello/main | first line', 'hello/main | second line'],
    stdout,
  );
}

test('run --logs on the process runtime: a container that exits at once has its lines printed before the table, three runs in a row', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await runLogs(quickPod('busybox'));
    assert.equal(r.code, 0, r.stderr);
    assertLinesBeforeTable(r.stdout);
  }
});

test('run --logs --runtime=containerd of a bare pod: its container output, prefixed, before the table', { skip }, async () => {
  for (let i = 0; i < 2; i++) {
    const r = await runLogs(quickPod(env.images.busybox!), '--runtime=containerd', `--container-runtime-endpoint=${env.endpoint}`);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assertLinesBeforeTable(r.stdout);
  }
});
